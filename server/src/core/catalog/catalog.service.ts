// The catalog: what can be ordered, where, for how much, and whether it can be ordered right
// now. Clients see only active plans, open locations and offered OS templates; staff add plans,
// locations, OS templates, IPv4 ranges and nodes (catalog-edits.ts), retire plans and OS templates
// and close locations (catalog-retire.ts).

import { type Kysely, sql } from 'kysely';
import type { DB, Location, OsTemplate, Plan } from '../../db/tables.ts';
import type { Who } from '../activity/activity.ts';
import { AppError } from '../errors.ts';
import { type LocationStock, locationStock, type UnavailableReason, unavailableReason } from './availability.ts';
import {
  addLocation,
  addOs,
  addPlan,
  type CatalogServiceOptions,
  type NewLocation,
  type NewOs,
  type NewPlan,
  setOsImage,
  setPlanActive,
  updatePlan,
} from './catalog-edits.ts';
import { setLocationActive, setOsActive } from './catalog-retire.ts';

export type { NewPlan } from './catalog-edits.ts';

export interface RegionAvailability {
  location: Location;
  available: boolean;
  reason: UnavailableReason | null;
}

export interface CatalogPlan {
  plan: Plan;
  regions: RegionAvailability[];
  available: boolean;
}

export interface Catalog {
  plans: CatalogPlan[];
  locations: { location: Location; stock: LocationStock }[];
  os: OsTemplate[];
  games: { slug: string; name: string }[];
}

/** A plan by id, whatever its state (a service keeps its plan after the plan is retired). */
export function planById(db: Kysely<DB>, planId: number): Promise<Plan> {
  return db.selectFrom('plans').selectAll().where('id', '=', planId).executeTakeFirstOrThrow();
}

/** Plans (in registry order, then the staff's order) with each region's live availability. */
async function plansWithRegions(
  { db, products }: CatalogServiceOptions,
  filter: { planId?: number; includeInactive?: boolean },
): Promise<CatalogPlan[]> {
  let query = db
    .selectFrom('plans')
    .selectAll()
    // Plan types in registry order (a type missing from the list would sort last, not vanish).
    .orderBy(sql`array_position(array[${sql.join(products.all.map((p) => p.type))}]::text[], type::text)`)
    .orderBy('sort_order')
    .orderBy('price_paise')
    .orderBy('id');
  if (!filter.includeInactive) query = query.where('active', '=', true);
  if (filter.planId !== undefined) query = query.where('id', '=', filter.planId);
  const plans = await query.execute();
  if (plans.length === 0) return [];
  const links = await db
    .selectFrom('plan_locations')
    .innerJoin('locations', 'locations.id', 'plan_locations.location_id')
    .selectAll('locations')
    .select('plan_locations.plan_id')
    .where(
      'plan_locations.plan_id',
      'in',
      plans.map((p) => p.id),
    )
    .orderBy('locations.id')
    .execute();
  const stock = await locationStock(db, products);
  return plans.map((plan) => {
    const regions = links
      .filter((l) => l.plan_id === plan.id)
      .map(({ plan_id: _p, ...location }) => {
        const reason = plan.active
          ? unavailableReason(products.of(plan.type), stock.get(location.id))
          : 'plan_inactive';
        return { location, available: reason === null, reason };
      });
    return { plan, regions, available: regions.some((r) => r.available) };
  });
}

/** Everything a client needs to choose: active plans with live availability per region. */
async function catalog(options: CatalogServiceOptions): Promise<Catalog> {
  const { db, products } = options;
  const [plans, locations, stock, os, games] = await Promise.all([
    plansWithRegions(options, {}),
    db.selectFrom('locations').selectAll().where('active', '=', true).orderBy('id').execute(),
    locationStock(db, products),
    db
      .selectFrom('os_templates')
      .selectAll()
      .where('active', '=', true)
      .orderBy('family')
      .orderBy('version', 'desc')
      .execute(),
    db.selectFrom('games').select(['slug', 'name']).where('active', '=', true).orderBy('name').execute(),
  ]);
  return {
    plans,
    locations: locations.map((location) => ({ location, stock: stock.get(location.id) as LocationStock })),
    os,
    games,
  };
}

/** The reads: what clients choose from, and the staff's listings of plans, locations and OS templates. */
function catalogReads(options: CatalogServiceOptions) {
  const { db, products } = options;
  return {
    catalog: (): Promise<Catalog> => catalog(options),

    /** One active plan; 404 for unknown and retired plans alike. */
    async plan(planId: number): Promise<CatalogPlan> {
      const [found] = await plansWithRegions(options, { planId });
      if (!found) throw new AppError('not_found', { message: `No plan ${planId}.` });
      return found;
    },

    /** A plan by its numeric id or its label, active or not (ordering decides what inactive means). */
    async findPlan(ref: number | string): Promise<CatalogPlan | null> {
      const row =
        typeof ref === 'number'
          ? await db.selectFrom('plans').select('id').where('id', '=', ref).executeTakeFirst()
          : await db.selectFrom('plans').select('id').where('label', '=', ref.trim().toLowerCase()).executeTakeFirst();
      if (!row) return null;
      const [found] = await plansWithRegions(options, { planId: row.id, includeInactive: true });
      return found ?? null;
    },

    listPlans: () => plansWithRegions(options, { includeInactive: true }),
    listLocations: () => db.selectFrom('locations').selectAll().orderBy('id').execute(),
    stock: () => locationStock(db, products),

    async location(code: string): Promise<Location> {
      const location = await db.selectFrom('locations').selectAll().where('code', '=', code).executeTakeFirst();
      if (!location) throw new AppError('not_found', { message: `No location "${code}".` });
      return location;
    },

    listOs: () => db.selectFrom('os_templates').selectAll().orderBy('family').orderBy('version', 'desc').execute(),

    async os(slug: string): Promise<OsTemplate | null> {
      return (
        (await db
          .selectFrom('os_templates')
          .selectAll()
          .where('slug', '=', slug)
          .where('active', '=', true)
          .executeTakeFirst()) ?? null
      );
    },
  };
}

export function createCatalogService(options: CatalogServiceOptions) {
  return {
    ...catalogReads(options),

    // Staff edits (catalog-edits.ts).
    // A staff `who` (byOperator, byStaffMember) audits these, with the reason.
    addPlan: (input: NewPlan, who?: Who, reason?: string | null): Promise<Plan> =>
      addPlan(options, input, { who, reason }),
    setPlanActive: (ref: string, active: boolean, who?: Who, reason?: string | null): Promise<Plan> =>
      setPlanActive(options, ref, active, { who, reason }),
    updatePlan: (
      id: number,
      change: { pricePaise?: bigint; active?: boolean },
      who?: Who,
      reason?: string | null,
    ): Promise<Plan> => updatePlan(options, id, change, who, reason ?? null),
    // A staff `who` (byOperator, byStaffMember) audits these, with the reason.
    addLocation: (input: NewLocation, who?: Who, reason?: string | null): Promise<Location> =>
      addLocation(options.db, input, { who, reason }),
    addOs: (input: NewOs, who?: Who, reason?: string | null): Promise<OsTemplate> =>
      addOs(options.db, input, { who, reason }),
    setOsImage: (slug: string, imageUrl: string | null, who?: Who, reason?: string | null): Promise<OsTemplate> =>
      setOsImage(options, slug, imageUrl, { who, reason }),
    // Stop selling, or sell again (catalog-retire.ts): running services are not touched.
    setOsActive: (slug: string, active: boolean, who?: Who, reason?: string | null): Promise<OsTemplate> =>
      setOsActive(options, slug, active, { who, reason }),
    setLocationActive: (code: string, active: boolean, who?: Who, reason?: string | null): Promise<Location> =>
      setLocationActive(options, code, active, { who, reason }),
  };
}

export type CatalogService = ReturnType<typeof createCatalogService>;

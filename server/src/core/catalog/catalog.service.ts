// The catalog: what can be ordered, where, for how much, and whether it can be ordered right
// now. Clients see only active plans; staff add and retire plans, locations, OS templates,
// IPv4 ranges and nodes through the CLI.

import { type Kysely, sql } from 'kysely';
import type { DB, Location, OsTemplate, Plan, PlanType } from '../../db/tables.ts';
import type { Bus } from '../bus.ts';
import { AppError } from '../errors.ts';
import { parsePaise } from '../money.ts';
import type { ProductRegistry } from '../product-kit/registry.ts';
import { type LocationStock, locationStock, type UnavailableReason, unavailableReason } from './availability.ts';
import { specProblems } from './specs.ts';

/** An install image a BMC can mount as virtual media: an http(s) URL without credentials. */
function imageUrlProblem(url: string): string | null {
  // The column's own check (migration 0013) first, on the string as given: URL parsing would
  // accept `HTTP://…` or `https:host/x`, which the database then refuses.
  if (!/^https?:\/\/[^\s]+$/.test(url)) return 'must be an http(s) URL (http:// or https://, lower case, no spaces)';
  try {
    const parsed = new URL(url);
    if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') return 'must be an http(s) URL';
    if (parsed.username || parsed.password) return 'must not contain credentials';
    if (parsed.pathname.length < 2) return 'must name the image file';
    if (url.length > 2048 || /\s/.test(url)) return 'must be a URL of at most 2048 characters, without spaces';
    return null;
  } catch {
    return 'must be an http(s) URL';
  }
}

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

export interface NewPlan {
  label: string;
  name: string;
  type: PlanType;
  price: unknown;
  specs: unknown;
  regions: string[];
  sortOrder?: number;
}

function isUniqueViolation(error: unknown): boolean {
  return (error as { code?: string }).code === '23505';
}

/** A plan by id, whatever its state (a service keeps its plan after the plan is retired). */
export function planById(db: Kysely<DB>, planId: number): Promise<Plan> {
  return db.selectFrom('plans').selectAll().where('id', '=', planId).executeTakeFirstOrThrow();
}

export function createCatalogService({ db, bus, products }: { db: Kysely<DB>; bus: Bus; products: ProductRegistry }) {
  async function plansWithRegions(filter: { planId?: number; includeInactive?: boolean }): Promise<CatalogPlan[]> {
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

  return {
    /** Everything a client needs to choose: active plans with live availability per region. */
    async catalog(): Promise<Catalog> {
      const [plans, locations, stock, os, games] = await Promise.all([
        plansWithRegions({}),
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
    },

    /** One active plan; 404 for unknown and retired plans alike. */
    async plan(planId: number): Promise<CatalogPlan> {
      const [found] = await plansWithRegions({ planId });
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
      const [found] = await plansWithRegions({ planId: row.id, includeInactive: true });
      return found ?? null;
    },

    // Staff operations.

    listPlans: () => plansWithRegions({ includeInactive: true }),

    async addPlan(input: NewPlan): Promise<Plan> {
      const fields: Record<string, string> = {};
      if (!/^[a-z0-9][a-z0-9-]{1,47}$/.test(input.label)) fields.label = 'must be 2–48 of a–z, 0–9 and "-"';
      if (input.name.trim().length < 2) fields.name = 'is required';
      const types = products.all.map((p) => p.type);
      const product = products.all.find((p) => p.type === input.type);
      if (!product) fields.type = `must be ${types.slice(0, -1).join(', ')} or ${types.at(-1)}`;
      const price = parsePaise(input.price);
      if (!price.ok) fields.price = price.reason;
      else if (price.paise === 0n) fields.price = 'must be more than zero';
      if (product) {
        const problems = specProblems(product, input.specs);
        // What the product checks against the catalog (game: the game exists), once the shape is right.
        if (Object.keys(problems).length === 0 && product.checkSpecs)
          Object.assign(problems, await product.checkSpecs(db, input.specs));
        for (const [key, problem] of Object.entries(problems)) fields[`specs.${key}`] = problem;
      }
      const locations = await db
        .selectFrom('locations')
        .selectAll()
        .where('code', 'in', input.regions.length ? input.regions : [''])
        .execute();
      const missing = input.regions.filter((code) => !locations.some((l) => l.code === code));
      if (input.regions.length === 0) fields.regions = 'name at least one location';
      else if (missing.length > 0) fields.regions = `unknown location(s): ${missing.join(', ')}`;
      if (Object.keys(fields).length > 0) throw AppError.fields(fields);
      try {
        return await db.transaction().execute(async (trx) => {
          const plan = await trx
            .insertInto('plans')
            .values({
              label: input.label,
              name: input.name.trim(),
              type: input.type,
              price_paise: (price as { paise: bigint }).paise,
              specs: JSON.stringify(input.specs),
              sort_order: input.sortOrder ?? 0,
            })
            .returningAll()
            .executeTakeFirstOrThrow();
          await trx
            .insertInto('plan_locations')
            .values(locations.map((l) => ({ plan_id: plan.id, location_id: l.id })))
            .execute();
          await bus.publish(trx, { topic: 'catalog' });
          return plan;
        });
      } catch (error) {
        if (isUniqueViolation(error)) throw AppError.fields({ label: 'is already used' });
        throw error;
      }
    },

    /** Retire a plan: no longer listed or orderable; running services keep it. */
    async setPlanActive(ref: string, active: boolean): Promise<Plan> {
      const plan = await db
        .updateTable('plans')
        .set({ active, updated_at: new Date() })
        .where(/^\d+$/.test(ref) ? 'id' : 'label', '=', /^\d+$/.test(ref) ? Number(ref) : ref)
        .returningAll()
        .executeTakeFirst();
      if (!plan) throw new AppError('not_found', { message: `No plan "${ref}".` });
      await bus.publish(db, { topic: 'catalog' });
      return plan;
    },

    listLocations: () => db.selectFrom('locations').selectAll().orderBy('id').execute(),
    stock: () => locationStock(db, products),

    async addLocation(input: { code: string; name: string; city: string; country?: string }): Promise<Location> {
      const fields: Record<string, string> = {};
      if (!/^[a-z0-9][a-z0-9-]{1,31}$/.test(input.code)) fields.code = 'must be 2–32 of a–z, 0–9 and "-" (e.g. mum1)';
      if (input.name.trim().length < 2) fields.name = 'is required';
      if (input.city.trim().length < 2) fields.city = 'is required';
      if (input.country !== undefined && !/^[A-Z]{2}$/.test(input.country))
        fields.country = 'must be an ISO 3166 code such as IN';
      if (Object.keys(fields).length > 0) throw AppError.fields(fields);
      try {
        return await db
          .insertInto('locations')
          .values({
            code: input.code,
            name: input.name.trim(),
            city: input.city.trim(),
            country: input.country ?? 'IN',
          })
          .returningAll()
          .executeTakeFirstOrThrow();
      } catch (error) {
        if (isUniqueViolation(error)) throw AppError.fields({ code: 'is already used' });
        throw error;
      }
    },

    async location(code: string): Promise<Location> {
      const location = await db.selectFrom('locations').selectAll().where('code', '=', code).executeTakeFirst();
      if (!location) throw new AppError('not_found', { message: `No location "${code}".` });
      return location;
    },

    listOs: () => db.selectFrom('os_templates').selectAll().orderBy('family').orderBy('version', 'desc').execute(),

    async addOs(input: {
      slug: string;
      name: string;
      family: string;
      version: string;
      templateVmid: number;
      minDiskGb?: number;
      /** The install image bare-metal servers boot (virtual media); none: not for bare metal. */
      imageUrl?: string | null;
    }) {
      const fields: Record<string, string> = {};
      if (!/^[a-z0-9][a-z0-9.-]{1,47}$/.test(input.slug))
        fields.slug = 'must be 2–48 of a–z, 0–9, "." and "-" (e.g. ubuntu-24.04)';
      if (input.name.trim().length < 2) fields.name = 'is required';
      if (!/^[a-z0-9-]{2,32}$/.test(input.family)) fields.family = 'must be a lower-case family such as ubuntu';
      if (input.version.trim() === '') fields.version = 'is required';
      if (!Number.isInteger(input.templateVmid) || input.templateVmid < 100)
        fields.template_vmid = 'must be a template VM id (100 or more)';
      const imageProblem = input.imageUrl ? imageUrlProblem(input.imageUrl) : null;
      if (imageProblem) fields.image_url = imageProblem;
      if (Object.keys(fields).length > 0) throw AppError.fields(fields);
      try {
        return await db
          .insertInto('os_templates')
          .values({
            slug: input.slug,
            name: input.name.trim(),
            family: input.family,
            version: input.version.trim(),
            template_vmid: input.templateVmid,
            min_disk_gb: input.minDiskGb ?? 10,
            image_url: input.imageUrl || null,
          })
          .returningAll()
          .executeTakeFirstOrThrow();
      } catch (error) {
        if (isUniqueViolation(error)) throw AppError.fields({ slug: 'is already used' });
        throw error;
      }
    },

    /** Set (or, with null, remove) the install image bare-metal servers boot for an OS template. */
    async setOsImage(slug: string, imageUrl: string | null): Promise<OsTemplate> {
      const problem = imageUrl === null ? null : imageUrlProblem(imageUrl);
      if (problem) throw AppError.fields({ image_url: problem });
      const os = await db
        .updateTable('os_templates')
        .set({ image_url: imageUrl })
        .where('slug', '=', slug)
        .returningAll()
        .executeTakeFirst();
      if (!os) throw new AppError('not_found', { message: `No OS template "${slug}".` });
      await bus.publish(db, { topic: 'catalog' });
      return os;
    },

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

export type CatalogService = ReturnType<typeof createCatalogService>;

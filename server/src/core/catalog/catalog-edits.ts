// The catalog's staff edits (CLI): add plans, locations and OS templates, retire a plan, set an
// OS template's bare-metal install image. Each refuses bad input with every field problem at
// once, and tells the other processes (bus topic `catalog`) when what clients see changes.

import type { Kysely } from 'kysely';
import type { DB, Location, OsTemplate, Plan, PlanType } from '../../db/tables.ts';
import type { Who } from '../activity/activity.ts';
import { auditAs } from '../audit/audit.ts';
import type { Bus } from '../bus.ts';
import { AppError } from '../errors.ts';
import { formatPaise, parsePaise } from '../money.ts';
import type { ProductRegistry } from '../product-kit/registry.ts';
import { specProblems } from './specs.ts';

export interface CatalogServiceOptions {
  db: Kysely<DB>;
  bus: Bus;
  products: ProductRegistry;
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

export interface NewLocation {
  code: string;
  name: string;
  city: string;
  country?: string;
}

export interface NewOs {
  slug: string;
  name: string;
  family: string;
  version: string;
  templateVmid: number;
  minDiskGb?: number;
  /** The install image bare-metal servers boot (virtual media); none: not for bare metal. */
  imageUrl?: string | null;
}

function isUniqueViolation(error: unknown): boolean {
  return (error as { code?: string }).code === '23505';
}

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

export async function addPlan(
  { db, bus, products }: CatalogServiceOptions,
  input: NewPlan,
  audited: Audited = {},
): Promise<Plan> {
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
      await auditAs(trx, audited.who, {
        action: 'plan.add',
        targetType: 'plan',
        targetId: plan.id,
        after: {
          label: plan.label,
          name: plan.name,
          type: plan.type,
          price_paise: plan.price_paise,
          regions: locations.map((l) => l.code),
        },
        reason: audited.reason ?? null,
        at: new Date(),
      });
      await bus.publish(trx, { topic: 'catalog' });
      return plan;
    });
  } catch (error) {
    if (isUniqueViolation(error)) throw AppError.fields({ label: 'is already used' });
    throw error;
  }
}

/** Retire a plan: no longer listed or orderable; running services keep it. */
export async function setPlanActive(
  { db, bus }: CatalogServiceOptions,
  ref: string,
  active: boolean,
  audited: Audited = {},
): Promise<Plan> {
  const byId = /^\d+$/.test(ref);
  return db.transaction().execute(async (trx) => {
    const before = await trx
      .selectFrom('plans')
      .select(['id', 'active'])
      .where(byId ? 'id' : 'label', '=', byId ? Number(ref) : ref)
      .forUpdate()
      .executeTakeFirst();
    if (!before) throw new AppError('not_found', { message: `No plan "${ref}".` });
    const plan = await trx
      .updateTable('plans')
      .set({ active, updated_at: new Date() })
      .where('id', '=', before.id)
      .returningAll()
      .executeTakeFirstOrThrow();
    if (before.active !== active) {
      await auditAs(trx, audited.who, {
        action: active ? 'plan.enable' : 'plan.disable',
        targetType: 'plan',
        targetId: plan.id,
        before: { active: before.active },
        after: { active },
        reason: audited.reason ?? null,
        at: new Date(),
      });
    }
    await bus.publish(trx, { topic: 'catalog' });
    return plan;
  });
}

/** The most a plan may cost a month, so a slip of three zeros does not reach customers. */
const MAX_PLAN_PRICE_PAISE = 10_00_000_00n; // ₹10,00,000

/**
 * Change a plan's monthly price (new orders and plan changes; running services keep the price
 * they were sold at) and/or whether it is listed and sold; a staff `who` audits the fields that
 * changed, before and after.
 */
export async function updatePlan(
  { db, bus }: CatalogServiceOptions,
  id: number,
  change: { pricePaise?: bigint; active?: boolean },
  who?: Who,
  reason: string | null = null,
): Promise<Plan> {
  if (change.pricePaise !== undefined && (change.pricePaise <= 0n || change.pricePaise > MAX_PLAN_PRICE_PAISE))
    throw AppError.fields({ price_paise: 'must be more than zero and at most 100000000 (₹10,00,000)' });
  if (change.pricePaise === undefined && change.active === undefined)
    throw AppError.fields({ price_paise: 'give price_paise and/or active' });
  return db.transaction().execute(async (trx) => {
    const plan = await trx.selectFrom('plans').selectAll().where('id', '=', id).forUpdate().executeTakeFirst();
    if (!plan) throw new AppError('not_found', { message: `No plan ${id}.` });
    const before: Record<string, unknown> = {};
    const after: Record<string, unknown> = {};
    if (change.pricePaise !== undefined && BigInt(plan.price_paise) !== change.pricePaise) {
      before.price = formatPaise(plan.price_paise);
      after.price = formatPaise(change.pricePaise);
    }
    if (change.active !== undefined && plan.active !== change.active) {
      before.active = plan.active;
      after.active = change.active;
    }
    if (Object.keys(after).length === 0) return plan;
    const updated = await trx
      .updateTable('plans')
      .set({
        ...(change.pricePaise === undefined ? {} : { price_paise: change.pricePaise }),
        ...(change.active === undefined ? {} : { active: change.active }),
        updated_at: new Date(),
      })
      .where('id', '=', id)
      .returningAll()
      .executeTakeFirstOrThrow();
    await auditAs(trx, who, {
      action: 'plan.update',
      targetType: 'plan',
      targetId: id,
      before,
      after,
      reason,
      at: new Date(),
    });
    await bus.publish(trx, { topic: 'catalog' });
    return updated;
  });
}

/** A staff change's audit row (a staff `who`: byOperator, byStaffMember), in the change's transaction. */
type Audited = { who?: Who | undefined; reason?: string | null | undefined };

export async function addLocation(db: Kysely<DB>, input: NewLocation, audited: Audited = {}): Promise<Location> {
  const fields: Record<string, string> = {};
  if (!/^[a-z0-9][a-z0-9-]{1,31}$/.test(input.code)) fields.code = 'must be 2–32 of a–z, 0–9 and "-" (e.g. mum1)';
  if (input.name.trim().length < 2) fields.name = 'is required';
  if (input.city.trim().length < 2) fields.city = 'is required';
  if (input.country !== undefined && !/^[A-Z]{2}$/.test(input.country))
    fields.country = 'must be an ISO 3166 code such as IN';
  if (Object.keys(fields).length > 0) throw AppError.fields(fields);
  try {
    return await db.transaction().execute(async (trx) => {
      const location = await trx
        .insertInto('locations')
        .values({
          code: input.code,
          name: input.name.trim(),
          city: input.city.trim(),
          country: input.country ?? 'IN',
        })
        .returningAll()
        .executeTakeFirstOrThrow();
      await auditAs(trx, audited.who, {
        action: 'location.add',
        targetType: 'location',
        targetId: location.id,
        // Not `code`: the audit log refuses keys that could name a secret (a one-time code).
        after: { location: location.code, name: location.name, city: location.city, country: location.country },
        reason: audited.reason ?? null,
        at: new Date(),
      });
      return location;
    });
  } catch (error) {
    if (isUniqueViolation(error)) throw AppError.fields({ code: 'is already used' });
    throw error;
  }
}

export async function addOs(db: Kysely<DB>, input: NewOs, audited: Audited = {}): Promise<OsTemplate> {
  const fields: Record<string, string> = {};
  if (!/^[a-z0-9][a-z0-9.-]{1,47}$/.test(input.slug))
    fields.slug = 'must be 2–48 of a–z, 0–9, "." and "-" (e.g. ubuntu-24.04)';
  if (input.name.trim().length < 2) fields.name = 'is required';
  if (!/^[a-z0-9-]{2,32}$/.test(input.family)) fields.family = 'must be a lower-case family such as ubuntu';
  if (input.version.trim() === '') fields.version = 'is required';
  if (!Number.isInteger(input.templateVmid) || input.templateVmid < 100)
    fields.template_vmid = 'must be a template VM id (100 or more)';
  if (input.minDiskGb !== undefined && (!Number.isInteger(input.minDiskGb) || input.minDiskGb < 1))
    fields.min_disk_gb = 'must be a whole number of GB (1 or more)';
  const imageProblem = input.imageUrl ? imageUrlProblem(input.imageUrl) : null;
  if (imageProblem) fields.image_url = imageProblem;
  if (Object.keys(fields).length > 0) throw AppError.fields(fields);
  try {
    return await db.transaction().execute(async (trx) => {
      const os = await trx
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
      const { id: _id, created_at: _at, active: _active, ...after } = os;
      await auditAs(trx, audited.who, {
        action: 'os.add',
        targetType: 'os_template',
        targetId: os.id,
        after,
        reason: audited.reason ?? null,
        at: new Date(),
      });
      return os;
    });
  } catch (error) {
    if (isUniqueViolation(error)) throw AppError.fields({ slug: 'is already used' });
    throw error;
  }
}

/** Set (or, with null, remove) the install image bare-metal servers boot for an OS template. */
export async function setOsImage(
  { db, bus }: CatalogServiceOptions,
  slug: string,
  imageUrl: string | null,
  audited: Audited = {},
): Promise<OsTemplate> {
  const problem = imageUrl === null ? null : imageUrlProblem(imageUrl);
  if (problem) throw AppError.fields({ image_url: problem });
  return db.transaction().execute(async (trx) => {
    const before = await trx
      .selectFrom('os_templates')
      .select('image_url')
      .where('slug', '=', slug)
      .forUpdate()
      .executeTakeFirst();
    if (!before) throw new AppError('not_found', { message: `No OS template "${slug}".` });
    const os = await trx
      .updateTable('os_templates')
      .set({ image_url: imageUrl })
      .where('slug', '=', slug)
      .returningAll()
      .executeTakeFirstOrThrow();
    await auditAs(trx, audited.who, {
      action: 'os.image',
      targetType: 'os_template',
      targetId: os.id,
      before: { image_url: before.image_url },
      after: { image_url: os.image_url },
      reason: audited.reason ?? null,
      at: new Date(),
    });
    await bus.publish(trx, { topic: 'catalog' });
    return os;
  });
}

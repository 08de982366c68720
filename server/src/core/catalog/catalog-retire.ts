// Stop selling without deleting: retire an OS template (new orders and reinstalls can no longer
// pick it; the order default skips it; services installed from it keep running) or close a
// location (no new orders there; its services keep running; the catalog shows each plan's region
// there as `region_closed`), and undo either. Each change is audited in its transaction
// (os.retire / os.unretire, location.close / location.open) and tells the other processes (bus
// topic `catalog`). Setting the state a row already has changes and audits nothing.

import type { Kysely } from 'kysely';
import type { DB, Location, OsTemplate } from '../../db/tables.ts';
import type { Who } from '../activity/activity.ts';
import { auditAs } from '../audit/audit.ts';
import type { Bus } from '../bus.ts';
import { AppError } from '../errors.ts';

type Audited = { who?: Who | undefined; reason?: string | null | undefined };

/** Retire (active false) or offer again (true) an OS template; the last active one is not retired. */
export async function setOsActive(
  { db, bus }: { db: Kysely<DB>; bus: Bus },
  slug: string,
  active: boolean,
  audited: Audited = {},
): Promise<OsTemplate> {
  return db.transaction().execute(async (trx) => {
    // Every template locked, in one order: two staff retiring the last two at once cannot both pass.
    const all = await trx
      .selectFrom('os_templates')
      .select(['id', 'slug', 'active'])
      .orderBy('id')
      .forUpdate()
      .execute();
    const before = all.find((o) => o.slug === slug.trim().toLowerCase());
    if (!before) throw new AppError('not_found', { message: `No OS template "${slug}".` });
    if (before.active === active)
      return trx.selectFrom('os_templates').selectAll().where('id', '=', before.id).executeTakeFirstOrThrow();
    if (!active && all.filter((o) => o.active).length <= 1) {
      throw new AppError('conflict', {
        message: `${before.slug} is the last OS template offered: add or unretire another before retiring it.`,
      });
    }
    const os = await trx
      .updateTable('os_templates')
      .set({ active })
      .where('id', '=', before.id)
      .returningAll()
      .executeTakeFirstOrThrow();
    await auditAs(trx, audited.who, {
      action: active ? 'os.unretire' : 'os.retire',
      targetType: 'os_template',
      targetId: os.id,
      before: { slug: os.slug, active: before.active },
      after: { slug: os.slug, active },
      reason: audited.reason ?? null,
      at: new Date(),
    });
    await bus.publish(trx, { topic: 'catalog' });
    return os;
  });
}

/** Close (active false) or reopen (true) a location for new orders. */
export async function setLocationActive(
  { db, bus }: { db: Kysely<DB>; bus: Bus },
  code: string,
  active: boolean,
  audited: Audited = {},
): Promise<Location> {
  return db.transaction().execute(async (trx) => {
    const before = await trx
      .selectFrom('locations')
      .selectAll()
      .where('code', '=', code.trim().toLowerCase())
      .forUpdate()
      .executeTakeFirst();
    if (!before) throw new AppError('not_found', { message: `No location "${code}".` });
    if (before.active === active) return before;
    const location = await trx
      .updateTable('locations')
      .set({ active })
      .where('id', '=', before.id)
      .returningAll()
      .executeTakeFirstOrThrow();
    await auditAs(trx, audited.who, {
      action: active ? 'location.open' : 'location.close',
      targetType: 'location',
      targetId: location.id,
      // Not `code`: the audit log refuses keys that could name a secret (a one-time code).
      before: { location: location.code, active: before.active },
      after: { location: location.code, active },
      reason: audited.reason ?? null,
      at: new Date(),
    });
    await bus.publish(trx, { topic: 'catalog' });
    return location;
  });
}

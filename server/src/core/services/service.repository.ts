// Queries on services. Functions take the executor first (the root db or a transaction); locking
// reads take a Transaction so they cannot run outside one. What a client reaches takes the owner
// (`…Own(db, accountId, …)`), so leaving the owner out does not compile; what only staff, the
// worker or the lifecycle may do by id alone says so in its name (`…ForStaff`, `…ForJob`) or
// settles a service whose ownership was checked when its job was started (the `mark…`/`set…`).

import { type Insertable, type Kysely, sql, type Transaction } from 'kysely';
import type { DB, PlanType, Service, ServiceStatus, ServicesTable, SuspendReason } from '../../db/tables.ts';

/**
 * Which of the account's services a caller sees. `types`: only services of these plan types (a
 * surface that manages some products only, e.g. {ALT_BASE_PATH}/v1: vps and baremetal); any
 * other service answers exactly like a missing id, and is neither listed nor counted.
 */
export interface ServiceScope {
  types?: readonly PlanType[];
}

export type Executor = Kysely<DB>;

// ---- owner-scoped (client-facing) ----

export function findOwn(db: Executor, accountId: number, id: number): Promise<Service | undefined> {
  return db
    .selectFrom('services')
    .selectAll()
    .where('id', '=', id)
    .where('account_id', '=', accountId)
    .executeTakeFirst();
}

/** The owner's service, locked (FOR UPDATE) until the transaction ends. */
export function lockOwn(trx: Transaction<DB>, accountId: number, id: number): Promise<Service | undefined> {
  return trx
    .selectFrom('services')
    .selectAll()
    .where('id', '=', id)
    .where('account_id', '=', accountId)
    .forUpdate()
    .executeTakeFirst();
}

/** The account's services with their plan, region and first address, for further filtering. */
export function ownWithContext(db: Executor, accountId: number) {
  return (
    db
      .selectFrom('services as s')
      .innerJoin('plans as p', 'p.id', 's.plan_id')
      .innerJoin('locations as l', 'l.id', 's.location_id')
      .selectAll('s')
      .select(['p.label as plan_label', 'p.name as plan_name', 'l.code as location_code', 'l.name as location_name'])
      // A subquery, not a join: it probes the address index per service instead of letting
      // the planner hash the whole pool.
      .select((eb) =>
        eb
          .selectFrom('ipv4_addresses as ip')
          .select('ip.address')
          .whereRef('ip.service_id', '=', 's.id')
          .orderBy('ip.id')
          .limit(1)
          .as('ipv4'),
      )
      // Overdue: a renewal of it is unpaid (the billing cycle, CONTRACT §7).
      .select((eb) =>
        eb
          .exists(
            eb
              .selectFrom('orders as o')
              .select(sql`1`.as('one'))
              .whereRef('o.service_id', '=', 's.id')
              .where('o.status', '=', 'unpaid'),
          )
          .as('overdue'),
      )
      // Its scheduled backups (core/backups/), as one JSON row; null when never set.
      .select(
        sql<Record<string, unknown> | null>`(select to_jsonb(b) from backup_schedules b where b.service_id = s.id)`.as(
          'backup_schedule',
        ),
      )
      .where('s.account_id', '=', accountId)
  );
}

/** Whether the account already has a service of this label that still exists. */
export async function ownLabelTaken(db: Executor, accountId: number, label: string): Promise<boolean> {
  const row = await db
    .selectFrom('services')
    .select('id')
    .where('account_id', '=', accountId)
    .where('label', '=', label)
    .where('status', '<>', 'terminated')
    .executeTakeFirst();
  return row !== undefined;
}

/**
 * The monthly prices of the account's services that renew, with how many services have each (the
 * charge of a month, with GST when prices exclude it, is core/billing/charge.ts monthlyCharge).
 */
export async function ownRenewingPrices(
  db: Executor,
  accountId: number,
): Promise<{ pricePaise: string; count: number }[]> {
  const rows = await db
    .selectFrom('services')
    .select((eb) => ['price_paise', eb.fn.countAll<string>().as('n')])
    .where('account_id', '=', accountId)
    // What renews every month: running services, and suspended ones (the cycle renews them too).
    .where('status', 'in', ['active', 'suspended'])
    .groupBy('price_paise')
    .execute();
  return rows.map((r) => ({ pricePaise: r.price_paise, count: Number(r.n) }));
}

/**
 * The monthly prices of the add-ons that renew with the owner's renewing services (today the
 * scheduled backups, core/billing/addons.ts), grouped like ownRenewingPrices.
 */
export async function ownRenewingAddonPrices(
  db: Executor,
  accountId: number,
): Promise<{ pricePaise: string; count: number }[]> {
  const rows = await db
    .selectFrom('backup_schedules')
    .innerJoin('services', 'services.id', 'backup_schedules.service_id')
    .select((eb) => ['backup_schedules.price_paise', eb.fn.countAll<string>().as('n')])
    .where('services.account_id', '=', accountId)
    .where('services.status', 'in', ['active', 'suspended'])
    .where('backup_schedules.frequency', '<>', 'off')
    .where('backup_schedules.price_paise', '>', '0')
    .groupBy('backup_schedules.price_paise')
    .execute();
  return rows.map((r) => ({ pricePaise: r.price_paise, count: Number(r.n) }));
}

/** The owner's service status with whether the owner is suspended (a console ticket's checks). */
export function ownConsoleState(db: Executor, accountId: number, id: number) {
  return db
    .selectFrom('accounts')
    .innerJoin('services', 'services.account_id', 'accounts.id')
    .select(['accounts.suspended_at', 'services.status'])
    .where('accounts.id', '=', accountId)
    .where('services.id', '=', id)
    .executeTakeFirst();
}

/** A new service of an order; its owner is in the values. */
export function insert(trx: Transaction<DB>, values: Insertable<ServicesTable>): Promise<Service> {
  return trx.insertInto('services').values(values).returningAll().executeTakeFirstOrThrow();
}

// ---- by id alone: staff, worker, lifecycle ----

/** The service a job runs on (the job's owner was checked when it was started). */
export function findForJob(db: Executor, id: number): Promise<Service> {
  return db.selectFrom('services').selectAll().where('id', '=', id).executeTakeFirstOrThrow();
}

export function lockForStaff(trx: Transaction<DB>, id: number): Promise<Service | undefined> {
  return trx.selectFrom('services').selectAll().where('id', '=', id).forUpdate().executeTakeFirst();
}

export async function labelForStaff(db: Executor, id: number): Promise<string> {
  const { label } = await db.selectFrom('services').select('label').where('id', '=', id).executeTakeFirstOrThrow();
  return label;
}

/**
 * Services of every account (or one), newest first, with the owner's e-mail; `search`: part of
 * the label or of the owner's e-mail, or the service's id.
 */
export function listForStaff(
  db: Executor,
  filter: { accountId?: number; status?: ServiceStatus; type?: PlanType; search?: string; limit: number },
): Promise<(Service & { email: string })[]> {
  let query = db
    .selectFrom('services')
    .innerJoin('accounts', 'accounts.id', 'services.account_id')
    .selectAll('services')
    .select('accounts.email')
    .orderBy('services.id', 'desc')
    .limit(filter.limit);
  if (filter.accountId !== undefined) query = query.where('services.account_id', '=', filter.accountId);
  if (filter.status) query = query.where('services.status', '=', filter.status);
  if (filter.type) query = query.where('services.type', '=', filter.type);
  const search = filter.search?.trim().toLowerCase();
  if (search) {
    const like = `%${search.replace(/[\\%_]/g, '\\$&')}%`;
    const id = /^\d{1,9}$/.test(search) ? Number(search) : null;
    query = query.where((eb) =>
      eb.or([
        eb(eb.fn('lower', ['services.label']), 'like', like),
        eb('accounts.email', 'like', like),
        ...(id === null ? [] : [eb('services.id', '=', id)]),
      ]),
    );
  }
  return query.execute();
}

/** One service of any account, with the owner's e-mail (staff). */
export function findForStaff(db: Executor, id: number): Promise<(Service & { email: string }) | undefined> {
  return db
    .selectFrom('services')
    .innerJoin('accounts', 'accounts.id', 'services.account_id')
    .selectAll('services')
    .select('accounts.email')
    .where('services.id', '=', id)
    .executeTakeFirst();
}

/** Status of these services with whether their owner is suspended (open consoles re-checked). */
export function consoleStatesById(db: Executor, ids: number[]) {
  return db
    .selectFrom('services')
    .innerJoin('accounts', 'accounts.id', 'services.account_id')
    .select(['services.id', 'services.status', 'accounts.suspended_at'])
    .where('services.id', 'in', ids)
    .execute();
}

/** Services that hold a slot on the node (everything but terminated and failed). */
export async function countOnNode(db: Executor, nodeId: number): Promise<number> {
  const row = await db
    .selectFrom('services')
    .select((eb) => eb.fn.countAll<string>().as('n'))
    .where('node_id', '=', nodeId)
    .where('status', 'not in', ['terminated', 'failed'])
    .executeTakeFirstOrThrow();
  return Number(row.n);
}

export async function setNode(trx: Transaction<DB>, id: number, nodeId: number): Promise<void> {
  await trx.updateTable('services').set({ node_id: nodeId }).where('id', '=', id).execute();
}

export function setPeriodEnd(trx: Transaction<DB>, id: number, periodEnd: Date): Promise<Service> {
  return trx
    .updateTable('services')
    .set({ period_end: periodEnd })
    .where('id', '=', id)
    .returningAll()
    .executeTakeFirstOrThrow();
}

export async function setCredentials(db: Executor, id: number, sealed: string): Promise<void> {
  await db.updateTable('services').set({ credentials_sealed: sealed }).where('id', '=', id).execute();
}

/** What the upstream calls the service (e.g. the VM's node and vmid), as JSON. */
export async function setUserData(db: Executor, id: number, sealed: string): Promise<void> {
  await db.updateTable('services').set({ user_data_sealed: sealed }).where('id', '=', id).execute();
}

export async function setExternal(db: Executor, id: number, external: string): Promise<void> {
  await db.updateTable('services').set({ external }).where('id', '=', id).execute();
}

/** One top-level field of the service's config, set in place (jsonb_set). */
export async function setConfigField(db: Executor, id: number, field: string, value: unknown): Promise<void> {
  await db
    .updateTable('services')
    .set((eb) => ({
      config: eb.fn('jsonb_set', [eb.ref('config'), eb.val(`{${field}}`), eb.val(JSON.stringify(value))]) as never,
    }))
    .where('id', '=', id)
    .execute();
}

export async function markActive(trx: Transaction<DB>, id: number, now: Date, periodEnd: Date): Promise<void> {
  await trx
    .updateTable('services')
    // Provisioning has used the user data (core/services/user-data.ts): it is not kept.
    .set({ status: 'active', activated_at: now, period_end: periodEnd, user_data_sealed: null })
    .where('id', '=', id)
    .execute();
}

export async function markFailed(trx: Transaction<DB>, id: number): Promise<void> {
  await trx.updateTable('services').set({ status: 'failed', user_data_sealed: null }).where('id', '=', id).execute();
}

export async function markSuspended(trx: Transaction<DB>, id: number, now: Date, reason: SuspendReason): Promise<void> {
  await trx
    .updateTable('services')
    .set({ status: 'suspended', suspended_at: now, suspend_reason: reason })
    .where('id', '=', id)
    .execute();
}

export async function markUnsuspended(trx: Transaction<DB>, id: number): Promise<void> {
  await trx
    .updateTable('services')
    .set({ status: 'active', suspended_at: null, suspend_reason: null })
    .where('id', '=', id)
    .execute();
}

/** Terminated: the credentials go with it. */
export async function markTerminated(trx: Transaction<DB>, id: number, now: Date): Promise<void> {
  await trx
    .updateTable('services')
    .set({ status: 'terminated', terminated_at: now, credentials_sealed: null, user_data_sealed: null })
    .where('id', '=', id)
    .execute();
}

/** Who owns the service (its wallet is locked before the service itself, see lockWallet). */
export async function ownerOf(db: Executor, id: number): Promise<number | undefined> {
  const row = await db.selectFrom('services').select('account_id').where('id', '=', id).executeTakeFirst();
  return row?.account_id;
}

// Scheduled backups of virtual servers (issue 37, CONTRACT §13; core/backups/ owns them).
// - `backup_schedules`: one row per service that ever had a schedule. `frequency` off keeps the
//   row (its hour and keep, its last run and error) and clears `next_run_at`; `weekday` is 0
//   (Sunday) … 6 (Saturday), used by weekly schedules. `price_paise` is the monthly add-on price
//   taken from the plan when the schedule was turned on (like a service's own price, kept). A row
//   with `job_id` has a scheduled snapshot job whose outcome is not recorded yet.
// - orders of kind `addon`: the pro-rata charge of turning the add-on on (paid at once, invoiced).
// The row's changes reach every process's instance-list cache like the service's own (0015).

import { type Kysely, sql } from 'kysely';

export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    create table backup_schedules (
      service_id integer primary key references services (id) on delete cascade,
      account_id integer not null references accounts (id) on delete cascade,
      frequency text not null check (frequency in ('daily', 'weekly', 'off')),
      hour smallint not null check (hour between 0 and 23),
      weekday smallint not null default 0 check (weekday between 0 and 6),
      keep smallint not null check (keep between 1 and 14),
      price_paise bigint not null check (price_paise >= 0),
      next_run_at timestamptz,
      last_run_at timestamptz,
      last_error text check (length(last_error) <= 500),
      job_id integer references jobs (id) on delete set null,
      created_at timestamptz not null default now(),
      updated_at timestamptz not null default now(),
      check ((frequency = 'off') = (next_run_at is null))
    )`.execute(db);
  await sql`create index backup_schedules_due_idx on backup_schedules (next_run_at) where next_run_at is not null`.execute(
    db,
  );
  await sql`create index backup_schedules_job_idx on backup_schedules (job_id) where job_id is not null`.execute(db);
  await sql`create index backup_schedules_account_idx on backup_schedules (account_id)`.execute(db);
  await sql`create trigger backup_schedules_notice after insert or update or delete on backup_schedules
    for each row execute function hp_notice_account()`.execute(db);
  await sql`alter table orders drop constraint orders_kind_check`.execute(db);
  await sql`alter table orders add constraint orders_kind_check check (kind in ('new', 'renewal', 'resize', 'addon'))`.execute(
    db,
  );
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`drop table if exists backup_schedules`.execute(db);
  // Add-on orders already issued stay (their invoices are the legal record): checked from now on only.
  await sql`alter table orders drop constraint orders_kind_check`.execute(db);
  await sql`alter table orders add constraint orders_kind_check check (kind in ('new', 'renewal', 'resize')) not valid`.execute(
    db,
  );
}

// Data export and account deletion (issue 36 part D, CONTRACT §11).
//
// - `accounts.deletion_requested_at` / `deletion_scheduled_for`: a deletion the customer asked for,
//   due 7 days later (both set or both null); signing in or `cancel_deletion` clears them.
//   `deleted_at`: the account was erased and its row is a tombstone (foreign keys of the orders,
//   invoices and ledger it had still point at it); it can never sign in again.
// - `account_exports`: one archive of an account's data per request. The archive is gzip'd JSON
//   sealed with SECRET_KEY (AES-256-GCM, bound to its row), present only while `ready`; the row
//   expires 24 hours after it was built and the maintenance sweep deletes it.
// - `deposits.proof_erased_at`: the proof file of a manual deposit was deleted with its account;
//   the deposit itself (amount, reference, review) stays as a record of money received.

import { type Kysely, sql } from 'kysely';

const PROOF_REQUIRED = `method <> 'manual'
  or (txn_ref is not null and screenshot_file is not null
      and screenshot_type is not null and screenshot_bytes is not null)`;

export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    alter table accounts
      add column deletion_requested_at timestamptz,
      add column deletion_scheduled_for timestamptz,
      add column deleted_at timestamptz,
      add constraint accounts_deletion_schedule check ((deletion_requested_at is null) = (deletion_scheduled_for is null)),
      add constraint accounts_deleted_unscheduled check (deleted_at is null or deletion_scheduled_for is null)
  `.execute(db);
  await sql`create index accounts_deletion_due_idx on accounts (deletion_scheduled_for)
    where deletion_scheduled_for is not null`.execute(db);
  await sql`
    create table account_exports (
      id integer generated always as identity primary key,
      account_id integer not null references accounts (id) on delete cascade,
      status text not null default 'queued' check (status in ('queued', 'building', 'ready', 'failed')),
      include_proofs boolean not null default false,
      archive bytea,
      bytes integer,
      created_at timestamptz not null default now(),
      finished_at timestamptz,
      expires_at timestamptz,
      check ((status = 'ready') = (archive is not null)),
      check (status <> 'ready' or (expires_at is not null and bytes is not null))
    )`.execute(db);
  await sql`create index account_exports_account_idx on account_exports (account_id, created_at)`.execute(db);
  await sql`create index account_exports_expires_idx on account_exports (expires_at)`.execute(db);
  await sql`
    alter table deposits
      add column proof_erased_at timestamptz,
      drop constraint deposits_manual_proof,
      add constraint deposits_manual_proof check (proof_erased_at is not null or ${sql.raw(PROOF_REQUIRED)}),
      add constraint deposits_proof_erased check (
        proof_erased_at is null or (screenshot_file is null and screenshot_type is null and screenshot_bytes is null)
      )
  `.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`
    alter table deposits
      drop constraint deposits_proof_erased,
      drop constraint deposits_manual_proof,
      drop column proof_erased_at,
      add constraint deposits_manual_proof check (${sql.raw(PROOF_REQUIRED)})
  `.execute(db);
  await sql`drop table if exists account_exports`.execute(db);
  await sql`drop index if exists accounts_deletion_due_idx`.execute(db);
  await sql`
    alter table accounts
      drop constraint accounts_deleted_unscheduled,
      drop constraint accounts_deletion_schedule,
      drop column deleted_at,
      drop column deletion_scheduled_for,
      drop column deletion_requested_at
  `.execute(db);
}

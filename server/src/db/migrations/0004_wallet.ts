import { type Kysely, sql } from 'kysely';

// The prepaid wallet (CONTRACT §3): integer paise, an append-only ledger whose rows the database
// refuses to change or delete, a balance kept in the same transaction as each row and never
// below zero, and manual deposits (unique transaction reference, screenshot on disk) that staff
// approve or reject.
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    create table wallets (
      account_id integer primary key references accounts (id) on delete restrict,
      balance_paise bigint not null default 0 check (balance_paise >= 0),
      updated_at timestamptz not null default now()
    )`.execute(db);

  await sql`
    create table wallet_transactions (
      id integer generated always as identity primary key,
      public_id text not null unique,
      account_id integer not null references wallets (account_id) on delete restrict,
      kind text not null check (kind in ('deposit', 'order', 'renewal', 'refund', 'adjustment')),
      amount_paise bigint not null check (amount_paise <> 0),
      balance_after_paise bigint not null check (balance_after_paise >= 0),
      reference_type text,
      reference_id integer,
      note text,
      created_at timestamptz not null default now()
    )`.execute(db);
  await sql`create index wallet_transactions_account_idx on wallet_transactions (account_id, id desc)`.execute(db);
  await sql`
    create function hostplane_ledger_is_append_only() returns trigger language plpgsql as $$
    begin
      raise exception 'wallet_transactions is append-only: % refused', tg_op using errcode = 'restrict_violation';
    end
    $$`.execute(db);
  await sql`
    create trigger wallet_transactions_append_only
      before update or delete on wallet_transactions
      for each row execute function hostplane_ledger_is_append_only()`.execute(db);

  await sql`
    create table deposits (
      id integer generated always as identity primary key,
      public_id text not null unique,
      account_id integer not null references accounts (id) on delete restrict,
      amount_paise bigint not null check (amount_paise > 0),
      txn_ref text not null,
      screenshot_file text not null,
      screenshot_type text not null check (screenshot_type in ('png', 'jpeg', 'webp', 'pdf')),
      screenshot_bytes integer not null,
      status text not null default 'pending' check (status in ('pending', 'approved', 'rejected')),
      reason text,
      reviewed_by text,
      reviewed_at timestamptz,
      transaction_id integer references wallet_transactions (id),
      created_at timestamptz not null default now()
    )`.execute(db);
  // One reference, once, across every account, whatever its case.
  await sql`create unique index deposits_txn_ref_key on deposits (lower(txn_ref))`.execute(db);
  await sql`create index deposits_account_idx on deposits (account_id, id desc)`.execute(db);
  await sql`create index deposits_pending_idx on deposits (id) where status = 'pending'`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`drop table if exists deposits`.execute(db);
  await sql`drop table if exists wallet_transactions`.execute(db);
  await sql`drop function if exists hostplane_ledger_is_append_only()`.execute(db);
  await sql`drop table if exists wallets`.execute(db);
}

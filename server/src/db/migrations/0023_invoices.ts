// Tax invoices (issue 35, CONTRACT §12). `invoice_series` holds the next serial of each
// (series, financial year): the charging transaction takes it with an UPDATE … RETURNING, so the
// row lock orders concurrent charges and a rolled-back charge gives its number back (no gap).
// `invoices` keeps each invoice as issued — buyer, seller, amounts and lines frozen — and a trigger
// refuses any UPDATE or DELETE (a correction is a credit note, never an edit).

import { type Kysely, sql } from 'kysely';

export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    create table invoice_series (
      series text not null check (series ~ '^[A-Z0-9]{1,5}$'),
      fy text not null check (fy ~ '^[0-9]{4}$'),
      next_serial integer not null default 1 check (next_serial >= 1),
      primary key (series, fy)
    )`.execute(db);
  await sql`
    create table invoices (
      id integer generated always as identity primary key,
      number text not null unique check (number ~ '^[A-Z0-9/-]{1,16}$'),
      kind text not null check (kind in ('invoice', 'credit_note')),
      account_id integer not null references accounts (id) on delete restrict,
      order_id integer references orders (id) on delete restrict,
      original_invoice_id integer references invoices (id) on delete restrict,
      issued_at timestamptz not null,
      fy text not null check (fy ~ '^[0-9]{4}$'),
      serial integer not null check (serial >= 1),
      taxable_paise bigint not null check (taxable_paise >= 0),
      cgst_paise bigint not null check (cgst_paise >= 0),
      sgst_paise bigint not null check (sgst_paise >= 0),
      igst_paise bigint not null check (igst_paise >= 0),
      total_paise bigint not null
        check (total_paise = taxable_paise + cgst_paise + sgst_paise + igst_paise),
      rate_bps integer not null check (rate_bps >= 0),
      place_of_supply text not null check (place_of_supply ~ '^[0-9]{2}$'),
      b2b boolean not null,
      buyer jsonb not null,
      seller jsonb not null,
      lines jsonb not null,
      created_at timestamptz not null default now(),
      check ((kind = 'credit_note') = (original_invoice_id is not null))
    )`.execute(db);
  // One invoice per order: the charge that pays an order issues it, and only once.
  await sql`create unique index invoices_order_key on invoices (order_id) where kind = 'invoice'`.execute(db);
  await sql`create index invoices_account_idx on invoices (account_id, id desc)`.execute(db);
  await sql`
    create function hostplane_invoices_are_immutable() returns trigger language plpgsql as $$
    begin
      raise exception 'invoices are immutable: % refused (issue a credit note)', tg_op using errcode = 'restrict_violation';
    end
    $$`.execute(db);
  await sql`
    create trigger invoices_immutable
      before update or delete on invoices
      for each row execute function hostplane_invoices_are_immutable()`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`drop table if exists invoices`.execute(db);
  await sql`drop function if exists hostplane_invoices_are_immutable()`.execute(db);
  await sql`drop table if exists invoice_series`.execute(db);
}

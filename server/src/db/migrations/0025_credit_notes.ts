// Credit notes, staff refunds and deposit refunds (issue 35, CONTRACT §12).
//
// A credit note is an `invoices` row of kind 'credit_note' (0023 already allows it): it now also
// carries, frozen like the rest of the document, the reason it was issued and the original
// invoice's number and date (CGST Act s.34: a credit note names the invoice it reduces). Adding
// columns fires no row trigger, so the immutability of issued invoices is untouched.
//
// A refund of an online deposit back through the gateway is money leaving the platform: the
// ledger gains the kind 'withdrawal' for it (the debit), and the deposit records the gateway's
// refund id, amount, reason, who refunded it, when, and the ledger row. One refund per deposit
// (the gateway id is unique; a refunded deposit is refused again).

import { type Kysely, sql } from 'kysely';

export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    alter table invoices
      add column reason text check (reason is null or length(reason) between 3 and 500),
      add column original_number text,
      add column original_issued_at timestamptz,
      add constraint invoices_credit_note_reference check (
        (kind = 'credit_note') =
        (reason is not null and original_number is not null and original_issued_at is not null)
      )
  `.execute(db);
  await sql`create index invoices_original_idx on invoices (original_invoice_id) where kind = 'credit_note'`.execute(
    db,
  );
  await sql`
    alter table wallet_transactions
      drop constraint wallet_transactions_kind_check,
      add constraint wallet_transactions_kind_check
        check (kind in ('deposit', 'order', 'renewal', 'refund', 'adjustment', 'withdrawal'))
  `.execute(db);
  await sql`
    alter table deposits
      add column refund_gateway_id text unique,
      add column refund_amount_paise bigint check (refund_amount_paise > 0),
      add column refund_reason text,
      add column refunded_by text,
      add column refunded_at timestamptz,
      add column refund_transaction_id integer references wallet_transactions (id),
      add constraint deposits_refund_complete check (
        (refund_gateway_id is null) = (refund_amount_paise is null)
        and (refund_gateway_id is null) = (refunded_at is null)
        and (refund_gateway_id is null) = (refund_transaction_id is null)
      ),
      add constraint deposits_refund_within check (refund_amount_paise is null or refund_amount_paise <= amount_paise),
      add constraint deposits_refund_online check (
        refund_gateway_id is null or (method = 'razorpay' and status = 'approved')
      )
  `.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`
    alter table deposits
      drop constraint deposits_refund_online,
      drop constraint deposits_refund_within,
      drop constraint deposits_refund_complete,
      drop column refund_transaction_id,
      drop column refunded_at,
      drop column refunded_by,
      drop column refund_reason,
      drop column refund_amount_paise,
      drop column refund_gateway_id
  `.execute(db);
  // The ledger is append-only: with withdrawal rows present this refuses, as it should.
  await sql`
    alter table wallet_transactions
      drop constraint wallet_transactions_kind_check,
      add constraint wallet_transactions_kind_check
        check (kind in ('deposit', 'order', 'renewal', 'refund', 'adjustment'))
  `.execute(db);
  await sql`drop index if exists invoices_original_idx`.execute(db);
  await sql`
    alter table invoices
      drop constraint invoices_credit_note_reference,
      drop column original_issued_at,
      drop column original_number,
      drop column reason
  `.execute(db);
}

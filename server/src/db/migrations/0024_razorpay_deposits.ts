// Online deposits through Razorpay (issue 35, CONTRACT §12): a deposit is `manual` (a reported
// UPI/bank payment with its reference and screenshot, reviewed by staff) or `razorpay` (a gateway
// order, approved when the gateway says the payment is captured). A Razorpay order and a payment
// belong to one deposit at most (unique), which is what makes a confirmation idempotent; the
// manual proof columns become optional for gateway rows but stay required for manual ones.

import { type Kysely, sql } from 'kysely';

export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    alter table deposits
      add column method text not null default 'manual' check (method in ('manual', 'razorpay')),
      add column gateway_order_id text unique,
      add column gateway_payment_id text unique,
      alter column txn_ref drop not null,
      alter column screenshot_file drop not null,
      alter column screenshot_type drop not null,
      alter column screenshot_bytes drop not null,
      add constraint deposits_manual_proof check (
        method <> 'manual'
        or (txn_ref is not null and screenshot_file is not null
            and screenshot_type is not null and screenshot_bytes is not null)
      ),
      add constraint deposits_razorpay_order check (method <> 'razorpay' or gateway_order_id is not null)
  `.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`delete from deposits where method <> 'manual'`.execute(db);
  await sql`
    alter table deposits
      drop constraint deposits_razorpay_order,
      drop constraint deposits_manual_proof,
      drop column gateway_payment_id,
      drop column gateway_order_id,
      drop column method,
      alter column txn_ref set not null,
      alter column screenshot_file set not null,
      alter column screenshot_type set not null,
      alter column screenshot_bytes set not null
  `.execute(db);
}

// Billing profiles (issue 35, CONTRACT §12): one per account, the name, address, GST state and
// optional GSTIN a tax invoice names its buyer by. Checked by core/billing/billing-profile.ts; the
// database keeps the shapes (state code, PIN code, GSTIN prefix) so no other writer can break them.
// Invoices copy the profile when issued, so editing it never changes an issued invoice.

import { type Kysely, sql } from 'kysely';

export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    create table billing_profiles (
      account_id integer primary key references accounts (id) on delete cascade,
      legal_name text not null,
      address_line1 text not null,
      address_line2 text,
      city text not null,
      state_code text not null check (state_code ~ '^[0-9]{2}$'),
      pincode text not null check (pincode ~ '^[1-9][0-9]{5}$'),
      gstin text check (gstin ~ '^[0-9]{2}[A-Z0-9]{13}$' and left(gstin, 2) = state_code),
      updated_at timestamptz not null default now()
    )`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`drop table if exists billing_profiles`.execute(db);
}

// Tax invoicing (issue 35): what an account's invoices name it by. Invoices copy a profile when
// issued, so these rows may change freely without touching an issued invoice.

import type { Selectable } from 'kysely';
import type { CreatedAt } from './columns.ts';

export interface BillingProfilesTable {
  /** One profile per account, keyed by it. */
  account_id: number;
  legal_name: string;
  address_line1: string;
  address_line2: string | null;
  city: string;
  /** A GST state code, two digits ("27"): core/billing/gst.ts GST_STATES. */
  state_code: string;
  /** Six digits, not starting with 0. */
  pincode: string;
  /** Upper case, and its first two digits are state_code; null for an unregistered buyer (B2C). */
  gstin: string | null;
  updated_at: CreatedAt;
}

export type BillingProfile = Selectable<BillingProfilesTable>;

// An account's billing profile (issue 35, CONTRACT §12): the legal name, address, GST state and
// optional GSTIN its tax invoices name the buyer by, and whose state decides the place of supply.
// One per account, replaced whole by put. Every field is checked at once so a form learns all its
// problems in one answer; a GSTIN must be well formed, carry the right check character and start
// with the profile's state code. Invoices copy the profile when issued (they never read it later).

import type { Kysely } from 'kysely';
import type { BillingProfile, DB } from '../../db/tables.ts';
import { freeTextProblem } from '../accounts/rules.ts';
import { AppError } from '../errors.ts';
import { type Clock, isoWithOffset } from '../time.ts';
import { isStateCode, normalizeGstin, stateName, validateGstin } from './gst.ts';

export const LEGAL_NAME = { min: 2, max: 100 } as const;
export const ADDRESS_LINE_MAX = 120;
export const CITY = { min: 2, max: 60 } as const;
/** An Indian PIN code: six digits, the first (the postal region) never 0. */
const PINCODE = /^[1-9][0-9]{5}$/;

export interface BillingProfileInput {
  legal_name: string;
  address_line1: string;
  address_line2: string | null;
  city: string;
  state_code: string;
  pincode: string;
  gstin: string | null;
}

/** Trimmed text, or null when absent or blank. */
function textOf(value: unknown): string | null {
  if (typeof value !== 'string') return null;
  const trimmed = value.trim();
  return trimmed === '' ? null : trimmed;
}

/** Why one line of free text is wrong: required, length in characters, no control or bidi characters. */
function lineProblem(value: unknown, min: number, max: number, required: boolean): string | null {
  const text = textOf(value);
  if (value !== undefined && value !== null && typeof value !== 'string') return 'must be a string';
  if (text === null) return required ? 'is required' : null;
  const length = [...text].length;
  if (length < min || length > max)
    return min > 1 ? `must be ${min}–${max} characters` : `must be at most ${max} characters`;
  return freeTextProblem(text);
}

/**
 * Every field's problem, and the profile as it will be stored (trimmed; blank optional fields
 * null; the GSTIN in capitals). Pure: it also runs when the schema refused the body (fieldRules).
 */
export function checkBillingProfile(input: Record<string, unknown>): {
  fields: Record<string, string>;
  profile: BillingProfileInput;
} {
  const fields: Record<string, string> = {};
  const put = (field: string, problem: string | null) => {
    if (problem) fields[field] = problem;
  };
  put('legal_name', lineProblem(input.legal_name, LEGAL_NAME.min, LEGAL_NAME.max, true));
  put('address_line1', lineProblem(input.address_line1, 1, ADDRESS_LINE_MAX, true));
  put('address_line2', lineProblem(input.address_line2, 1, ADDRESS_LINE_MAX, false));
  put('city', lineProblem(input.city, CITY.min, CITY.max, true));
  const stateCode = textOf(input.state_code) ?? '';
  if (!isStateCode(stateCode)) put('state_code', 'must be a GST state code of two digits, such as "27" (Maharashtra)');
  const pincode = textOf(input.pincode) ?? '';
  if (!PINCODE.test(pincode)) put('pincode', 'must be 6 digits, not starting with 0');
  const gstinText = textOf(input.gstin);
  const gstin = gstinText === null ? null : normalizeGstin(gstinText);
  if (input.gstin !== undefined && input.gstin !== null && typeof input.gstin !== 'string') {
    put('gstin', 'must be a string');
  } else if (gstin !== null) {
    // Checked against the state only when that is itself valid, so one mistake is not reported twice.
    put('gstin', validateGstin(gstin, isStateCode(stateCode) ? stateCode : undefined));
  }
  return {
    fields,
    profile: {
      legal_name: textOf(input.legal_name) ?? '',
      address_line1: textOf(input.address_line1) ?? '',
      address_line2: textOf(input.address_line2),
      city: textOf(input.city) ?? '',
      state_code: stateCode,
      pincode,
      gstin,
    },
  };
}

/** The field rules alone, for the route's fieldRules. */
export const billingProfileProblems = (input: Record<string, unknown>) => checkBillingProfile(input).fields;

export function createBillingProfileService({ db, clock }: { db: Kysely<DB>; clock: Clock }) {
  return {
    /** The account's profile, or null when it has none yet. */
    get: async (accountId: number): Promise<BillingProfile | null> =>
      (await db.selectFrom('billing_profiles').selectAll().where('account_id', '=', accountId).executeTakeFirst()) ??
      null,

    /** Set the account's profile, replacing the one it had (422 validation_failed naming each bad field). */
    async put(accountId: number, input: Record<string, unknown>): Promise<BillingProfile> {
      const { fields, profile } = checkBillingProfile(input);
      if (Object.keys(fields).length > 0) throw AppError.fields(fields, 'The billing profile has invalid fields.');
      const values = { ...profile, updated_at: clock() };
      return db
        .insertInto('billing_profiles')
        .values({ account_id: accountId, ...values })
        .onConflict((oc) => oc.column('account_id').doUpdateSet(values))
        .returningAll()
        .executeTakeFirstOrThrow();
    },
  };
}

export type BillingProfileService = ReturnType<typeof createBillingProfileService>;

export function billingProfileView(p: BillingProfile) {
  return {
    legal_name: p.legal_name,
    address_line1: p.address_line1,
    address_line2: p.address_line2,
    city: p.city,
    state_code: p.state_code,
    state_name: stateName(p.state_code) ?? p.state_code,
    pincode: p.pincode,
    gstin: p.gstin,
    updated_at: isoWithOffset(p.updated_at),
  };
}

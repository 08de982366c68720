// How a billing profile looks on the session surface (/client/account/billing-profile/); its
// fields are core/billing/billing-profile.ts billingProfileView.

import { Type } from 'typebox';

export const BillingProfileSchema = Type.Object({
  legal_name: Type.String(),
  address_line1: Type.String(),
  address_line2: Type.Union([Type.String(), Type.Null()]),
  city: Type.String(),
  state_code: Type.String({ description: 'GST state code, two digits ("27")' }),
  state_name: Type.String(),
  pincode: Type.String({ description: 'six digits' }),
  gstin: Type.Union([Type.String(), Type.Null()], { description: 'null for an unregistered buyer' }),
  updated_at: Type.String(),
});

// CONTRACT §12: GET/POST /api/v1/client/account/billing-profile/ — what the account's tax
// invoices name it by. GET answers the profile or null (none set yet), with the GST states a
// profile may name (the panel's state select); POST replaces it whole.
// The rules are core/billing/billing-profile.ts; the schema only bounds sizes and types, so a
// 422 names every failing field with the core's reasons (fieldRules).

import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyInstance } from 'fastify';
import { Type } from 'typebox';
import { billingProfileProblems, billingProfileView } from '../../core/billing/billing-profile.ts';
import { GST_STATES } from '../../core/billing/gst.ts';
import type { Deps } from '../../core/deps.ts';
import { sessionErrors } from '../schemas.ts';
import { BillingProfileSchema } from '../views/billing-profile.view.ts';
import { signedIn } from './context.ts';
import { mutationBody, okSchema } from './envelopes.ts';

const tags = ['account'];
const PATH = '/account/billing-profile/';
const nullableText = (maxLength: number) => Type.Optional(Type.Union([Type.String({ maxLength }), Type.Null()]));

/** The GST states a profile may name, by name (what a form's select lists). */
const STATES = Object.entries(GST_STATES)
  .map(([code, name]) => ({ code, name }))
  .sort((a, b) => a.name.localeCompare(b.name, 'en'));

const StateSchema = Type.Object({
  code: Type.String({ description: 'the GST state code, two digits ("27")' }),
  name: Type.String({ description: '"Maharashtra"' }),
});

export async function billingProfileRoutes(root: FastifyInstance, { deps }: { deps: Deps }): Promise<void> {
  const app = root.withTypeProvider<TypeBoxTypeProvider>();
  app.get(
    PATH,
    {
      schema: {
        operationId: 'getBillingProfile',
        tags,
        summary: "The account's billing profile (null until one is set) and the GST states it may name",
        response: {
          200: okSchema({
            profile: Type.Union([BillingProfileSchema, Type.Null()]),
            states: Type.Array(StateSchema, { description: 'every GST state code and its name, by name' }),
          }),
          ...sessionErrors(401),
        },
      },
    },
    async (request) => {
      const session = signedIn(request);
      const profile = await deps.billingProfiles.get(session.account.id);
      return {
        success: true as const,
        message: profile ? 'Billing profile loaded.' : 'No billing profile yet.',
        profile: profile ? billingProfileView(profile) : null,
        states: STATES,
      };
    },
  );

  app.post(
    PATH,
    {
      config: { fieldRules: billingProfileProblems },
      schema: {
        operationId: 'putBillingProfile',
        tags,
        summary: 'Set the billing profile (replaces it whole)',
        description:
          'legal_name 2–100 characters, address lines up to 120, city 2–60, state_code a GST state code ("27"), ' +
          'pincode 6 digits not starting with 0, gstin optional: 15 characters with a valid check character, ' +
          'starting with state_code (lower case is accepted and stored in capitals). 422 names every bad field.',
        body: mutationBody({
          legal_name: Type.String({ maxLength: 1000 }),
          address_line1: Type.String({ maxLength: 1000 }),
          address_line2: nullableText(1000),
          city: Type.String({ maxLength: 1000 }),
          state_code: Type.String({ maxLength: 10 }),
          pincode: Type.String({ maxLength: 20 }),
          gstin: nullableText(100),
        }),
        response: {
          200: okSchema({ profile: BillingProfileSchema }),
          ...sessionErrors(400, 401, 403, 422),
        },
      },
    },
    async (request) => {
      const session = signedIn(request);
      const { csrf_token: _csrf, ...input } = request.body;
      const profile = await deps.billingProfiles.put(session.account.id, input);
      return { success: true as const, message: 'Billing profile saved.', profile: billingProfileView(profile) };
    },
  );
}

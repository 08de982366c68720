// What the web product's actions share: the plan's limits (checked before the panel is asked, 409
// limit_reached; the package on the server enforces the same ones) and the password rule the
// panel's passwords are given under.

import { Type } from 'typebox';
import { AppError } from '../../errors.ts';
import type { ActionContext } from '../../product-kit/actions.ts';
import { type WebSpecs, webSpecsOf } from './data.ts';

/** The specs of the service's plan. */
export async function specsOf(ctx: ActionContext): Promise<WebSpecs> {
  const plan = await ctx.db
    .selectFrom('plans')
    .select('specs')
    .where('id', '=', ctx.service.plan_id)
    .executeTakeFirstOrThrow();
  return webSpecsOf({ id: ctx.service.plan_id, specs: plan.specs });
}

export const limitReached = (what: string, limit: number) =>
  new AppError('limit_reached', {
    message: `Your plan allows ${limit} ${what}; delete one first or upgrade the plan.`,
    details: { limit, resource: what },
  });

export const Password = Type.String({
  minLength: 8,
  maxLength: 128,
  description: 'at least 8 characters; the panel rates its strength',
});

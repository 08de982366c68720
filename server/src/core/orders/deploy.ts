// The deploy use case, shared by every surface that places orders (the token surface's
// POST /instances, the session surface's POST /orders/): idempotent replay, the per-account
// deploy allowance, and the transaction in which the order is placed and its answer stored.
// How the answer looks (envelope, view) is the caller's: it renders the placed order, and the
// rendered body is what a replay sends back byte for byte.

import type { Kysely } from 'kysely';
import type { DB } from '../../db/tables.ts';
import { type IdempotentAnswer, runIdempotent } from '../idempotency.ts';
import type { RateLimits } from '../ratelimit/rate-limits.ts';
import type { OrderService, Placed } from './order.service.ts';
import type { FieldNaming, OrderInput } from './order-input.ts';

export interface DeployDeps {
  db: Kysely<DB>;
  limits: Pick<RateLimits, 'consume' | 'refund'>;
  orders: Pick<OrderService, 'place'>;
}

export interface DeployRequest {
  accountId: number;
  input: OrderInput;
  /** The idempotency key and what identifies "the same request" (the key is not part of it). */
  idempotency: { key: string; scope: string; payload: unknown };
  /** How the caller's body names the order's fields, for the errors. */
  naming: FieldNaming;
  /** The answer's body (201), rendered in the caller's envelope and stored for replays. */
  render: (placed: Placed) => unknown;
}

/**
 * Place an order idempotently. The deploy_account allowance (shared by every surface) is counted
 * inside the idempotent run: a replay (answered from the stored record) and a twin still in
 * progress (409) never count, even when the allowance is spent; a deploy that fails is given back.
 */
export async function deploy(d: DeployDeps, request: DeployRequest): Promise<IdempotentAnswer> {
  const { accountId, idempotency } = request;
  const quotaKey = `account:${accountId}`;
  let counted = false;
  try {
    return await runIdempotent(d.db, { accountId, ...idempotency }, async (trx) => {
      await d.limits.consume('deploy_account', quotaKey);
      counted = true;
      const placed = await d.orders.place(trx, accountId, request.input, request.naming);
      return { status: 201, body: request.render(placed) };
    });
  } catch (error) {
    // Only deploys that happened count against the hourly allowance.
    if (counted) await d.limits.refund('deploy_account', quotaKey);
    throw error;
  }
}

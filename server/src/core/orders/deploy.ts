// The deploy use case, shared by every surface that places orders (the token surface's
// POST /instances, the session surface's POST /orders/): idempotent replay, the per-account
// deploy allowance, the account's SSH keys named by id, and the transaction in which the order
// is placed and its answer stored.
// How the answer looks (envelope, view) is the caller's: it renders the placed order, and the
// rendered body is what a replay sends back byte for byte.

import type { Kysely } from 'kysely';
import type { DB } from '../../db/tables.ts';
import { byClient, type Who } from '../activity/activity.ts';
import { AppError } from '../errors.ts';
import { type IdempotentAnswer, runIdempotent } from '../idempotency.ts';
import type { RateLimits } from '../ratelimit/rate-limits.ts';
import { keyLines } from '../ssh/ssh-key.service.ts';
import type { OrderService, Placed } from './order.service.ts';
import type { OrderInput } from './order-input.ts';
import type { FieldNaming } from './order-problems.ts';

/** SSH keys an order may name by id (and in all, with the inline ones: order-input.ts checks that). */
const MAX_KEY_IDS = 10;

/**
 * The order with `config.ssh_key_ids` (the account's keys, by id) resolved to their OpenSSH lines
 * and put in `config.ssh_keys` beside the inline ones, so the order and the service keep the keys
 * themselves (a key deleted later stays on the servers it was deployed to). An id that is not one
 * of the account's keys is 422 naming it, whether it exists elsewhere or not.
 */
export async function withAccountKeys(
  db: Kysely<DB>,
  accountId: number,
  input: OrderInput,
  naming: FieldNaming,
): Promise<OrderInput> {
  const { ssh_key_ids: ids, ...config } = input.config;
  if (ids === undefined || ids === null) return { ...input, config };
  const field = naming === 'nested' ? 'config.ssh_key_ids' : 'ssh_key_ids';
  const refuse = (reason: string, message?: string) =>
    new AppError('bad_config_ssh_key_ids', { fields: { [field]: reason }, ...(message ? { message } : {}) });
  if (!Array.isArray(ids) || ids.length > MAX_KEY_IDS || !ids.every((id) => Number.isInteger(id) && id > 0))
    throw refuse(`must be a list of at most ${MAX_KEY_IDS} SSH key ids`);
  const found = await keyLines(db, accountId, ids as number[]);
  const unknown = [...new Set(ids as number[])].filter((id) => !found.has(id));
  if (unknown.length > 0) {
    throw refuse(
      `${unknown.join(', ')} ${unknown.length === 1 ? 'is not one of your SSH keys' : 'are not your SSH keys'}`,
      `No SSH key ${unknown.join(', ')} on your account (GET ssh-keys lists yours).`,
    );
  }
  // Inline keys that are not a list are left as they are, for the order's checks to name.
  if (config.ssh_keys !== undefined && !Array.isArray(config.ssh_keys)) return { ...input, config };
  const inline = (config.ssh_keys as unknown[] | undefined) ?? [];
  const byId = (ids as number[]).map((id) => found.get(id) as string);
  return { ...input, config: { ...config, ssh_keys: [...new Set([...inline, ...byId])] } };
}

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
  /** Who orders, from where (the activity log); a replay places nothing and logs nothing. */
  who?: Who;
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
      const input = await withAccountKeys(trx, accountId, request.input, request.naming);
      await d.limits.consume('deploy_account', quotaKey);
      counted = true;
      const placed = await d.orders.place(trx, accountId, input, request.naming, request.who ?? byClient(null));
      return { status: 201, body: request.render(placed) };
    });
  } catch (error) {
    // Only deploys that happened count against the hourly allowance.
    if (counted) await d.limits.refund('deploy_account', quotaKey);
    throw error;
  }
}

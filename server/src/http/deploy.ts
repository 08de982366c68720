// The core's deploy use case (core/orders/deploy.ts) wired to the app's dependencies, for the
// surfaces that place orders, and the token surfaces' answer to one (/api/v1/instances and
// {ALT_BASE_PATH}/v1/instances answer alike: 201, a replay flagged, 402 with where to top up).

import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Deps } from '../core/deps.ts';
import { AppError } from '../core/errors.ts';
import { requestKey } from '../core/idempotency.ts';
import { type DeployDeps, deploy } from '../core/orders/deploy.ts';
import type { Placed } from '../core/orders/order.service.ts';
import type { OrderInput } from '../core/orders/order-input.ts';
import type { FieldNaming } from '../core/orders/order-problems.ts';
import { principalOf } from './plugins/token-auth.ts';
import { whoOf } from './request-context.ts';
import { sendAsIs } from './surfaces.ts';

export function deployDeps(deps: Deps): DeployDeps {
  return { db: deps.database.db, limits: deps.limits, orders: deps.orders };
}

export interface TokenDeploy {
  input: OrderInput;
  /** The body's idempotency key (or the Idempotency-Key header's). */
  key: unknown;
  /** What makes two requests the same one (the body without its key), and the key's scope. */
  payload: unknown;
  scope: string;
  naming: FieldNaming;
  render: (placed: Placed) => { job?: { id: number } } & Record<string, unknown>;
  /** Where the answer's job is followed (the Location header). */
  jobUrl: (jobId: number) => string;
}

/** Deploy for a token holder and answer: 201 (or the replayed answer), 402 when the wallet cannot pay. */
export async function answerTokenDeploy(
  deps: Deps,
  request: FastifyRequest,
  reply: FastifyReply,
  order: TokenDeploy,
): Promise<never> {
  const principal = principalOf(request);
  const key = requestKey(order.key, request.headers['idempotency-key']);
  let answer: Awaited<ReturnType<typeof deploy>>;
  try {
    // The deploy allowance (deploy_account) is shared with every surface that places orders.
    answer = await deploy(deployDeps(deps), {
      accountId: principal.accountId,
      input: order.input,
      idempotency: { key, scope: order.scope, payload: order.payload },
      naming: order.naming,
      render: order.render,
      who: whoOf(request),
    });
  } catch (error) {
    // The token surfaces answer a wallet that cannot pay with 402 and where to top it up.
    if (error instanceof AppError && error.code === 'insufficient_funds') {
      throw new AppError('insufficient_funds', {
        status: 402,
        message: error.message,
        details: { ...error.details, deposit_url: `${deps.config.publicUrl}/api/v1/client/wallet/deposit/` },
      });
    }
    throw error;
  }
  if (answer.replayed) reply.header('Idempotent-Replayed', 'true');
  const jobId = (JSON.parse(answer.body) as { job?: { id: number } }).job?.id;
  if (jobId !== undefined) reply.header('Location', order.jobUrl(jobId));
  return sendAsIs(reply.code(answer.status as 201).type('application/json; charset=utf-8'), answer.body);
}

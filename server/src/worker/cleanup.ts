// What a failed provisioning leaves on a node when its undo cannot reach the node (the panel or
// hypervisor is down when the job gives up): the service is failed and refunded at once, marked
// `cleanup_pending`, and this pass — run with every maintenance sweep — undoes its provisioning
// steps again until they succeed, so a client who got their money back never keeps a server.
// The sweep also ends the activity log's retention: events older than a year are deleted.

import { type Kysely, sql } from 'kysely';
import type { Logger } from 'pino';
import { pruneActivity } from '../core/activity/activity.ts';
import { planById } from '../core/catalog/catalog.service.ts';
import type { Deps } from '../core/deps.ts';
import * as nodes from '../core/nodes/node.repository.ts';
import { stepRun } from '../core/product-kit/steps.ts';
import { recordEvent } from '../core/services/events.ts';
import * as services from '../core/services/service.repository.ts';
import type { DB } from '../db/tables.ts';

/** Delete the activity log's events older than its retention (a year), as of the app's clock. */
export function expireActivity(deps: Deps): Promise<number> {
  return pruneActivity(deps.database.db, deps.clock());
}

/** In the failing job's transaction: the service keeps something on its node that must go. */
export async function markCleanupPending(db: Kysely<DB>, serviceId: number): Promise<void> {
  await services.setConfigField(db, serviceId, 'cleanup_pending', true);
  await recordEvent(
    db,
    serviceId,
    'cleanup_pending',
    'What was made on the node for this service could not be removed yet; the platform keeps trying.',
  );
}

/** Undo the provisioning of failed services marked `cleanup_pending` (at most `limit` a pass). */
export async function retryCleanups(
  deps: Deps,
  logger: Logger,
  limit = 20,
): Promise<{ cleaned: number; left: number }> {
  const db = deps.database.db;
  const pending = await db
    .selectFrom('services')
    .selectAll()
    .where('status', '=', 'failed')
    .where(sql<string>`config->>'cleanup_pending'`, '=', 'true')
    .orderBy('id')
    .limit(limit)
    .execute();
  let cleaned = 0;
  for (const service of pending) {
    try {
      const job = await db
        .selectFrom('jobs')
        .selectAll()
        .where('service_id', '=', service.id)
        .where('type', '=', 'provision')
        .orderBy('id', 'desc')
        .limit(1)
        .executeTakeFirstOrThrow();
      const plan = await planById(db, service.plan_id);
      const node = service.node_id === null ? null : ((await nodes.findById(db, service.node_id)) ?? null);
      const product = deps.products.of(service.type);
      const c = product.jobs.open({ ...deps.productEnv, job, service, plan, node });
      // Every step may have been reached by some attempt: each undo finds what its step made, or nothing.
      const run = stepRun(product.jobs.provision, c, { reached: async () => {} }, 100);
      let undone = true;
      await run.undo((step, error) => {
        undone = false;
        logger.warn({ err: error, service: service.id, step: step.name }, 'cleanup of a failed service: still failing');
      });
      if (!undone) continue;
      await db.transaction().execute(async (trx) => {
        await services.setConfigField(trx, service.id, 'cleanup_pending', false);
        await recordEvent(trx, service.id, 'cleanup_done', 'What was made on the node for this service was removed.');
      });
      cleaned++;
    } catch (error) {
      logger.warn({ err: error, service: service.id }, 'cleanup of a failed service could not start');
    }
  }
  return { cleaned, left: pending.length - cleaned };
}

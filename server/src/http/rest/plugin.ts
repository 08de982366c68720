// The token surface, /api/v1/… (spec 4.1, §5): Bearer tokens with a scope per route, from the
// token-auth plugin (plugins/token-auth.ts), and the token API's routes.

import type { FastifyInstance } from 'fastify';
import type { Deps } from '../../core/deps.ts';
import { useFastSerializer } from '../plugins/serializer.ts';
import { tokenAuth } from '../plugins/token-auth.ts';
import { emptyBodyAsObject } from '../plugins/validation.ts';
import { accountRoutes } from './account.routes.ts';
import { billingRoutes } from './billing.routes.ts';
import { catalogRoutes } from './catalog.routes.ts';
import { instanceRoutes } from './instances.routes.ts';
import { webhookListRoutes } from './webhooks.routes.ts';

export async function restSurface(app: FastifyInstance, { deps }: { deps: Deps }): Promise<void> {
  useFastSerializer(app);
  await app.register(tokenAuth, { deps });

  emptyBodyAsObject(app);

  await app.register(accountRoutes, { deps });
  await app.register(catalogRoutes, { deps });
  await app.register(instanceRoutes, { deps });
  await app.register(billingRoutes, { deps });
  await app.register(webhookListRoutes, { deps });
}

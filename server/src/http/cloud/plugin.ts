// The second token surface, {ALT_BASE_PATH}/v1/… (spec 4.12, CONTRACT §9): KVM and bare-metal
// instances, their power and snapshots, SSH keys and the catalog a deploy needs, over the same
// core, products and `svc_` tokens as /api/v1. Token auth (plugins/token-auth.ts) gives it the
// same scopes, the per-token limit of 600 a minute (one count across both surfaces), the token
// envelope and the request log: every call of a token holder under the prefix is logged,
// unknown paths included (server.ts).

import type { FastifyInstance } from 'fastify';
import type { Deps } from '../../core/deps.ts';
import { useFastSerializer } from '../plugins/serializer.ts';
import { tokenAuth } from '../plugins/token-auth.ts';
import { emptyBodyAsObject } from '../plugins/validation.ts';
import { cloudCatalogRoutes } from './catalog.routes.ts';
import { cloudInstanceRoutes } from './instances.routes.ts';
import { cloudRdnsRoutes } from './rdns.routes.ts';
import { cloudSnapshotRoutes } from './snapshots.routes.ts';
import { cloudSshKeyRoutes } from './ssh-keys.routes.ts';

export async function cloudSurface(app: FastifyInstance, { deps }: { deps: Deps }): Promise<void> {
  useFastSerializer(app);
  await app.register(tokenAuth, { deps });
  emptyBodyAsObject(app);
  await app.register(cloudInstanceRoutes, { deps });
  await app.register(cloudSnapshotRoutes, { deps });
  await app.register(cloudRdnsRoutes, { deps });
  await app.register(cloudSshKeyRoutes, { deps });
  await app.register(cloudCatalogRoutes, { deps });
}

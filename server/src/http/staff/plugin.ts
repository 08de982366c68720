// The staff surface, /api/v1/staff/… (CONTRACT §14): the API of the staff console, with its own
// cookie (STAFFSESSID), CSRF tokens and session rules (./access.ts), and every route declared in
// the route table (./route-table.ts) with the least role that may use it. Errors answer in the
// session surface's envelope (CONTRACT §2). docs/STAFF.md says how to add a route.

import type { FastifyInstance } from 'fastify';
import type { Deps } from '../../core/deps.ts';
import { useFastSerializer } from '../plugins/serializer.ts';
import { staffAccess } from './access.ts';
import { staffAccountRoutes } from './accounts.routes.ts';
import { staffAuditRoutes } from './audit.routes.ts';
import { staffAuthRoutes } from './auth.routes.ts';
import { staffCatalogRoutes } from './catalog.routes.ts';
import { staffDepositProofRoutes } from './deposit-proof.routes.ts';
import { staffDepositRoutes } from './deposits.routes.ts';
import { staffInfraRoutes } from './infra.routes.ts';
import { staffInvoiceRoutes } from './invoices.routes.ts';
import { staffOpsRoutes } from './ops.routes.ts';
import { staffReconcileRoutes } from './reconcile.routes.ts';
import { staffServiceRoutes } from './services.routes.ts';
import { staffSettingsRoutes } from './settings.routes.ts';
import { staffDirectoryRoutes } from './staff.routes.ts';

export async function staffSurface(app: FastifyInstance, { deps }: { deps: Deps }): Promise<void> {
  useFastSerializer(app);
  await app.register(staffAccess, { deps });
  await app.register(staffAuthRoutes, { deps });
  await app.register(staffAuditRoutes, { deps });
  await app.register(staffDirectoryRoutes, { deps });
  await app.register(staffDepositRoutes, { deps });
  await app.register(staffDepositProofRoutes, { deps });
  await app.register(staffOpsRoutes, { deps });
  await app.register(staffAccountRoutes, { deps });
  await app.register(staffServiceRoutes, { deps });
  await app.register(staffInfraRoutes, { deps });
  await app.register(staffInvoiceRoutes, { deps });
  await app.register(staffReconcileRoutes, { deps });
  await app.register(staffCatalogRoutes, { deps });
  await app.register(staffSettingsRoutes, { deps });
}

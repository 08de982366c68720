// The session surface, /api/v1/client/…: cookie sessions (SVCSESSID) and CSRF (spec §5), from
// the session-auth plugin (plugins/session-auth.ts), and the client API's routes.

import type { FastifyInstance } from 'fastify';
import type { Deps } from '../../core/deps.ts';
import { sessionRoutes } from '../../core/product-kit/actions.ts';
import { useFastSerializer } from '../plugins/serializer.ts';
import { sessionAuth } from '../plugins/session-auth.ts';
import { accountRoutes } from './account.routes.ts';
import { authRoutes } from './auth.routes.ts';
import { billingProfileRoutes } from './billing-profile.routes.ts';
import { catalogRoutes } from './catalog.routes.ts';
import { invoiceRoutes } from './invoices.routes.ts';
import { notificationRoutes } from './notifications.routes.ts';
import { orderRoutes } from './orders.routes.ts';
import { panelRoutes } from './panel.routes.ts';
import { passkeyRoutes } from './passkey.routes.ts';
import { serviceControlRoutes } from './service-control.routes.ts';
import { serviceRoutes } from './services.routes.ts';
import { sessionListRoutes } from './sessions.routes.ts';
import { sshKeyRoutes } from './ssh-keys.routes.ts';
import { tokenRoutes } from './tokens.routes.ts';
import { twoFactorRoutes } from './two-factor.routes.ts';
import { walletRoutes } from './wallet.routes.ts';

export async function clientSurface(app: FastifyInstance, { deps }: { deps: Deps }): Promise<void> {
  useFastSerializer(app);
  await app.register(sessionAuth, { deps });
  await app.register(authRoutes, { deps, prefix: '/auth' });
  await app.register(passkeyRoutes, { deps, prefix: '/auth' });
  await app.register(accountRoutes, { deps });
  await app.register(twoFactorRoutes, { deps });
  await app.register(sessionListRoutes, { deps });
  await app.register(billingProfileRoutes, { deps });
  await app.register(catalogRoutes, { deps });
  await app.register(walletRoutes, { deps });
  await app.register(invoiceRoutes, { deps });
  await app.register(notificationRoutes, { deps });
  await app.register(orderRoutes, { deps });
  await app.register(serviceRoutes, { deps });
  await app.register(serviceControlRoutes, { deps });
  // Each product with management actions has its route, /api/v1/client/<type>/ (CONTRACT §6).
  for (const product of deps.products.all) {
    if (product.actions.some((a) => sessionRoutes(a).includes('panel'))) {
      await app.register(panelRoutes(product, `/${product.type}/`), { deps });
    }
  }
  await app.register(tokenRoutes, { deps });
  await app.register(sshKeyRoutes, { deps });
}

// The core's deploy use case (core/orders/deploy.ts) wired to the app's dependencies, for the
// surfaces that place orders.

import type { Deps } from '../core/deps.ts';
import type { DeployDeps } from '../core/orders/deploy.ts';

export function deployDeps(deps: Deps): DeployDeps {
  return { db: deps.database.db, limits: deps.limits, orders: deps.orders };
}

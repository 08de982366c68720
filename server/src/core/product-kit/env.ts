// What a product's jobs work with: the database, the drivers of the nodes, the clock, the bus,
// the secret key, the installation and the few settings a product reads. Narrow on purpose: a
// product reaches nothing else of the platform (not the order service, not billing, not another
// product), so what a product can touch is visible here.

import type { Kysely } from 'kysely';
import type { Logger } from 'pino';
import type { DB } from '../../db/tables.ts';
import type { DriverTiming } from '../../upstreams/driver.ts';
import type { Bus } from '../bus.ts';
import type { Drivers } from '../services/drivers.ts';
import type { Installation } from '../system/installation.ts';
import type { Clock } from '../time.ts';

export interface ProductEnv {
  db: Kysely<DB>;
  /** The driver of a node, by the role the product needs of it. */
  drivers: Drivers;
  clock: Clock;
  bus: Bus;
  /** Seals what a product stores secretly (credentials). Never sent anywhere. */
  secretKey: Buffer;
  /** The deadlines the drivers were built with (steps that poll a node use them too). */
  timing: DriverTiming;
  /** The namespace of the external ids a product creates upstream. */
  installation: Installation;
  /** The absolute base URL clients reach us at (PUBLIC_URL). */
  publicUrl: string;
  /** How long a bare-metal install may take, in seconds (BAREMETAL_INSTALL_TIMEOUT). */
  baremetalInstallTimeoutSeconds: number;
  logger: Logger;
}

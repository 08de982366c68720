// What a game product's stored JSON holds: its plans' `specs` (checked when staff add a plan,
// core/catalog/specs.ts), its services' `config` and `external`; read through these schemas
// (core/product-kit/data.ts) instead of cast. Config and external keep every key a row of an
// older version may lack optional, and take keys they do not name: other parts of the platform
// set their own (the worker's `cleanup_pending`).

import { type Static, Type } from 'typebox';
import { intSpec, orderedConfig, orNull, slugSpec } from '../../product-kit/data.ts';

export const DEFAULT_DATABASES = 1;
export const DEFAULT_BACKUPS = 2;

export const gameSpecs = Type.Object(
  {
    game: slugSpec(),
    ram_mb: intSpec(512, 65_536),
    cpu_percent: intSpec(25, 1600),
    disk_gb: intSpec(1, 1024),
    slots: intSpec(1, 1000),
    databases: Type.Optional(Type.Integer({ minimum: 0, maximum: 50, default: DEFAULT_DATABASES })),
    backups: Type.Optional(Type.Integer({ minimum: 0, maximum: 50, default: DEFAULT_BACKUPS })),
  },
  { additionalProperties: false },
);
export type GameSpecs = Static<typeof gameSpecs>;

/**
 * A game service's `services.config`: what its order stored (./index.ts serviceConfig, with the
 * keys every order adds: core/orders/order.service.ts), the name a rename gave the server
 * (./actions-settings.ts), and what the worker marks (`cleanup_pending`, worker/cleanup.ts).
 */
export const gameConfig = Type.Object({
  ...orderedConfig,
  /** The server's name on the panel once renamed; the service's label until then. */
  server_name: Type.Optional(orNull(Type.String())),
});
export type GameConfig = Static<typeof gameConfig>;

/**
 * A game service's `services.external`: the panel server provisioning made (./provision.ts), with
 * the name it carries and its owner's panel user id (both absent on a row of an older version).
 */
export const gameExternal = Type.Object({
  id: Type.Number(),
  uuid: Type.String(),
  identifier: Type.String(),
  name: Type.Optional(Type.String()),
  user_id: Type.Optional(Type.Number()),
});
export type GameExternal = Static<typeof gameExternal>;

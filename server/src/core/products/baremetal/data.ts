// What a baremetal product's stored JSON holds: its plans' `specs` (checked when staff add a plan,
// core/catalog/specs.ts), its services' `config` and `external`; read through these schemas
// (core/product-kit/data.ts) instead of cast. Config and external keep every key a row of an
// older version may lack optional, and take keys they do not name: other parts of the platform
// set their own (the worker's `cleanup_pending`).

import { type Static, Type } from 'typebox';
import { intSpec, numberSpec, orderedConfig, orNull } from '../../product-kit/data.ts';

export const baremetalSpecs = Type.Object(
  {
    cpus: intSpec(1, 16),
    ram_gb: intSpec(1, 65_536),
    disk_gb: intSpec(10, 1_000_000),
    bandwidth_tb: numberSpec(0.1, 1000),
  },
  { additionalProperties: false },
);
export type BaremetalSpecs = Static<typeof baremetalSpecs>;

/**
 * A server's `services.config`: what its order stored (./order.ts serviceConfig, with the keys
 * every order adds: core/orders/order.service.ts) and what the worker marks (`cleanup_pending`,
 * worker/cleanup.ts).
 */
export const baremetalConfig = Type.Object({
  ...orderedConfig,
  /** The plan's specs when the server was ordered: its disk is the size status reports (./live.ts). */
  specs: Type.Optional(Type.Object({ disk_gb: Type.Optional(Type.Number()) })),
});
export type BaremetalConfig = Static<typeof baremetalConfig>;

/**
 * A server's `services.external`: the machine provisioning claimed (./machine.ts MachineRef,
 * ./provision.ts). What a row of an older version may lack is optional.
 */
export const baremetalExternal = Type.Object({
  node: Type.String(),
  serial: Type.String(),
  system: Type.Optional(Type.String()),
  install_started_at: Type.Optional(orNull(Type.String())),
  macs: Type.Optional(Type.Array(Type.String())),
});

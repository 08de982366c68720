// What a vps product's stored JSON holds: its plans' `specs` (checked when staff add a plan,
// core/catalog/specs.ts), its services' `config` and `external`, and the params of the jobs it
// runs; read through these schemas (core/product-kit/data.ts) instead of cast. Config and
// external keep every key a row of an older version may lack optional, and take keys they do
// not name: other parts of the platform set their own (the worker's `cleanup_pending`).

import { type Static, Type } from 'typebox';
import { intSpec, numberSpec, orderedConfig } from '../../product-kit/data.ts';

/** Snapshots a server keeps when its plan does not say. */
export const DEFAULT_SNAPSHOT_LIMIT = 3;

export const vpsSpecs = Type.Object(
  {
    vcpu: intSpec(1, 64),
    ram_mb: intSpec(512, 524_288),
    disk_gb: intSpec(10, 4096),
    bandwidth_tb: numberSpec(0.1, 100),
    // How many snapshots a server of the plan keeps (./snapshots.ts).
    snapshots: Type.Optional(Type.Integer({ minimum: 0, maximum: 100, default: DEFAULT_SNAPSHOT_LIMIT })),
    // Scheduled backups, a paid add-on: its price in paise a month (./backups.ts); absent: not offered.
    backup_price: Type.Optional(Type.Integer({ minimum: 1, maximum: 10_000_000 })),
  },
  { additionalProperties: false },
);
export type VpsSpecs = Static<typeof vpsSpecs>;

/**
 * A server's `services.config`: what its order stored (./order.ts serviceConfig, with the keys
 * every order adds: core/orders/order.service.ts), the OS a reinstall put on it (./provision.ts),
 * and what the worker marks (`cleanup_pending`, worker/cleanup.ts).
 */
export const vpsConfig = Type.Object({
  ...orderedConfig,
});
export type VpsConfig = Static<typeof vpsConfig>;

/** A server's `services.external`: its VM as provisioning and reinstalling recorded it (./provision.ts). */
export const vpsExternal = Type.Object({
  node: Type.String({ minLength: 1 }),
  vmid: Type.Number(),
  name: Type.String({ minLength: 1 }),
  /** Absent on a VM recorded before its MAC addresses were. */
  macs: Type.Optional(Type.Array(Type.String())),
});

/** A reinstall job's params (./actions.ts): the OS template to put on. */
export const reinstallParams = Type.Object({ os: Type.String() });

/** A snapshot job's params (./snapshots.ts): the change, the snapshot's name, a new one's description. */
export const snapshotParams = Type.Object({
  action: Type.String(),
  name: Type.String(),
  description: Type.Optional(Type.String()),
});

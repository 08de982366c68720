// What a vps product's stored JSON holds: its plans' `specs` (checked when staff add a plan,
// core/catalog/specs.ts), read through these schemas (core/product-kit/data.ts) instead of cast.

import { type Static, Type } from 'typebox';
import { intSpec, numberSpec } from '../../product-kit/data.ts';

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
  },
  { additionalProperties: false },
);
export type VpsSpecs = Static<typeof vpsSpecs>;

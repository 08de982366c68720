// What a baremetal product's stored JSON holds: its plans' `specs` (checked when staff add a plan,
// core/catalog/specs.ts), read through these schemas (core/product-kit/data.ts) instead of cast.

import { type Static, Type } from 'typebox';
import { intSpec, numberSpec } from '../../product-kit/data.ts';

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

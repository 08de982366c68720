// What a web product's stored JSON holds: its plans' `specs` (checked when staff add a plan,
// core/catalog/specs.ts), read through these schemas (core/product-kit/data.ts) instead of cast.

import { type Static, Type } from 'typebox';
import { intSpec } from '../../product-kit/data.ts';

export const webSpecs = Type.Object(
  {
    sites: intSpec(1, 1000),
    disk_gb: intSpec(1, 1024),
    mailboxes: intSpec(0, 10_000),
    databases: intSpec(0, 1000),
  },
  { additionalProperties: false },
);
export type WebSpecs = Static<typeof webSpecs>;

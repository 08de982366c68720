// What a game product's stored JSON holds: its plans' `specs` (checked when staff add a plan,
// core/catalog/specs.ts), read through these schemas (core/product-kit/data.ts) instead of cast.

import { type Static, Type } from 'typebox';
import { intSpec, slugSpec } from '../../product-kit/data.ts';

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

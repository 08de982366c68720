// What services are built from, beside plans and nodes (../tables.ts): locations and their IPv4
// addresses, OS templates and games.

import type { ColumnType, Generated, Selectable } from 'kysely';
import type { CreatedAt, NullableTimestamp } from './columns.ts';

export interface LocationsTable {
  id: Generated<number>;
  code: string;
  name: string;
  city: string;
  country: ColumnType<string, string | undefined, string>;
  active: ColumnType<boolean, boolean | undefined, boolean>;
  created_at: CreatedAt;
}

export interface Ipv4AddressesTable {
  id: Generated<number>;
  location_id: number;
  address: string;
  prefix: number;
  gateway: string;
  status: ColumnType<'free' | 'allocated' | 'reserved', 'free' | 'allocated' | 'reserved' | undefined>;
  service_id: number | null;
  allocated_at: NullableTimestamp;
  created_at: CreatedAt;
}

export interface OsTemplatesTable {
  id: Generated<number>;
  slug: string;
  name: string;
  family: string;
  version: string;
  template_vmid: number;
  min_disk_gb: ColumnType<number, number | undefined, number>;
  /** The install image a bare-metal machine boots as virtual media (http(s)); null: not for bare metal. */
  image_url: ColumnType<string | null, string | null | undefined, string | null>;
  active: ColumnType<boolean, boolean | undefined, boolean>;
  created_at: CreatedAt;
}

export interface GamesTable {
  id: Generated<number>;
  slug: string;
  name: string;
  nest_id: number;
  egg_id: number;
  docker_image: string;
  startup: string;
  environment: ColumnType<Record<string, string>, string | undefined, string>;
  active: ColumnType<boolean, boolean | undefined, boolean>;
  created_at: CreatedAt;
}

export type Location = Selectable<LocationsTable>;
export type OsTemplate = Selectable<OsTemplatesTable>;
export type Game = Selectable<GamesTable>;

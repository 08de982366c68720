// Every migration, in order. Names sort by their number; never rename or edit a landed one.
import type { Migration } from 'kysely';
import * as m0001 from './0001_extensions.ts';
import * as m0002 from './0002_accounts.ts';

export const migrations: Record<string, Migration> = {
  '0001_extensions': m0001,
  '0002_accounts': m0002,
};

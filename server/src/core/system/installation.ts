// This installation's id (security review 3, T3-M2): 8 random base32 characters made at first
// start and kept in the database, so a restore keeps it and a fresh database (a staging copy, a
// second installation on the same nodes) gets its own. Every external id the platform creates on
// an upstream panel carries it (`externalName`), so one installation never finds another's
// servers, users or VMs by name.

import { randomInt } from 'node:crypto';
import type { Kysely } from 'kysely';
import type { DB } from '../../db/tables.ts';

const ALPHABET = 'abcdefghijklmnopqrstuvwxyz234567';

export interface Installation {
  /** The id in force (changes only through `rotate`, which the admin command calls). */
  readonly id: string;
}

function newId(): string {
  let id = '';
  for (let i = 0; i < 8; i++) id += ALPHABET[randomInt(ALPHABET.length)];
  return id;
}

/** The installation's id, made on first call (concurrent first starts agree on one). */
export async function loadInstallationId(db: Kysely<DB>): Promise<string> {
  await db
    .insertInto('installation')
    .values({ id: newId() })
    .onConflict((oc) => oc.column('singleton').doNothing())
    .execute();
  const row = await db.selectFrom('installation').select('id').executeTakeFirstOrThrow();
  return row.id;
}

/** Give the installation a new id (a staging copy of production must not act as it). */
export async function rotateInstallationId(db: Kysely<DB>, now: Date): Promise<{ previous: string; id: string }> {
  const previous = await loadInstallationId(db);
  const id = newId();
  await db.updateTable('installation').set({ id, rotated_at: now }).execute();
  return { previous, id };
}

/**
 * The platform's name for something it creates on an upstream (`hp-<installation>-<kind>-<n>`):
 * `svc` for a service's server or VM, `acct` for an account's panel user.
 */
export function externalName(installationId: string, kind: 'svc' | 'acct', id: number): string {
  return `hp-${installationId}-${kind}-${id}`;
}

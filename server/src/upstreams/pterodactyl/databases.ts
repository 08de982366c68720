// A server's databases through the client API (upstreams.md §1.6). A password comes only with
// a create or a rotation (in `relationships.password`); the list never asks for them.

import type { GameDatabase, GameServerRef } from '../game-panel.ts';
import type { PterodactylClient } from './client.ts';
import { toDatabase } from './mapping.ts';
import { serverPath } from './servers.ts';

type Attrs = Record<string, unknown>;

const databases = (ref: GameServerRef) => `${serverPath(ref)}/databases`;

export async function listDatabases(client: PterodactylClient, ref: GameServerRef): Promise<GameDatabase[]> {
  return (await client.list<Attrs>('client', databases(ref))).items.map(toDatabase);
}

export async function createDatabase(
  client: PterodactylClient,
  ref: GameServerRef,
  input: { database: string; remote: string },
): Promise<GameDatabase> {
  return toDatabase(
    await client.item<Attrs>('client', 'POST', databases(ref), {
      json: { database: input.database, remote: input.remote },
    }),
  );
}

export async function deleteDatabase(client: PterodactylClient, ref: GameServerRef, id: string): Promise<void> {
  await client.json('client', 'DELETE', `${databases(ref)}/${encodeURIComponent(id)}`);
}

export async function rotateDatabasePassword(
  client: PterodactylClient,
  ref: GameServerRef,
  id: string,
): Promise<GameDatabase> {
  return toDatabase(
    await client.item<Attrs>('client', 'POST', `${databases(ref)}/${encodeURIComponent(id)}/rotate-password`),
  );
}

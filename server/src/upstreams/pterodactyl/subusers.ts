// A server's subusers through the client API (upstreams.md §1.6): invited by e-mail (the panel
// creates a user for an unknown address), addressed by the user's uuid afterwards.

import type { GameServerRef, GameSubuser } from '../game-panel.ts';
import type { PterodactylClient } from './client.ts';
import { toSubuser } from './mapping.ts';
import { serverPath } from './servers.ts';

type Attrs = Record<string, unknown>;

const users = (ref: GameServerRef) => `${serverPath(ref)}/users`;

export async function listSubusers(client: PterodactylClient, ref: GameServerRef): Promise<GameSubuser[]> {
  return (await client.list<Attrs>('client', users(ref))).items.map(toSubuser);
}

export async function inviteSubuser(
  client: PterodactylClient,
  ref: GameServerRef,
  email: string,
  permissions: string[],
): Promise<GameSubuser> {
  return toSubuser(await client.item<Attrs>('client', 'POST', users(ref), { json: { email, permissions } }));
}

export async function updateSubuser(
  client: PterodactylClient,
  ref: GameServerRef,
  uuid: string,
  permissions: string[],
): Promise<GameSubuser> {
  return toSubuser(
    await client.item<Attrs>('client', 'POST', `${users(ref)}/${encodeURIComponent(uuid)}`, { json: { permissions } }),
  );
}

export async function removeSubuser(client: PterodactylClient, ref: GameServerRef, uuid: string): Promise<void> {
  await client.json('client', 'DELETE', `${users(ref)}/${encodeURIComponent(uuid)}`);
}

// A server's backups through the client API (upstreams.md §1.6). The list is paged (at most 50
// a page) and every page is read; `meta.backup_count` is the panel's count of backups that did
// not fail, the number its backup limit is checked against.

import type { GameBackup, GameServerRef } from '../game-panel.ts';
import type { PterodactylClient } from './client.ts';
import { toBackup } from './mapping.ts';
import { serverPath } from './servers.ts';

type Attrs = Record<string, unknown>;

const MAX_PAGES = 20;
const backups = (ref: GameServerRef) => `${serverPath(ref)}/backups`;

export async function listBackups(
  client: PterodactylClient,
  ref: GameServerRef,
): Promise<{ backups: GameBackup[]; count: number }> {
  const found: GameBackup[] = [];
  let count: number | null = null;
  for (let page = 1; page <= MAX_PAGES; page++) {
    const listed = await client.list<Attrs>('client', backups(ref), { per_page: 50, page });
    found.push(...listed.items.map(toBackup));
    if (count === null && typeof listed.meta.backup_count === 'number') count = listed.meta.backup_count;
    if (page >= listed.pagination.totalPages || listed.items.length === 0) break;
  }
  return { backups: found, count: count ?? found.filter((b) => b.isSuccessful || b.completedAt === null).length };
}

export async function createBackup(
  client: PterodactylClient,
  ref: GameServerRef,
  input: { name: string | null; ignored: string[]; locked: boolean },
): Promise<GameBackup> {
  return toBackup(
    await client.item<Attrs>('client', 'POST', backups(ref), {
      json: {
        ...(input.name === null ? {} : { name: input.name }),
        ignored: input.ignored.join('\n'),
        is_locked: input.locked,
      },
    }),
  );
}

export async function restoreBackup(
  client: PterodactylClient,
  ref: GameServerRef,
  uuid: string,
  truncate: boolean,
): Promise<void> {
  await client.json('client', 'POST', `${backups(ref)}/${encodeURIComponent(uuid)}/restore`, { json: { truncate } });
}

export async function deleteBackup(client: PterodactylClient, ref: GameServerRef, uuid: string): Promise<void> {
  await client.json('client', 'DELETE', `${backups(ref)}/${encodeURIComponent(uuid)}`);
}

export async function backupDownloadUrl(client: PterodactylClient, ref: GameServerRef, uuid: string): Promise<string> {
  const attrs = await client.item<Attrs>('client', 'GET', `${backups(ref)}/${encodeURIComponent(uuid)}/download`);
  if (typeof attrs.url !== 'string' || !/^https?:\/\//.test(attrs.url)) throw client.garbled('a signed URL');
  return attrs.url;
}

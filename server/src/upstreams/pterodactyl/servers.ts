// The client API on one server (upstreams.md §1.6), with the client key of a root admin:
// overview, resources, activity, network, console credentials, command and power, startup
// variables, and the server's name. Every path starts at the server's 8-char identifier.

import { UpstreamError } from '../errors.ts';
import type {
  GameActivity,
  GameAllocation,
  GameConsoleCredentials,
  GameResources,
  GameServerDetails,
  GameServerRef,
  GameStartup,
  GameVariable,
  Page,
} from '../game-panel.ts';
import type { PterodactylClient } from './client.ts';
import { toActivity, toAllocation, toDetails, toResources, toStartup, toVariable } from './mapping.ts';

type Attrs = Record<string, unknown>;

/** `/servers/<identifier>` (the uuid also works on the panel, for a ref that lacks the short id). */
export function serverPath(ref: GameServerRef): string {
  return `/servers/${encodeURIComponent(ref.identifier || ref.uuid)}`;
}

export async function details(client: PterodactylClient, ref: GameServerRef): Promise<GameServerDetails> {
  return toDetails(await client.item<Attrs>('client', 'GET', serverPath(ref)));
}

export async function resources(client: PterodactylClient, ref: GameServerRef): Promise<GameResources> {
  return toResources(await client.item<Attrs>('client', 'GET', `${serverPath(ref)}/resources`));
}

export async function activity(
  client: PterodactylClient,
  ref: GameServerRef,
  page: number,
  perPage: number,
): Promise<Page<GameActivity>> {
  // Newest first is the panel's default order.
  const listed = await client.list<Attrs>('client', `${serverPath(ref)}/activity`, {
    page,
    per_page: perPage,
  });
  return {
    items: listed.items.map(toActivity),
    total: listed.pagination.total,
    page: listed.pagination.currentPage,
    perPage: listed.pagination.perPage,
    totalPages: listed.pagination.totalPages,
  };
}

export async function allocations(client: PterodactylClient, ref: GameServerRef): Promise<GameAllocation[]> {
  return (await client.list<Attrs>('client', `${serverPath(ref)}/network/allocations`)).items.map(toAllocation);
}

/** `GET /websocket` is not enveloped: `{data: {token, socket}}`. */
export async function consoleCredentials(
  client: PterodactylClient,
  ref: GameServerRef,
): Promise<GameConsoleCredentials> {
  const body = await client.json('client', 'GET', `${serverPath(ref)}/websocket`);
  const data = typeof body === 'object' && body !== null ? (body as { data?: unknown }).data : undefined;
  const { token, socket } = (typeof data === 'object' && data !== null ? data : {}) as {
    token?: unknown;
    socket?: unknown;
  };
  if (typeof token !== 'string' || !token || typeof socket !== 'string' || !/^wss?:\/\//.test(socket)) {
    throw new UpstreamError('protocol', `${client.label}: answered websocket credentials without a token and socket`, {
      retryable: false,
    });
  }
  return { token, socket };
}

export async function command(client: PterodactylClient, ref: GameServerRef, line: string): Promise<void> {
  await client.json('client', 'POST', `${serverPath(ref)}/command`, { json: { command: line } });
}

export async function power(
  client: PterodactylClient,
  ref: GameServerRef,
  signal: 'start' | 'stop' | 'restart' | 'kill',
): Promise<void> {
  await client.json('client', 'POST', `${serverPath(ref)}/power`, { json: { signal } });
}

export async function startup(client: PterodactylClient, ref: GameServerRef): Promise<GameStartup> {
  const listed = await client.list<Attrs>('client', `${serverPath(ref)}/startup`);
  return toStartup(listed.items, listed.meta);
}

export async function setVariable(
  client: PterodactylClient,
  ref: GameServerRef,
  key: string,
  value: string,
): Promise<GameVariable> {
  return toVariable(
    await client.item<Attrs>('client', 'PUT', `${serverPath(ref)}/startup/variable`, { json: { key, value } }),
  );
}

/** A null description leaves the panel's as it is (the panel keeps it when the field is absent). */
export async function rename(
  client: PterodactylClient,
  ref: GameServerRef,
  name: string,
  description: string | null,
): Promise<void> {
  await client.json('client', 'POST', `${serverPath(ref)}/settings/rename`, {
    json: description === null ? { name } : { name, description },
  });
}

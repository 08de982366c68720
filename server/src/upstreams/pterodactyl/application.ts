// Provisioning through the panel's application API (upstreams.md §1.9) with the ptla_ key:
// panel users and servers, found again by the platform's external ids so that a job run again
// after a crash or a lost answer continues what it started instead of creating a second one.
// Those ids carry the installation; whether a server found by one is the caller's to take is
// the caller's decision (core/product-kit/extids.ts): a found server is answered unchanged.

import { UpstreamError } from '../errors.ts';
import type { GameServerInfo, GameServerRef, GameServerSpec, PanelUser, PanelUserSpec } from '../game-panel.ts';
import type { PterodactylClient } from './client.ts';
import { related, toServerInfo } from './mapping.ts';

type Attrs = Record<string, unknown>;

/** Filters of the application API match partially (`LIKE %x%`): only an exact external id counts. */
async function byExternalId(client: PterodactylClient, path: string, externalId: string): Promise<Attrs | null> {
  const found = await client.all<Attrs>('application', path, { 'filter[external_id]': externalId, per_page: 100 });
  // Several carrying the id cannot happen on a panel (the column is unique); the lowest id wins.
  const exact = found.filter((a) => a.external_id === externalId).sort((x, y) => Number(x.id) - Number(y.id));
  return exact[0] ?? null;
}

const isRejected = (error: unknown): error is UpstreamError =>
  error instanceof UpstreamError && error.kind === 'rejected' && error.status === 422;

export async function ensureUser(client: PterodactylClient, spec: PanelUserSpec): Promise<{ id: number }> {
  client.check();
  const existing = await byExternalId(client, '/users', spec.externalId);
  if (existing) return { id: Number(existing.id) };
  try {
    const created = await client.item<Attrs>('application', 'POST', '/users', {
      json: {
        external_id: spec.externalId,
        email: spec.email,
        username: spec.username,
        first_name: spec.firstName,
        last_name: spec.lastName,
      },
    });
    return { id: Number(created.id) };
  } catch (error) {
    // "has already been taken": our own earlier create whose answer was lost, or someone else's user.
    if (!isRejected(error)) throw error;
    const again = await byExternalId(client, '/users', spec.externalId);
    if (again) return { id: Number(again.id) };
    throw error;
  }
}

export async function findServer(client: PterodactylClient, externalId: string): Promise<GameServerInfo | null> {
  client.check();
  const found = await byExternalId(client, '/servers', externalId);
  return found ? toServerInfo(found) : null;
}

/** The first allocation of the panel node no server holds (`filter[server_id]=` lists only those). */
async function freeAllocation(client: PterodactylClient): Promise<number> {
  const node = client.config.panelNode;
  const maxPages = 20;
  for (let page = 1; page <= maxPages; page++) {
    const listed = await client.list<Attrs>('application', `/nodes/${node}/allocations`, {
      'filter[server_id]': '',
      per_page: 100,
      page,
    });
    const free = listed.items.find((a) => a.assigned !== true && a.assigned !== 1);
    if (free) return Number(free.id);
    if (page >= listed.pagination.totalPages || listed.items.length === 0) break;
  }
  throw new UpstreamError('rejected', `${client.label}: node ${node} has no free allocation`, {
    retryable: false,
    detail: 'no free allocation',
  });
}

/**
 * The egg's variables with their defaults under what the caller gives: the panel requires every
 * variable its rules mark required (a Valheim server name, a Bedrock game mode), and a catalog
 * names only the ones it sets.
 */
async function environmentOf(client: PterodactylClient, spec: GameServerSpec): Promise<Record<string, string>> {
  const egg = await client.item<Attrs>('application', 'GET', `/nests/${spec.nestId}/eggs/${spec.eggId}`, {
    query: { include: 'variables' },
  });
  const environment: Record<string, string> = {};
  for (const variable of related(egg, 'variables')) {
    const key = variable.env_variable;
    if (typeof key === 'string') environment[key] = String(variable.default_value ?? '');
  }
  return { ...environment, ...spec.environment };
}

/** How often a server is created again on another free allocation when a concurrent create took the one it was given. */
const ALLOCATION_TRIES = 8;

/** The panel refused the allocation it was given (another server took it since the listing). */
const allocationTaken = (error: UpstreamError): boolean => error.fields?.['allocation.default'] !== undefined;

export async function createServer(client: PterodactylClient, spec: GameServerSpec): Promise<GameServerInfo> {
  client.check();
  const existing = await findServer(client, spec.externalId);
  if (existing) return existing;
  const environment = await environmentOf(client, spec);
  for (let tries = 1; ; tries++) {
    const allocation = await freeAllocation(client);
    try {
      const created = await client.item<Attrs>('application', 'POST', '/servers', {
        json: {
          external_id: spec.externalId,
          name: spec.name,
          description: spec.description,
          user: spec.userId,
          egg: spec.eggId,
          docker_image: spec.dockerImage,
          startup: spec.startup,
          environment,
          limits: {
            memory: spec.limits.memoryMb,
            swap: spec.limits.swapMb,
            disk: spec.limits.diskMb,
            io: spec.limits.io,
            cpu: spec.limits.cpuPercent,
          },
          feature_limits: {
            databases: spec.featureLimits.databases,
            allocations: spec.featureLimits.allocations,
            backups: spec.featureLimits.backups,
          },
          allocation: { default: allocation },
          start_on_completion: false,
        },
      });
      return toServerInfo(created);
    } catch (error) {
      // The external id (our lost answer) or the allocation (taken meanwhile) may be what was refused.
      if (!isRejected(error)) throw error;
      const again = await findServer(client, spec.externalId);
      if (again) return again;
      // Two servers created at once on the node were given the same first free allocation (the
      // kill drills order several at once): the one refused takes the next free one.
      if (allocationTaken(error) && tries < ALLOCATION_TRIES) continue;
      throw error;
    }
  }
}

/** The server at `ref.id`, which must still be the one of `ref` (else `not_found`). */
export async function server(client: PterodactylClient, ref: GameServerRef): Promise<GameServerInfo> {
  client.check();
  const info = toServerInfo(await client.item<Attrs>('application', 'GET', `/servers/${ref.id}`));
  if (ref.uuid && info.uuid !== ref.uuid) {
    throw new UpstreamError('not_found', `${client.label}: server ${ref.id} is no longer ${ref.identifier}`, {
      retryable: false,
    });
  }
  return info;
}

export async function serverAction(
  client: PterodactylClient,
  ref: GameServerRef,
  action: 'suspend' | 'unsuspend' | 'reinstall',
): Promise<void> {
  await server(client, ref);
  await client.json('application', 'POST', `/servers/${ref.id}/${action}`);
}

export async function deleteServer(client: PterodactylClient, ref: GameServerRef): Promise<void> {
  client.check();
  try {
    // Never delete a server that is not (any more) the one of `ref`.
    await server(client, ref);
    await client.json('application', 'DELETE', `/servers/${ref.id}/force`);
  } catch (error) {
    if (error instanceof UpstreamError && error.kind === 'not_found') return;
    throw error;
  }
}

/** The panel node exists and the application key may read it; the client key is a root admin's. */
export async function ping(client: PterodactylClient): Promise<{ version: string }> {
  client.check();
  try {
    await client.item<Attrs>('application', 'GET', `/nodes/${client.config.panelNode}`);
  } catch (error) {
    if (error instanceof UpstreamError && error.kind === 'not_found') {
      throw new UpstreamError('not_found', `${client.label}: panel node ${client.config.panelNode} does not exist`, {
        retryable: false,
        status: 404,
      });
    }
    throw error;
  }
  // The client key acts on every client's server only when its user is a root admin.
  const account = await client.item<Attrs>('client', 'GET', '/account');
  if (account.admin !== true) {
    throw new UpstreamError('forbidden', `${client.label}: the client API key's user is not a root admin`, {
      retryable: false,
    });
  }
  // Neither API states the panel's version; say so rather than guess.
  return { version: 'unknown (the panel API does not state its version)' };
}

/** The user that owns the server (the server's `user` attribute), read from the application API. */
export async function serverOwner(client: PterodactylClient, ref: GameServerRef): Promise<PanelUser> {
  client.check();
  const attrs = await client.item<Attrs>('application', 'GET', `/servers/${ref.id}`);
  if (ref.uuid && attrs.uuid !== ref.uuid) {
    throw new UpstreamError('not_found', `${client.label}: server ${ref.id} is no longer ${ref.identifier}`, {
      retryable: false,
    });
  }
  const user = await client.item<Attrs>('application', 'GET', `/users/${Number(attrs.user)}`);
  return {
    id: Number(user.id),
    username: String(user.username ?? ''),
    email: String(user.email ?? ''),
    externalId: typeof user.external_id === 'string' ? user.external_id : null,
    rootAdmin: user.root_admin === true || user.root_admin === 1,
  };
}

/** A new password for a panel user: the panel's update takes the user's other fields with it. */
export async function setUserPassword(client: PterodactylClient, userId: number, password: string): Promise<void> {
  client.check();
  const user = await client.item<Attrs>('application', 'GET', `/users/${userId}`);
  await client.item<Attrs>('application', 'PATCH', `/users/${userId}`, {
    json: {
      email: user.email,
      username: user.username,
      first_name: user.first_name,
      last_name: user.last_name,
      password,
    },
  });
}

// Finding the resources by following links from the service root, never by assuming member ids
// (`System.Embedded.1`, `1`, `Self` …): the system is the Systems collection's only member (or
// the one the node's settings name); its manager is the system's `Links.ManagedBy`; the virtual
// CD is the VirtualMedia member (the system's own collection on newer BMCs, else the manager's)
// whose `MediaTypes` include CD or DVD; the drives are those of the system's Storage members.
// What was found is kept for the driver's life; a 404 on a kept URI forgets it and looks again.

import { UpstreamError } from '../errors.ts';
import { idOf, isObject, type Json, type RedfishClient } from './client.ts';

/** Collection pages followed through `Members@odata.nextLink`. */
const MAX_PAGES = 20;

export interface Found {
  uri: string;
  body: Json;
}

/** The `@odata.id` of every member of a collection. */
export async function members(client: RedfishClient, collection: string, what: string): Promise<string[]> {
  const out: string[] = [];
  let next: string | null = collection;
  for (let page = 0; next !== null && page < MAX_PAGES; page++) {
    const body = await client.get(next, what);
    if (!Array.isArray(body.Members)) throw client.garbled(`a collection of ${what}`);
    for (const member of body.Members) {
      const id = idOf(member);
      if (id) out.push(id);
    }
    const link = body['Members@odata.nextLink'];
    next = typeof link === 'string' && link !== '' ? link : null;
  }
  return out;
}

/** The last path segment of a URI, decoded (a member's id as it appears in its `@odata.id`). */
function lastSegment(uri: string): string {
  const parts = uri.replace(/\/+$/, '').split('/');
  try {
    return decodeURIComponent(parts[parts.length - 1] ?? '');
  } catch {
    return parts[parts.length - 1] ?? '';
  }
}

async function findSystemUri(client: RedfishClient): Promise<string> {
  const root = await client.root();
  const collection = idOf(root.Systems);
  if (!collection) throw client.garbled('a service root with Systems');
  const uris = await members(client, collection, 'systems');
  const wanted = client.config.system;
  if (wanted !== undefined) {
    const match = uris.find((u) => u === wanted || client.uri(u).pathname === wanted || lastSegment(u) === wanted);
    if (!match) {
      throw new UpstreamError(
        'not_found',
        `${client.label}: no system ${JSON.stringify(wanted)} among its ${uris.length}`,
        {
          retryable: false,
        },
      );
    }
    return match;
  }
  if (uris.length === 0) {
    throw new UpstreamError('not_found', `${client.label}: the BMC lists no system`, { retryable: false });
  }
  if (uris.length > 1) {
    throw new UpstreamError(
      'rejected',
      `${client.label}: the BMC manages ${uris.length} systems; name one in the node's settings ("system")`,
      { retryable: false },
    );
  }
  return uris[0] as string;
}

/** Read a kept URI; on 404 forget it, look it up again once, and read that. */
async function cached(client: RedfishClient, key: string, find: () => Promise<string>, what: string): Promise<Found> {
  const kept = client.found.get(key);
  if (kept) {
    try {
      return { uri: kept, body: await client.get(kept, what) };
    } catch (error) {
      if (!(error instanceof UpstreamError && error.kind === 'not_found')) throw error;
      client.found.delete(key);
    }
  }
  const uri = await find();
  const body = await client.get(uri, what);
  client.found.set(key, uri);
  return { uri, body };
}

/** The ComputerSystem this node is, read now. */
export function system(client: RedfishClient): Promise<Found> {
  return cached(client, 'system', () => findSystemUri(client), 'the system');
}

/** The system's manager (its BMC): `Links.ManagedBy`, else the Managers collection's first member. */
export function manager(client: RedfishClient, sys: Json): Promise<Found> {
  return cached(
    client,
    'manager',
    async () => {
      const links = isObject(sys.Links) ? sys.Links : {};
      const managedBy = Array.isArray(links.ManagedBy) ? links.ManagedBy.map(idOf).find((u) => u) : undefined;
      if (managedBy) return managedBy;
      const root = await client.root();
      const collection = idOf(root.Managers);
      const uris = collection ? await members(client, collection, 'managers') : [];
      if (!uris[0])
        throw new UpstreamError('not_found', `${client.label}: the BMC lists no manager`, { retryable: false });
      return uris[0];
    },
    'the manager',
  );
}

/** Every virtual media slot: the system's own collection (ComputerSystem ≥ 1.13), else the manager's. */
export async function mediaSlots(client: RedfishClient, sys: Json): Promise<Found[]> {
  let collection = idOf(sys.VirtualMedia);
  if (!collection) {
    const mgr = await manager(client, sys);
    collection = idOf(mgr.body.VirtualMedia);
  }
  if (!collection) return [];
  const slots: Found[] = [];
  for (const uri of await members(client, collection, 'virtual media')) {
    slots.push({ uri, body: await client.get(uri, 'a virtual media slot') });
  }
  return slots;
}

export const isCd = (slot: Json): boolean =>
  Array.isArray(slot.MediaTypes) && slot.MediaTypes.some((t) => t === 'CD' || t === 'DVD');

/** The virtual CD/DVD slot, read now; `rejected` (not_supported) when the BMC has none. */
export function cdSlot(client: RedfishClient, sys: Json): Promise<Found> {
  return cached(
    client,
    'cd',
    async () => {
      const slot = (await mediaSlots(client, sys)).find((s) => isCd(s.body));
      if (!slot) {
        throw new UpstreamError('rejected', `${client.label}: the BMC has no virtual CD/DVD media`, {
          retryable: false,
          reason: 'not_supported',
        });
      }
      return slot.uri;
    },
    'the virtual CD',
  );
}

/** Every drive of the system's Storage members, read now. */
export async function drives(client: RedfishClient, sys: Json): Promise<Found[]> {
  const collection = idOf(sys.Storage);
  if (!collection) return [];
  const out: Found[] = [];
  for (const storageUri of await members(client, collection, 'storage')) {
    const storage = await client.get(storageUri, 'a storage subsystem');
    const links = Array.isArray(storage.Drives) ? storage.Drives.map(idOf) : [];
    for (const uri of links) if (uri) out.push({ uri, body: await client.get(uri, 'a drive') });
  }
  return out;
}

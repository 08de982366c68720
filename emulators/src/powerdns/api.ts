// The part of PowerDNS Authoritative's HTTP API (/api/v1) the platform uses, answered as the
// real server does: the server object, zones listed, read (with `rrsets`, `rrset_name`,
// `rrset_type` filters), created and deleted, and rrsets changed with PATCH (changetype REPLACE
// or DELETE; 204 No Content). Checks of a PATCH as PowerDNS makes them: names absolute
// ("... is not canonical"), inside the zone ("Name is out of zone"), a known changetype, a TTL
// on REPLACE, and record contents in the form the type takes (a PTR's target is an absolute name:
// "Not in expected format (parsed as '…')").

import { PdnsError, parseObject, unprocessable } from './http.ts';
import { absolute, type PdnsRecord, type PdnsState, type RRset, type Zone } from './state.ts';

export interface ApiCtx {
  state: PdnsState;
  serverId: string;
  version: string;
}

export type Answer = { status: 200 | 201; body: unknown } | { status: 204 };

/** PowerDNS's zone id back to the name (apiZoneIdToName: `=XX` is the character XX). */
export function zoneNameOfId(id: string): string {
  return absolute(id.replace(/=([0-9A-Fa-f]{2})/g, (_, hex: string) => String.fromCharCode(Number.parseInt(hex, 16))));
}

/** The zone id of a name (apiZoneNameToId). */
export function zoneIdOfName(name: string): string {
  return [...name]
    .map((c) => (/[A-Za-z0-9.-]/.test(c) ? c : `=${c.charCodeAt(0).toString(16).toUpperCase()}`))
    .join('');
}

function serverObject(ctx: ApiCtx) {
  return {
    type: 'Server',
    id: ctx.serverId,
    daemon_type: 'authoritative',
    version: ctx.version,
    url: `/api/v1/servers/${ctx.serverId}`,
    config_url: `/api/v1/servers/${ctx.serverId}/config{/config_setting}`,
    zones_url: `/api/v1/servers/${ctx.serverId}/zones{/zone}`,
  };
}

function zoneObject(ctx: ApiCtx, zone: Zone, rrsets: RRset[] | null) {
  const id = zoneIdOfName(zone.name);
  return {
    id,
    name: zone.name,
    type: 'Zone',
    url: `/api/v1/servers/${ctx.serverId}/zones/${id}`,
    kind: zone.kind,
    serial: zone.serial,
    notified_serial: 0,
    edited_serial: zone.serial,
    masters: [],
    dnssec: false,
    nsec3param: '',
    nsec3narrow: false,
    presigned: false,
    soa_edit: '',
    soa_edit_api: 'DEFAULT',
    api_rectify: false,
    account: '',
    catalog: '',
    last_check: 0,
    ...(rrsets ? { rrsets } : {}),
  };
}

function zoneOf(ctx: ApiCtx, id: string): Zone {
  const name = zoneNameOfId(decodeURIComponent(id));
  const zone = ctx.state.zones.get(name);
  if (!zone) throw new PdnsError(404, `Could not find domain '${name}'`);
  return zone;
}

/** A PTR (or CNAME, NS) target: an absolute name of non-empty labels. */
function checkContent(owner: string, type: string, content: string): void {
  if (!['PTR', 'CNAME', 'NS'].includes(type)) return;
  const bad = (why: string) => unprocessable(`Record ${owner}/${type} '${content}': ${why}`);
  if (/\s/.test(content)) throw bad(`Not in expected format (parsed as '${content.replace(/\s.*/, '')}')`);
  if (!content.endsWith('.')) throw bad(`Not in expected format (parsed as '${content}.')`);
  const labels = content.slice(0, -1).split('.');
  if (content === '.' || labels.some((l) => l.length === 0 || l.length > 63) || content.length > 254) {
    throw bad("Parsing record content (try 'pdnsutil check-zone'): invalid name");
  }
}

function patchOne(zone: Zone, raw: unknown): void {
  if (typeof raw !== 'object' || raw === null) throw new PdnsError(400, 'rrsets is not an array of objects');
  const rr = raw as Record<string, unknown>;
  const name = rr.name;
  const type = typeof rr.type === 'string' ? rr.type.toUpperCase() : '';
  if (typeof name !== 'string') throw unprocessable("Key 'name' not present or not a String");
  if (type === '') throw unprocessable("Key 'type' not present or not a String");
  if (!name.endsWith('.')) throw unprocessable(`DNS Name '${name}' is not canonical`);
  const owner = name.toLowerCase();
  if (owner !== zone.name && !owner.endsWith(`.${zone.name}`)) {
    throw unprocessable(`RRset ${name} IN ${type}: Name is out of zone`);
  }
  const changetype = typeof rr.changetype === 'string' ? rr.changetype.toUpperCase() : '';
  const at = zone.rrsets.findIndex((r) => r.name === owner && r.type === type);
  if (changetype === 'DELETE') {
    if (at >= 0) zone.rrsets.splice(at, 1);
    return;
  }
  if (changetype !== 'REPLACE') throw unprocessable('Changetype not understood');
  if (!Array.isArray(rr.records)) throw unprocessable("Key 'records' not present or not an Array");
  const records: PdnsRecord[] = rr.records.map((r: unknown) => {
    const rec = (r ?? {}) as Record<string, unknown>;
    if (typeof rec.content !== 'string') throw unprocessable("Key 'content' not present or not a String");
    checkContent(owner, type, rec.content);
    return { content: rec.content, disabled: rec.disabled === true };
  });
  if (records.length === 0) {
    if (at >= 0) zone.rrsets.splice(at, 1);
    return;
  }
  if (typeof rr.ttl !== 'number' || !Number.isInteger(rr.ttl) || rr.ttl < 0) {
    throw unprocessable("Key 'ttl' not present or not an Integer");
  }
  if (type === 'PTR' && records.length > 1 && new Set(records.map((r) => r.content)).size !== records.length) {
    throw unprocessable(`RRset ${name} IN ${type} has duplicate record content`);
  }
  const rrset: RRset = { name: owner, type, ttl: rr.ttl, records, comments: [] };
  if (at >= 0) zone.rrsets[at] = rrset;
  else zone.rrsets.push(rrset);
}

/** PATCH a zone: every rrset change is checked before any is applied (all or nothing). */
function patch(ctx: ApiCtx, zone: Zone, body: Record<string, unknown>): void {
  if (!Array.isArray(body.rrsets)) throw new PdnsError(400, 'No rrsets given in update request');
  const copy: Zone = structuredClone(zone);
  for (const rr of body.rrsets) patchOne(copy, rr);
  zone.rrsets = copy.rrsets;
  zone.serial += 1;
  ctx.state.save();
}

export function route(ctx: ApiCtx, method: string, path: string, query: URLSearchParams, text: string): Answer {
  const parts = path.split('/').filter(Boolean); // api, v1, servers, {id}, zones, {zone}
  if (parts[0] !== 'api' || parts[1] !== 'v1') throw new PdnsError(404, 'Not Found');
  if (parts.length === 2 && method === 'GET') return { status: 200, body: [{ url: '/api/v1', version: 1 }] };
  if (parts[2] !== 'servers') throw new PdnsError(404, 'Not Found');
  if (parts.length === 3 && method === 'GET') return { status: 200, body: [serverObject(ctx)] };
  if (parts[3] !== ctx.serverId) throw new PdnsError(404, 'Not Found');
  if (parts.length === 4 && method === 'GET') return { status: 200, body: serverObject(ctx) };
  if (parts[4] !== 'zones' || parts.length > 6) throw new PdnsError(404, 'Not Found');
  if (parts.length === 5) {
    if (method === 'GET') {
      const only = query.get('zone');
      const zones = [...ctx.state.zones.values()].filter((z) => !only || z.name === absolute(only));
      return { status: 200, body: zones.map((z) => zoneObject(ctx, z, null)) };
    }
    if (method === 'POST') {
      const body = parseObject(text);
      if (typeof body.name !== 'string' || !body.name.endsWith('.')) {
        throw unprocessable(`DNS Name '${String(body.name)}' is not canonical`);
      }
      if (ctx.state.zones.has(absolute(body.name))) throw new PdnsError(409, `Domain '${body.name}' already exists`);
      const ns = Array.isArray(body.nameservers) ? body.nameservers.filter((n) => typeof n === 'string') : undefined;
      const zone = ctx.state.addZone(body.name, 'Native', ns && ns.length > 0 ? ns : undefined);
      return { status: 201, body: zoneObject(ctx, zone, zone.rrsets) };
    }
    throw new PdnsError(405, 'Method Not Allowed');
  }
  const zone = zoneOf(ctx, parts[5] as string);
  if (method === 'GET') {
    if (query.get('rrsets') === 'false') return { status: 200, body: zoneObject(ctx, zone, null) };
    const name = query.get('rrset_name');
    const type = query.get('rrset_type');
    const rrsets = zone.rrsets.filter(
      (r) => (!name || r.name === absolute(name)) && (!type || r.type === type.toUpperCase()),
    );
    return { status: 200, body: zoneObject(ctx, zone, rrsets) };
  }
  if (method === 'PATCH') {
    patch(ctx, zone, parseObject(text));
    return { status: 204 };
  }
  if (method === 'DELETE') {
    ctx.state.removeZone(zone.name);
    return { status: 204 };
  }
  throw new PdnsError(405, 'Method Not Allowed');
}

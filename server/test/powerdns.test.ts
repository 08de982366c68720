// ci: one engine (this file uses no database and no Redis: the second engine would run it again unchanged)
// The PowerDNS driver (server/src/upstreams/powerdns/) against the PowerDNS emulator
// (emulators/src/powerdns/), and the emulator against what the real API answers: 204 with no body
// for a PATCH, the zone read back with its rrsets, 401 for a wrong X-API-Key, 404 "Could not find
// domain" for an unknown zone, 422 for a PTR target that is not absolute or a name out of zone.
// Also the reverse-zone choice: the /24 by default, the most specific configured rule (RFC 2317
// classless zones: the record is `<last octet>.<zone>`, the zone id escaped as PowerDNS does).

import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { type PowerDnsEmulator, startPowerDnsEmulator } from '../../emulators/src/powerdns/index.ts';
import { reverseName, reverseZoneFor, zoneOf24 } from '../src/upstreams/dns.ts';
import { UpstreamError } from '../src/upstreams/errors.ts';
import { createPowerDns, ptrOwner, zoneIdOf } from '../src/upstreams/powerdns/index.ts';

let pdns: PowerDnsEmulator;
const CLASSLESS = '0/26.113.0.203.in-addr.arpa.';

before(async () => {
  pdns = await startPowerDnsEmulator({ zones: ['100.51.198.in-addr.arpa.', CLASSLESS] });
});
after(() => pdns.stop());

const driver = (overrides: { key?: string; zones?: unknown; endpoint?: string } = {}) =>
  createPowerDns(
    {
      name: 'pdns-test',
      endpoint: overrides.endpoint ?? pdns.url,
      credentials: { api_key: overrides.key ?? pdns.apiKey },
      settings: { zones: overrides.zones ?? [{ cidr: '203.0.113.0/26', zone: CLASSLESS }] },
    },
    { requestTimeoutMs: 2000 },
  );

async function rejects(work: Promise<unknown>, kind: UpstreamError['kind'], status?: number): Promise<UpstreamError> {
  try {
    await work;
  } catch (error) {
    assert.ok(error instanceof UpstreamError, String(error));
    assert.equal(error.kind, kind, error.message);
    if (status !== undefined) assert.equal(error.status, status);
    assert.doesNotMatch(error.message, new RegExp(pdns.apiKey), 'the key is never in a message');
    return error;
  }
  assert.fail(`expected ${kind}`);
}

/** A raw call to the emulator, as a client of the real API would make it. */
const raw = (method: string, path: string, body?: unknown, key = pdns.apiKey) =>
  fetch(`${pdns.url}${path}`, {
    method,
    headers: { 'x-api-key': key, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });

describe('reverse zones', () => {
  test('names and zones: the /24 by default, the most specific rule that holds the address', () => {
    assert.equal(reverseName('203.0.113.4'), '4.113.0.203.in-addr.arpa.');
    assert.equal(zoneOf24('203.0.113.4'), '113.0.203.in-addr.arpa.');
    const rules = [
      { cidr: '203.0.0.0/16', zone: '0.203.in-addr.arpa.' },
      { cidr: '203.0.113.0/26', zone: CLASSLESS },
    ];
    assert.equal(reverseZoneFor('203.0.113.4', rules), CLASSLESS);
    assert.equal(reverseZoneFor('203.0.113.200', rules), '0.203.in-addr.arpa.');
    assert.equal(reverseZoneFor('198.51.100.7', rules), '100.51.198.in-addr.arpa.');
    assert.equal(ptrOwner('203.0.113.4', CLASSLESS), `4.${CLASSLESS}`);
    assert.equal(ptrOwner('203.0.113.200', '0.203.in-addr.arpa.'), '200.113.0.203.in-addr.arpa.');
    assert.equal(zoneIdOf(CLASSLESS), '0=2F26.113.0.203.in-addr.arpa.');
  });
});

describe('PowerDNS driver against the emulator', () => {
  test('ping: the server object and its version', async () => {
    assert.deepEqual(await driver().ping(), { version: '4.9.4' });
  });

  test('set, read back, replace and clear a PTR in a /24 zone', async () => {
    const dns = driver();
    await dns.setPtr('198.51.100.7', 'mail.example.in');
    assert.equal(pdns.ptr('7.100.51.198.in-addr.arpa.'), 'mail.example.in.');
    assert.equal(await dns.readPtr('198.51.100.7'), 'mail.example.in');
    await dns.setPtr('198.51.100.7', 'smtp.example.in');
    const zone = (await (await raw('GET', '/api/v1/servers/localhost/zones/100.51.198.in-addr.arpa.')).json()) as {
      name: string;
      kind: string;
      rrsets: { name: string; type: string; ttl: number; records: { content: string; disabled: boolean }[] }[];
    };
    assert.equal(zone.name, '100.51.198.in-addr.arpa.');
    assert.equal(zone.kind, 'Native');
    const ptrs = zone.rrsets.filter((r) => r.type === 'PTR');
    assert.deepEqual(ptrs, [
      {
        name: '7.100.51.198.in-addr.arpa.',
        type: 'PTR',
        ttl: 3600,
        records: [{ content: 'smtp.example.in.', disabled: false }],
        comments: [],
      },
    ]);
    await dns.clearPtr('198.51.100.7');
    assert.equal(pdns.ptr('7.100.51.198.in-addr.arpa.'), null);
    assert.equal(await dns.readPtr('198.51.100.7'), null);
    await dns.clearPtr('198.51.100.7'); // nothing to remove: still success
    dns.close();
  });

  test('an RFC 2317 zone from the rules: the record is <octet>.<zone>, the zone id escaped', async () => {
    const dns = driver();
    const before = pdns.calls.length;
    await dns.setPtr('203.0.113.4', 'web1.example.in');
    assert.equal(pdns.calls[before], 'PATCH /api/v1/servers/localhost/zones/0=2F26.113.0.203.in-addr.arpa.');
    assert.equal(pdns.ptr(`4.${CLASSLESS}`), 'web1.example.in.');
    assert.equal(await dns.readPtr('203.0.113.4'), 'web1.example.in');
    await dns.clearPtr('203.0.113.4');
    assert.equal(pdns.ptr(`4.${CLASSLESS}`), null);
    dns.close();
  });

  test('a wrong key is auth (401), a zone the server lacks not_found (404) with its words', async () => {
    await rejects(driver({ key: 'wrong-key' }).setPtr('198.51.100.8', 'a.example.in'), 'auth', 401);
    const missing = await rejects(driver().setPtr('192.0.2.9', 'a.example.in'), 'not_found', 404);
    assert.equal(missing.detail, "Could not find domain '2.0.192.in-addr.arpa.'");
    assert.equal(pdns.ptr('8.100.51.198.in-addr.arpa.'), null);
  });

  test('a 500 is unreachable and retryable; a server that is gone is unreachable', async () => {
    pdns.setFaults({ failNext: 1 });
    const failed = await rejects(driver().setPtr('198.51.100.8', 'a.example.in'), 'unreachable', 500);
    assert.equal(failed.retryable, true);
    const gone = await startPowerDnsEmulator();
    const url = gone.url;
    await gone.stop();
    await rejects(driver({ endpoint: url }).ping(), 'unreachable');
  });

  test('a configuration that cannot work fails every call, never echoing the key', async () => {
    await rejects(driver({ key: '' }).ping(), 'rejected');
    await rejects(driver({ zones: [{ cidr: 'nonsense', zone: 'x' }] }).ping(), 'rejected');
    await rejects(driver({ endpoint: 'ftp://ns1.example.in' }).ping(), 'rejected');
  });
});

describe('the emulator answers as PowerDNS does', () => {
  const zonePath = '/api/v1/servers/localhost/zones/100.51.198.in-addr.arpa.';
  const ptr = (content: string, name = '9.100.51.198.in-addr.arpa.') => ({
    rrsets: [{ name, type: 'PTR', ttl: 300, changetype: 'REPLACE', records: [{ content, disabled: false }] }],
  });

  test('PATCH is 204 with no body; GET filters by rrset_name and rrset_type', async () => {
    const res = await raw('PATCH', zonePath, ptr('host.example.in.'));
    assert.equal(res.status, 204);
    assert.equal(await res.text(), '');
    const one = (await (
      await raw('GET', `${zonePath}?rrset_name=9.100.51.198.in-addr.arpa.&rrset_type=PTR`)
    ).json()) as { rrsets: unknown[] };
    assert.equal(one.rrsets.length, 1);
    const del = await raw('PATCH', zonePath, {
      rrsets: [{ name: '9.100.51.198.in-addr.arpa.', type: 'PTR', changetype: 'DELETE' }],
    });
    assert.equal(del.status, 204);
  });

  test('refusals: {"error": …} with 401, 404 and 422, and nothing applied', async () => {
    const wrongKey = await raw('GET', zonePath, undefined, 'nope');
    assert.equal(wrongKey.status, 401);
    assert.deepEqual(await wrongKey.json(), { error: 'Unauthorized' });
    const unknown = await raw('GET', '/api/v1/servers/localhost/zones/2.0.192.in-addr.arpa.');
    assert.equal(unknown.status, 404);
    assert.deepEqual(await unknown.json(), { error: "Could not find domain '2.0.192.in-addr.arpa.'" });
    const relative = await raw('PATCH', zonePath, ptr('host.example.in'));
    assert.equal(relative.status, 422);
    assert.match(((await relative.json()) as { error: string }).error, /Not in expected format \(parsed as/);
    const notCanonical = await raw('PATCH', zonePath, ptr('host.example.in.', '9.100.51.198.in-addr.arpa'));
    assert.equal(notCanonical.status, 422);
    assert.match(((await notCanonical.json()) as { error: string }).error, /is not canonical/);
    const outOfZone = await raw('PATCH', zonePath, ptr('host.example.in.', '9.113.0.203.in-addr.arpa.'));
    assert.equal(outOfZone.status, 422);
    assert.match(((await outOfZone.json()) as { error: string }).error, /Name is out of zone/);
    assert.equal(pdns.ptr('9.100.51.198.in-addr.arpa.'), null);
  });
});

// Reverse DNS (issue 37, CONTRACT §13) through the HTTP surfaces, against the PowerDNS emulator:
// the session surface's POST /api/v1/client/services/ {action: "rdns"} and the second surface's
// PUT /cloud/v1/instances/{id}/rdns set and clear the PTR of a VPS's IPv4 address (read back
// from the emulator's zone), `ptr` in the service and instance views of every surface, hostnames
// refused with 422 (too long, a bad or empty label, an underscore) before the DNS server is asked,
// another account's service answering exactly like a missing one, the scope, and a DNS server that
// refuses or fails (wrong key 401, unknown zone 404, 500) giving a clean error with the stored
// name unchanged.

import assert from 'node:assert/strict';
import { after, before, beforeEach, describe, test } from 'node:test';
import type { LightMyRequestResponse } from 'fastify';
import { type PowerDnsEmulator, startPowerDnsEmulator } from '../../emulators/src/powerdns/index.ts';
import { freshIp, signedInBrowser } from './support/factories.ts';
import { type ApiClient, apiClient } from './support/rest.ts';
import { createUpstreamApp, type UpstreamApp, waitFor } from './support/upstreams.ts';

const SVC = '/api/v1/client/services/';
const CLOUD = '/cloud/v1';
const MISSING = 987_654;

let u: UpstreamApp;
let pdns: PowerDnsEmulator;
let owner: Awaited<ReturnType<typeof signedInBrowser>>;
let intruder: Awaited<ReturnType<typeof signedInBrowser>>;
let writer: ApiClient;
let reader: ApiClient;
let stranger: ApiClient;
let serviceId: number;
let ipv4: string;
let owner4: string;

/** Point the app's reverse DNS at the emulator (or at it with another key). */
function useEmulator(key = pdns.apiKey): void {
  u.t.deps.drivers.configureReverseDns({
    kind: 'powerdns',
    access: { name: 'test-pdns', endpoint: pdns.url, credentials: { api_key: key }, settings: {} },
  });
}

const rdns = (browser = owner.browser, body: Record<string, unknown> = {}, id = serviceId) =>
  browser.post(SVC, { id, action: 'rdns', ...body }, { csrf: true });

const stored = async () =>
  (
    await u.t.deps.database.db
      .selectFrom('services')
      .select('ptr')
      .where('id', '=', serviceId)
      .executeTakeFirstOrThrow()
  ).ptr;

/** What the emulator's zone holds for the address, read over its API as any client would. */
async function zonePtr(): Promise<string | null> {
  const zone = ipv4.split('.').slice(0, 3).reverse().join('.');
  const res = await fetch(`${pdns.url}/api/v1/servers/localhost/zones/${zone}.in-addr.arpa.`, {
    headers: { 'x-api-key': pdns.apiKey },
  });
  assert.equal(res.status, 200);
  const body = (await res.json()) as { rrsets: { name: string; type: string; records: { content: string }[] }[] };
  const rrset = body.rrsets.find((r) => r.name === owner4 && r.type === 'PTR');
  return rrset?.records[0]?.content ?? null;
}

/** The ptr every view shows: session detail and list, the cloud instance and list, /api/v1. */
async function viewsShow(expected: string | null): Promise<void> {
  const detail = await owner.browser.get(`${SVC}?id=${serviceId}`);
  assert.equal(detail.json().service.ptr, expected, detail.body);
  const list = await owner.browser.get(SVC);
  assert.equal(list.json().services.find((s: { id: number }) => s.id === serviceId).ptr, expected);
  const instance = await reader.call('GET', `${CLOUD}/instances/${serviceId}`);
  assert.equal(instance.json().instance.ptr, expected, instance.body);
  const listed = await reader.call('GET', `${CLOUD}/instances`);
  assert.equal(listed.json().instances.find((s: { id: number }) => s.id === serviceId).ptr, expected);
  const rest = await reader.call('GET', `/api/v1/instances/${serviceId}`);
  assert.equal(rest.json().instance.ptr, expected, rest.body);
}

const fieldsOf = (res: LightMyRequestResponse) => {
  const body = res.json();
  return body.errors ?? body.details?.fields;
};

before(async () => {
  u = await createUpstreamApp();
  // The demo's ranges: 203.0.113.0/26 (mum1), 198.51.100.0/26 (blr1), 192.0.2.0/27 (del1).
  pdns = await startPowerDnsEmulator({
    zones: ['113.0.203.in-addr.arpa.', '100.51.198.in-addr.arpa.', '2.0.192.in-addr.arpa.'],
  });
  useEmulator();
  owner = await signedInBrowser(u.t, freshIp());
  await u.t.deps.wallet.credit(owner.account.id, '3000', 'test float');
  intruder = await signedInBrowser(u.t, freshIp());
  writer = await apiClient(u.t, ['instances.write', 'read'], '0', owner.account.id);
  reader = await apiClient(u.t, ['read'], '0', owner.account.id);
  stranger = await apiClient(u.t, ['*'], '0', intruder.account.id);
  const plan = await u.t.deps.database.db
    .selectFrom('plans')
    .select('id')
    .where('label', '=', 'vps-1c-1g')
    .executeTakeFirstOrThrow();
  const res = await owner.browser.post(
    '/api/v1/client/orders/',
    { plan_id: plan.id, config: { hostname: 'app.example.in' }, idempotency_key: 'rdns-1' },
    { csrf: true },
  );
  assert.equal(res.statusCode, 201, res.body);
  serviceId = res.json().service.id;
  await waitFor('provisioned', async () => {
    const job = await u.t.deps.database.db
      .selectFrom('jobs')
      .select('status')
      .where('id', '=', res.json().job.id)
      .executeTakeFirstOrThrow();
    return job.status === 'succeeded';
  });
  ipv4 = (await owner.browser.get(`${SVC}?id=${serviceId}`)).json().service.ipv4;
  assert.match(ipv4, /^\d+\.\d+\.\d+\.\d+$/);
  owner4 = `${ipv4.split('.').reverse().join('.')}.in-addr.arpa.`;
});
after(async () => {
  await u.close();
  await pdns.stop();
});
beforeEach(() => {
  useEmulator();
  pdns.setFaults({ down: false, failNext: 0 });
});

describe('reverse DNS of a VPS', () => {
  test('views show ptr null before anything is set', async () => {
    await viewsShow(null);
  });

  test('session: set (lower-cased, trailing dot dropped), read back from the zone, then clear', async () => {
    const set = await rdns(owner.browser, { ptr: 'Mail.Example.IN.' });
    assert.equal(set.statusCode, 200, set.body);
    assert.equal(set.json().success, true);
    assert.deepEqual(set.json().rdns, { ipv4, ptr: 'mail.example.in' });
    assert.equal(await zonePtr(), 'mail.example.in.');
    assert.equal(await stored(), 'mail.example.in');
    await viewsShow('mail.example.in');

    const cleared = await rdns(owner.browser, { ptr: null });
    assert.equal(cleared.statusCode, 200, cleared.body);
    assert.deepEqual(cleared.json().rdns, { ipv4, ptr: null });
    assert.equal(await zonePtr(), null);
    await viewsShow(null);

    assert.equal((await rdns(owner.browser, { ptr: 'again.example.in' })).statusCode, 200);
    const empty = await rdns(owner.browser, { ptr: '' });
    assert.equal(empty.statusCode, 200, empty.body);
    assert.equal(await zonePtr(), null, '"" clears too');
    assert.equal(await stored(), null);
  });

  test('bad hostnames are 422 on ptr, and the DNS server is not asked', async () => {
    const calls = pdns.calls.length;
    const bad = [
      `${'a'.repeat(60)}.${'b'.repeat(60)}.${'c'.repeat(60)}.${'d'.repeat(60)}.example.in`, // 254 characters
      `${'a'.repeat(64)}.example.in`, // a label over 63
      'bad_label.example.in', // an underscore
      'a..example.in', // an empty label
      '.example.in',
      '-web.example.in',
      'web-.example.in',
      'white space.example.in',
      'localhost', // one label
      '1.2.3.4', // a number, not a name
      'é.example.in',
    ];
    for (const ptr of bad) {
      const session = await rdns(owner.browser, { ptr });
      assert.equal(session.statusCode, 422, `${ptr}: ${session.body}`);
      assert.equal(session.json().code, 'validation_failed', ptr);
      assert.ok(fieldsOf(session).ptr, ptr);
      const cloud = await writer.call('PUT', `${CLOUD}/instances/${serviceId}/rdns`, { ptr });
      assert.equal(cloud.statusCode, 422, `${ptr}: ${cloud.body}`);
      assert.ok(fieldsOf(cloud).ptr, ptr);
    }
    const missing = await owner.browser.post(SVC, { id: serviceId, action: 'rdns' }, { csrf: true });
    assert.equal(missing.statusCode, 422, missing.body);
    assert.ok(fieldsOf(missing).ptr);
    const wrongType = await rdns(owner.browser, { ptr: 42 });
    assert.equal(wrongType.statusCode, 422, wrongType.body);
    const stray = await rdns(owner.browser, { ptr: 'ok.example.in', note: 'hi' });
    assert.equal(stray.statusCode, 422, stray.body);
    assert.equal(pdns.calls.length, calls, 'no call reached the DNS server');
    assert.equal(await stored(), null);
  });

  test("another account's service answers exactly like a missing one, and nothing changes", async () => {
    const calls = pdns.calls.length;
    const foreign = await rdns(intruder.browser, { ptr: 'evil.example.in' });
    const missing = await rdns(intruder.browser, { ptr: 'evil.example.in' }, MISSING);
    assert.equal(foreign.statusCode, 404, foreign.body);
    assert.equal(foreign.json().code, 'not_owner');
    assert.deepEqual(foreign.json(), missing.json());
    const cloudForeign = await stranger.call('PUT', `${CLOUD}/instances/${serviceId}/rdns`, { ptr: 'evil.example.in' });
    const cloudMissing = await stranger.call('PUT', `${CLOUD}/instances/${MISSING}/rdns`, { ptr: 'evil.example.in' });
    assert.equal(cloudForeign.statusCode, 404, cloudForeign.body);
    const { request_id: _a, ...a } = cloudForeign.json();
    const { request_id: _b, ...b } = cloudMissing.json();
    assert.deepEqual(a, b);
    assert.equal(pdns.calls.length, calls);
    assert.equal(await stored(), null);
  });

  test('cloud PUT: instances.write sets and clears; a read-only token is 403 insufficient_scope', async () => {
    const refused = await reader.call('PUT', `${CLOUD}/instances/${serviceId}/rdns`, { ptr: 'ro.example.in' });
    assert.equal(refused.statusCode, 403, refused.body);
    assert.equal(refused.json().error, 'insufficient_scope');
    assert.equal(refused.json().details.required, 'instances.write');
    assert.equal(await zonePtr(), null);

    const set = await writer.call('PUT', `${CLOUD}/instances/${serviceId}/rdns`, { ptr: 'web1.example.in.' });
    assert.equal(set.statusCode, 200, set.body);
    assert.deepEqual(set.json(), { ok: true, rdns: { ipv4, ptr: 'web1.example.in' } });
    assert.equal(await zonePtr(), 'web1.example.in.');
    await viewsShow('web1.example.in');

    const cleared = await writer.call('PUT', `${CLOUD}/instances/${serviceId}/rdns`, { ptr: null });
    assert.equal(cleared.statusCode, 200, cleared.body);
    assert.equal(cleared.json().rdns.ptr, null);
    assert.equal(await zonePtr(), null);
    await viewsShow(null);
  });

  test('the DNS server refusing or failing: a clean error, the stored name and the zone unchanged', async () => {
    assert.equal((await rdns(owner.browser, { ptr: 'keep.example.in' })).statusCode, 200);

    useEmulator('a-wrong-key'); // PowerDNS: 401
    const auth = await rdns(owner.browser, { ptr: 'other.example.in' });
    assert.equal(auth.statusCode, 503, auth.body);
    assert.equal(auth.json().code, 'service_unavailable');
    assert.doesNotMatch(auth.body, /a-wrong-key|127\.0\.0\.1|X-API-Key/i);
    const cloudAuth = await writer.call('PUT', `${CLOUD}/instances/${serviceId}/rdns`, { ptr: null });
    assert.equal(cloudAuth.statusCode, 503, cloudAuth.body);
    assert.equal(cloudAuth.json().error, 'service_unavailable');
    useEmulator();

    pdns.setFaults({ failNext: 1 }); // 500
    const failed = await rdns(owner.browser, { ptr: 'other.example.in' });
    assert.equal(failed.statusCode, 503, failed.body);
    assert.equal(failed.json().code, 'node_unreachable');

    const zone = `${ipv4.split('.').slice(0, 3).reverse().join('.')}.in-addr.arpa.`;
    const saved = structuredClone(pdns.zone(zone));
    pdns.removeZone(zone); // PowerDNS: 404 Could not find domain
    try {
      const gone = await rdns(owner.browser, { ptr: 'other.example.in' });
      assert.equal(gone.statusCode, 409, gone.body);
      assert.equal(gone.json().code, 'unavailable:reverse_zone');
    } finally {
      if (saved) pdns.state.zones.set(zone, saved);
    }

    assert.equal(await stored(), 'keep.example.in');
    assert.equal(await zonePtr(), 'keep.example.in.');
    await viewsShow('keep.example.in');
  });

  test('no DNS server configured: 409 unavailable:reverse_dns', async () => {
    u.t.deps.drivers.configureReverseDns(null);
    const res = await rdns(owner.browser, { ptr: 'x.example.in' });
    assert.equal(res.statusCode, 409, res.body);
    assert.equal(res.json().code, 'unavailable:reverse_dns');
    assert.equal(await stored(), 'keep.example.in');
  });
});

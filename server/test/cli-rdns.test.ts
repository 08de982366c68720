// ci: one engine (the CLI is a client of the HTTP surfaces; every API path it calls runs on both engines in the other files)
// `hostplane rdns set <instance> <hostname>` and `hostplane rdns clear <instance>` (issue 37,
// CONTRACT §13) as a person runs them: the real binary against the real app on 127.0.0.1 with an
// emulated Proxmox node and the PowerDNS emulator, with a token of instances.write: the PTR set and
// cleared in the emulator's zone, table and `-o json` output, `instances show` naming it, a name
// that is not a hostname (exit 1, the API's words on stderr), a read-only token (exit 1,
// insufficient_scope), and bad usage (exit 2).

import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { type PowerDnsEmulator, startPowerDnsEmulator } from '../../emulators/src/powerdns/index.ts';
import { cliRunner, ok } from './support/cli.ts';
import { type ApiClient, apiClient } from './support/rest.ts';
import { createUpstreamApp, type UpstreamApp, waitFor } from './support/upstreams.ts';

const cli = cliRunner('hostplane-cli-rdns');
let u: UpstreamApp;
let pdns: PowerDnsEmulator;
let url: string;
let owner: ApiClient;
let reader: ApiClient;
let id: number;
let owner4: string;

const hostplane = (args: string[], token = owner.secret) =>
  cli.run(cli.home(), args, { env: { HOSTPLANE_TOKEN: token, HOSTPLANE_URL: url } });

before(async () => {
  u = await createUpstreamApp();
  pdns = await startPowerDnsEmulator({ zones: ['113.0.203.in-addr.arpa.', '100.51.198.in-addr.arpa.'] });
  u.t.deps.drivers.configureReverseDns({
    kind: 'powerdns',
    access: { name: 'cli-pdns', endpoint: pdns.url, credentials: { api_key: pdns.apiKey }, settings: {} },
  });
  url = await u.t.app.listen({ port: 0, host: '127.0.0.1' });
  owner = await apiClient(u.t, ['read', 'orders.write', 'instances.write']);
  reader = await apiClient(u.t, ['read'], '0', owner.accountId);
  const deploy = await owner.call('POST', '/cloud/v1/instances', {
    type: 'kvm',
    plan: 'vps-1c-1g',
    region: 'mum1',
    image: 'debian-12',
    hostname: 'cli1.example.in',
    idempotency_key: 'cli-rdns-1',
  });
  assert.equal(deploy.statusCode, 201, deploy.body);
  id = deploy.json().instance.id;
  const ipv4 = await waitFor('active with an address', async () => {
    const instance = (await owner.call('GET', `/cloud/v1/instances/${id}`)).json().instance;
    return instance.status === 'active' && instance.ipv4 ? (instance.ipv4 as string) : null;
  });
  owner4 = `${ipv4.split('.').reverse().join('.')}.in-addr.arpa.`;
});

after(async () => {
  await u.close();
  await pdns.stop();
  cli.cleanup();
});

describe('hostplane rdns', () => {
  test('set and clear, in table and json; instances show names it', async () => {
    const set = ok(await hostplane(['rdns', 'set', String(id), 'Mail.Example.IN']));
    assert.match(set.stdout, /^Reverse DNS of \d+\.\d+\.\d+\.\d+ set to mail\.example\.in\.$/m);
    assert.equal(pdns.ptr(owner4), 'mail.example.in.');
    const show = ok(await hostplane(['instances', 'show', String(id)], reader.secret));
    assert.match(show.stdout, /reverse dns\s+mail\.example\.in/);

    const json = JSON.parse(ok(await hostplane(['rdns', 'set', String(id), 'smtp.example.in.', '-o', 'json'])).stdout);
    assert.equal(json.ptr, 'smtp.example.in');
    assert.match(json.ipv4, /^\d+\.\d+\.\d+\.\d+$/);
    assert.equal(pdns.ptr(owner4), 'smtp.example.in.');

    const cleared = JSON.parse(ok(await hostplane(['rdns', 'clear', String(id), '-o', 'json'])).stdout);
    assert.deepEqual(cleared, { ipv4: json.ipv4, ptr: null });
    assert.equal(pdns.ptr(owner4), null);
    const again = ok(await hostplane(['rdns', 'clear', String(id)]));
    assert.match(again.stdout, /^Reverse DNS of \S+ cleared\.$/m);
  });

  test('a bad hostname and a read-only token: exit 1 with the API message; nothing set', async () => {
    const bad = await hostplane(['rdns', 'set', String(id), 'under_score.example.in']);
    assert.equal(bad.code, 1, bad.stderr);
    assert.match(bad.stderr, /The reverse DNS name .*no underscores.*\(validation_failed, HTTP 422/);
    assert.equal(bad.stdout, '');
    const scope = await hostplane(['rdns', 'set', String(id), 'ro.example.in'], reader.secret);
    assert.equal(scope.code, 1, scope.stderr);
    assert.match(scope.stderr, /insufficient_scope, HTTP 403/);
    const json = await hostplane(['rdns', 'set', String(id), 'a..example.in', '-o', 'json']);
    assert.equal(json.code, 1);
    assert.equal(JSON.parse(json.stderr).error.code, 'validation_failed');
    assert.equal(pdns.ptr(owner4), null);
  });

  test('bad usage is exit 2', async () => {
    for (const args of [
      ['rdns'],
      ['rdns', 'set', String(id)],
      ['rdns', 'clear'],
      ['rdns', 'set', 'x', 'a.b.in'],
      ['rdns', 'clear', '0'],
    ]) {
      const r = await hostplane(args);
      assert.equal(r.code, 2, `${args.join(' ')}: ${r.stderr}`);
    }
  });
});

// Deploying on the token surface (spec 4.1 POST /instances): exactly the spec's body works (the
// rest has defaults), errors name the fields as this flat body names them, every failing field
// at once, and an idempotent replay is answered even when the hourly deploy allowance is spent.

import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { sql } from 'kysely';
import { type ApiClient, apiClient } from './support/rest.ts';
import { createUpstreamApp, type UpstreamApp } from './support/upstreams.ts';

let u: UpstreamApp;
let api: ApiClient;

before(async () => {
  u = await createUpstreamApp({ worker: false });
  api = await apiClient(u.t, ['*'], '10000');
});
after(() => u.close());

const deploy = (client: ApiClient, body: Record<string, unknown>, headers?: Record<string, string>) =>
  client.call('POST', '/api/v1/instances', body, headers);

describe('deploy', () => {
  test("exactly the spec's fields: 201, the default OS, the hostname is the server name", async () => {
    const res = await deploy(api, { plan: 'vps-1c-1g', server_name: 'x', eula: true, idempotency_key: 'k' });
    assert.equal(res.statusCode, 201, res.body);
    const { instance } = res.json();
    assert.equal(instance.label, 'x');
    assert.equal(instance.os, 'ubuntu-24.04');
    assert.equal(instance.hostname, 'x');
  });

  test('errors name the flat fields (os, not config.os), every one at once; codes stay bad_config_<field>', async () => {
    const res = await deploy(api, {
      plan: 'vps-1c-1g',
      server_name: 'ok-name',
      eula: true,
      hostname: '-x-',
      os: 'nope',
      region: 'mars1',
      idempotency_key: 'flat-1',
    });
    assert.equal(res.statusCode, 422, res.body);
    assert.equal(res.json().error, 'bad_config_hostname');
    assert.deepEqual(Object.keys(res.json().details.fields).sort(), ['hostname', 'os', 'region']);
    assert.doesNotMatch(res.json().message, /config\./);
    const os = await deploy(api, {
      plan: 'vps-1c-1g',
      server_name: 'y',
      eula: true,
      os: 'nope',
      idempotency_key: 'f2',
    });
    assert.equal(os.json().error, 'bad_config_os');
    assert.deepEqual(Object.keys(os.json().details.fields), ['os']);
    const game = await deploy(api, { plan: 'mc-java-2g', server_name: 'smp', eula: false, idempotency_key: 'f3' });
    assert.equal(game.json().error, 'bad_config_eula');
    assert.deepEqual(Object.keys(game.json().details.fields), ['eula']);
  });

  test('a bad server_name is a server_name error, not a hostname error the caller never sent', async () => {
    const res = await deploy(api, {
      plan: 'vps-1c-1g',
      server_name: 'My Server!',
      eula: true,
      idempotency_key: 'sn-1',
    });
    assert.equal(res.statusCode, 422, res.body);
    assert.equal(res.json().error, 'bad_config_server_name');
    assert.deepEqual(Object.keys(res.json().details.fields), ['server_name']);
    const taken = await deploy(api, { plan: 'vps-1c-1g', server_name: 'x', eula: true, idempotency_key: 'sn-2' });
    assert.equal(taken.json().error, 'bad_config_server_name');
    assert.deepEqual(Object.keys(taken.json().details.fields), ['server_name']);
  });

  test('concurrent deploys of one name: one placed, the rest 422 bad_config_server_name (never a 500)', async () => {
    const client = await apiClient(u.t, ['*'], '10000');
    const results = await Promise.all(
      Array.from({ length: 6 }, (_, i) =>
        deploy(client, { plan: 'vps-1c-1g', server_name: 'twin', eula: true, idempotency_key: `twin-${i}` }),
      ),
    );
    assert.equal(results.filter((r) => r.statusCode === 201).length, 1, results.map((r) => r.body).join('\n'));
    for (const r of results.filter((x) => x.statusCode !== 201)) {
      assert.equal(r.statusCode, 422, r.body);
      assert.equal(r.json().error, 'bad_config_server_name');
      assert.deepEqual(Object.keys(r.json().details.fields), ['server_name']);
    }
    const { rows } = await sql<{ n: string }>`
      select count(*) as n from wallet_transactions where account_id = ${client.accountId} and kind = 'order'`.execute(
      u.t.deps.database.db,
    );
    assert.equal(rows[0]?.n, '1', 'one charge');
  });

  test('a body the schema refuses still names the bad values it carries', async () => {
    const res = await deploy(api, { plan: 5, server_name: 'Bad Name', eula: true, idempotency_key: '' });
    assert.equal(res.statusCode, 422, res.body);
    assert.equal(res.json().error, 'validation_failed');
    assert.deepEqual(Object.keys(res.json().details.fields).sort(), ['idempotency_key', 'plan', 'server_name']);
    const unknown = await deploy(api, {
      plan: 'nope',
      server_name: 'z',
      eula: true,
      os: 'nope',
      idempotency_key: 'u1',
    });
    assert.deepEqual(Object.keys(unknown.json().details.fields).sort(), ['os', 'plan']);
  });
});

describe('idempotency and the hourly deploy allowance', () => {
  test('a replay of a deploy that succeeded is answered (201, Idempotent-Replayed) even with the allowance spent', async () => {
    const client = await apiClient(u.t, ['*'], '10000');
    const body = (i: number) => ({ plan: 'vps-1c-1g', server_name: `q${i}`, eula: true, idempotency_key: `q-${i}` });
    const first = await deploy(client, body(0));
    assert.equal(first.statusCode, 201, first.body);
    for (let i = 1; i < 10; i++) assert.equal((await deploy(client, body(i))).statusCode, 201);
    const over = await deploy(client, body(10));
    assert.equal(over.statusCode, 429, over.body);
    const replay = await deploy(client, body(0));
    assert.equal(replay.statusCode, 201, replay.body);
    assert.equal(replay.headers['idempotent-replayed'], 'true');
    assert.equal(replay.body, first.body);
    assert.equal(replay.headers.location, first.headers.location);
    const { idempotency_key: _k, ...noKey } = body(0);
    const headerKey = await deploy(client, noKey, { 'idempotency-key': 'q-0' });
    assert.equal(headerKey.statusCode, 201, 'the key in the header is the same request');
    assert.equal(headerKey.body, first.body);
    const other = await deploy(client, { ...body(0), server_name: 'other' });
    assert.equal(other.statusCode, 409, 'the same key with another payload is still a conflict');
    assert.equal(other.json().error, 'idempotency_conflict');
  });
});

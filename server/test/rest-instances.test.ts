// The token surface's routes on the real core (spec 4.1): deploy to active, details and
// credentials, stats, actions, console tickets over WebSocket, termination, billing, status,
// and the limits: 402 on an empty wallet, 10 deploys an hour (before any charge), 600 requests
// a minute per token, exact under parallel bursts.

import assert from 'node:assert/strict';
import { connect } from 'node:net';
import { after, before, describe, test } from 'node:test';
import { sql } from 'kysely';
import WebSocket from 'ws';
import { type ApiClient, apiClient } from './support/rest.ts';
import { createUpstreamApp, type UpstreamApp, waitFor } from './support/upstreams.ts';

let u: UpstreamApp;
let api: ApiClient;
let instanceId: number;

const jobSettled = (client: ApiClient, id: number) =>
  waitFor(`job ${id}`, async () => {
    const job = (await client.call('GET', `/api/v1/jobs/${id}`)).json().job;
    return job.status === 'succeeded' || job.status === 'failed' ? job : null;
  });

before(async () => {
  u = await createUpstreamApp();
  api = await apiClient(u.t, ['*'], '5000');
});
after(() => u.close());

describe('catalog and account routes', () => {
  test('/me, /plans, /locations, /os, /quote', async () => {
    const me = (await api.call('GET', '/api/v1/me')).json();
    assert.equal(me.wallet.balance, '5000.00');
    assert.deepEqual(me.token.scopes, ['*']);
    const plans = (await api.call('GET', '/api/v1/plans')).json().plans;
    assert.ok(
      plans.some(
        (p: { label: string; price: { monthly: string } }) => p.label === 'vps-2c-4g' && p.price.monthly === '799.00',
      ),
    );
    const locations = (await api.call('GET', '/api/v1/locations')).json();
    assert.ok(locations.locations.find((l: { code: string }) => l.code === 'mum1').available.vps);
    assert.ok(locations.os.length >= 5);
    assert.ok((await api.call('GET', '/api/v1/os')).json().os.some((o: { slug: string }) => o.slug === 'debian-12'));
    const byLabel = (await api.call('POST', '/api/v1/quote', { plan: 'web-starter' })).json();
    assert.equal(byLabel.price.monthly, '99.00');
    assert.equal(
      (await api.call('POST', '/api/v1/quote', { plan_id: byLabel.plan.id })).json().plan.label,
      'web-starter',
    );
    const empty = await api.call('POST', '/api/v1/quote', {});
    assert.equal(empty.statusCode, 422);
    assert.equal(empty.json().details.fields.plan, 'plan_id or plan (a label) is required');
    const both = await api.call('POST', '/api/v1/quote', { plan_id: byLabel.plan.id, plan: 'web-starter' });
    assert.match(both.json().details.fields.plan, /not both/);
    assert.equal((await api.call('POST', '/api/v1/quote', { plan: 'nope' })).statusCode, 404);
  });

  test('tickets and DNS answer 404 in the token envelope', async () => {
    for (const url of ['/api/v1/tickets', '/api/v1/tickets/1', '/api/v1/dns', '/api/v1/dns/zones']) {
      const res = await api.call('GET', url);
      assert.equal(res.statusCode, 404);
      assert.equal(res.json().ok, false);
      assert.equal(res.json().error, 'not_found');
    }
  });
});

describe('instances', () => {
  test('deploy: 201 with order, instance and job, Location of the job; the job reaches active', async () => {
    const res = await api.call('POST', '/api/v1/instances', {
      plan: 'vps-2c-4g',
      server_name: 'edge1',
      eula: true,
      os: 'ubuntu-24.04',
      region: 'blr1',
      idempotency_key: 'deploy-1',
    });
    assert.equal(res.statusCode, 201, res.body);
    const body = res.json();
    assert.equal(res.headers.location, `/api/v1/jobs/${body.job.id}`);
    assert.equal(body.instance.label, 'edge1');
    assert.equal(body.order.amount, '799.00');
    instanceId = body.instance.id;
    assert.equal((await jobSettled(api, body.job.id)).status, 'succeeded');
    const replay = await api.call('POST', '/api/v1/instances', {
      plan: 'vps-2c-4g',
      server_name: 'edge1',
      eula: true,
      os: 'ubuntu-24.04',
      region: 'blr1',
      idempotency_key: 'deploy-1',
    });
    assert.equal(replay.body, res.body);
    assert.equal(replay.headers['idempotent-replayed'], 'true');
  });

  test('list with live power; detail with credentials, not cacheable; stats', async () => {
    const list = (await api.call('GET', '/api/v1/instances')).json();
    assert.equal(list.instances[0].power, 'running');
    const detail = await api.call('GET', `/api/v1/instances/${instanceId}`);
    assert.equal(detail.headers['cache-control'], 'no-store');
    assert.equal(detail.json().instance.credentials.username, 'root');
    assert.match(detail.json().instance.credentials.ssh, /^ssh root@198\.51\.100\.\d+$/);
    assert.equal(detail.json().instance.last_job.type, 'provision');
    const stats = (await api.call('GET', `/api/v1/instances/${instanceId}/stats`)).json().stats;
    assert.equal(stats.power, 'running');
    assert.equal(stats.memory.total_bytes, 4096 * 1024 * 1024);
  });

  test('actions: 202 with the job; unknown action 422; reinstall needs os and the label', async () => {
    const restart = await api.call('POST', `/api/v1/instances/${instanceId}/restart`);
    assert.equal(restart.statusCode, 202);
    assert.equal((await jobSettled(api, restart.json().job.id)).status, 'succeeded');
    assert.equal((await api.call('POST', `/api/v1/instances/${instanceId}/explode`)).json().error, 'bad_signal');
    assert.equal(
      (await api.call('POST', `/api/v1/instances/${instanceId}/reinstall`, { os: 'debian-12' })).json().error,
      'confirmation_mismatch',
    );
    const noOs = await api.call('POST', `/api/v1/instances/${instanceId}/reinstall`, { confirm: 'edge1' });
    assert.equal(noOs.statusCode, 422);
    assert.equal(noOs.json().error, 'validation_failed');
    assert.deepEqual(noOs.json().details.fields, { os: 'is required' });
    const unknownOs = await api.call('POST', `/api/v1/instances/${instanceId}/reinstall`, {
      os: 'temple-os',
      confirm: 'edge1',
    });
    assert.equal(unknownOs.json().error, 'bad_os');
    const reinstall = await api.call('POST', `/api/v1/instances/${instanceId}/reinstall`, {
      os: 'debian-12',
      confirm: 'edge1',
    });
    assert.equal(reinstall.statusCode, 202);
    assert.equal((await jobSettled(api, reinstall.json().job.id)).status, 'succeeded');
  });

  test('vnc and console: one-time tickets (60 s) relayed over our WebSocket; a used ticket is refused', async () => {
    const address = await u.t.app.listen({ port: 0, host: '127.0.0.1' });
    const wsBase = address.replace(/^http/, 'ws');
    const serial = (await api.call('POST', `/api/v1/instances/${instanceId}/console`)).json().console;
    assert.equal(serial.kind, 'serial');
    assert.match(serial.url, /\/ws\/console\/\?t=[A-Za-z0-9_-]{43}$/);
    const url = `${wsBase}/ws/console/?t=${serial.ticket}`;
    const echoed = await new Promise<string>((resolve, reject) => {
      const ws = new WebSocket(url);
      ws.on('open', () => ws.send('0:4:ping'));
      ws.on('message', (data) => {
        resolve(data.toString());
        ws.close();
      });
      ws.on('error', reject);
    });
    assert.equal(echoed, 'ping');
    // Refused before the upgrade: an HTTP 401 in the token envelope, never a 101 and a close.
    const refusal = (target: string) =>
      new Promise<{ status: number; body: string }>((resolve, reject) => {
        const ws = new WebSocket(target);
        ws.on('unexpected-response', (_req, res) => {
          let body = '';
          res.on('data', (chunk: Buffer) => {
            body += chunk.toString();
          });
          res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
        });
        ws.on('open', () => reject(new Error('the socket was upgraded')));
        ws.on('error', () => {});
      });
    for (const target of [url, `${wsBase}/ws/console/?t=${'x'.repeat(43)}`, `${wsBase}/ws/console/`]) {
      const reused = await refusal(target);
      assert.equal(reused.status, 401, target);
      const body = JSON.parse(reused.body);
      assert.equal(body.ok, false);
      assert.equal(body.error, 'invalid_token');
      assert.ok(body.request_id);
    }
    // A HEAD cannot be upgraded: answered, never a crash of the access log on the closed socket.
    const head = await new Promise<string>((resolve, reject) => {
      const socket = connect(Number(new URL(address).port), '127.0.0.1', () =>
        socket.write(
          'HEAD /ws/console/?t=x HTTP/1.1\r\nHost: x\r\nConnection: Upgrade\r\nUpgrade: websocket\r\n' +
            'Sec-WebSocket-Version: 13\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n\r\n',
        ),
      );
      let text = '';
      socket.on('data', (chunk) => {
        text += chunk.toString();
      });
      socket.on('close', () => resolve(text));
      socket.on('error', reject);
    });
    assert.match(head, /^HTTP\/1\.1 4\d\d /);
    const vnc = (await api.call('POST', `/api/v1/instances/${instanceId}/vnc`)).json().console;
    assert.ok(vnc.password);
    const plain = await u.t.inject({ method: 'GET', url: `/ws/console/?t=${vnc.ticket}` });
    assert.equal(plain.statusCode, 400, 'a plain GET is refused and does not spend the ticket');
    assert.equal(plain.json().ok, false);
    const greeting = await new Promise<string>((resolve, reject) => {
      const ws = new WebSocket(`${wsBase}/ws/console/?t=${vnc.ticket}`);
      ws.on('message', (data) => {
        resolve(data.toString());
        ws.close();
      });
      ws.on('error', reject);
    });
    assert.equal(greeting, 'RFB 003.008\n');
    const { rows } = await sql<{
      n: string;
    }>`select count(*) as n from console_tickets where ticket_hash = ${vnc.ticket}`.execute(u.t.deps.database.db);
    assert.equal(rows[0]?.n, '0', 'tickets are stored hashed');
  });

  test('billing: balance, run-rate of active instances, unpaid orders; invoices; status', async () => {
    const billing = (await api.call('GET', '/api/v1/billing')).json();
    assert.equal(billing.wallet.balance, '4201.00');
    assert.deepEqual(billing.monthly_run_rate, { amount: '799.00', currency: 'INR' });
    assert.deepEqual(billing.unpaid_orders, []);
    assert.equal((await api.call('GET', '/api/v1/invoices')).json().invoices.length, 1);
    const status = (await api.call('GET', '/api/v1/status')).json();
    assert.ok(
      status.fleet.some(
        (g: { location: string; kind: string; status: string }) => g.location === 'blr1' && g.kind === 'proxmox',
      ),
    );
    assert.deepEqual(
      status.instances.map((i: { label: string; power: string }) => [i.label, i.power]),
      [['edge1', 'running']],
    );
  });

  test('DELETE: confirm must equal the label; then terminated, VM gone', async () => {
    const wrong = await api.call('DELETE', `/api/v1/instances/${instanceId}`, { confirm: 'EDGE1' });
    assert.equal(wrong.statusCode, 422);
    assert.equal(wrong.json().error, 'confirmation_mismatch');
    const res = await api.call('DELETE', `/api/v1/instances/${instanceId}`, { confirm: 'edge1' });
    assert.equal(res.statusCode, 202);
    assert.equal((await jobSettled(api, res.json().job.id)).status, 'succeeded');
    assert.equal((await api.call('GET', `/api/v1/instances/${instanceId}`)).json().instance.status, 'terminated');
    const again = await api.call('DELETE', `/api/v1/instances/${instanceId}`, { confirm: 'edge1' });
    assert.equal(again.statusCode, 409);
    assert.equal(again.json().error, 'no_vm');
    assert.match(again.json().message, /already terminated/);
    assert.equal(
      [...u.pve.state.vms.values()].some((vm) => vm.name === `hp-${u.t.deps.installation.id}-svc-${instanceId}`),
      false,
    );
  });
});

describe('limits', () => {
  test('402 insufficient_funds with balance, required, shortfall and where to deposit', async () => {
    const poor = await apiClient(u.t, ['*'], '100');
    const res = await poor.call('POST', '/api/v1/instances', {
      plan: 'vps-1c-1g',
      server_name: 'cheap',
      eula: true,
      os: 'rocky-9',
      idempotency_key: 'poor-1',
    });
    assert.equal(res.statusCode, 402);
    assert.equal(res.json().error, 'insufficient_funds');
    assert.equal(res.json().status, 402);
    assert.deepEqual(res.json().details, {
      balance: '100.00',
      required: '299.00',
      shortfall: '199.00',
      currency: 'INR',
      deposit_url: 'http://localhost:8080/api/v1/client/wallet/deposit/',
    });
  });

  test('20 parallel deploys: exactly 10 accepted, 10 refused with 429 before any charge', async () => {
    const rich = await apiClient(u.t, ['*'], '100000');
    const results = await Promise.all(
      Array.from({ length: 20 }, (_, i) =>
        rich.call('POST', '/api/v1/instances', {
          plan: 'vps-1c-1g',
          server_name: `burst${i}`,
          eula: true,
          os: 'debian-12',
          idempotency_key: `burst-${i}`,
        }),
      ),
    );
    assert.equal(results.filter((r) => r.statusCode === 201).length, 10, results.map((r) => r.statusCode).join(','));
    const refused = results.filter((r) => r.statusCode === 429);
    assert.equal(refused.length, 10);
    assert.ok(refused.every((r) => Number(r.headers['retry-after']) > 0));
    const { rows } = await sql<{
      n: string;
    }>`select count(*) as n from wallet_transactions where account_id = ${rich.accountId} and kind = 'order'`.execute(
      u.t.deps.database.db,
    );
    assert.equal(rows[0]?.n, '10', 'ten charges, no more');
  });

  test('700 parallel requests with one token: exactly 600 pass; RateLimit headers count down; another token is unaffected', async () => {
    const hot = await apiClient(u.t, ['read'], '0');
    const results = await Promise.all(Array.from({ length: 700 }, () => hot.call('GET', '/api/v1/me')));
    assert.equal(results.filter((r) => r.statusCode === 200).length, 600);
    const limited = results.filter((r) => r.statusCode === 429);
    assert.equal(limited.length, 100);
    assert.equal(limited[0]?.json().error, 'rate_limited');
    assert.ok(Number(limited[0]?.headers['retry-after']) > 0);
    assert.equal(limited[0]?.headers['ratelimit-remaining'], '0');
    const cold = await apiClient(u.t, ['read'], '0', hot.accountId);
    assert.equal((await cold.call('GET', '/api/v1/me')).statusCode, 200);
  });
});

// Security review F3, F10 (consoles) and F11, through the real surfaces and the real console
// WebSocket against the Proxmox emulator: the relay's memory stays bounded whichever side floods,
// consoles are capped per account, tickets and live reads are limited per account and service,
// revoked access closes open consoles and refuses unused tickets, and the deploy allowance counts
// orders on both surfaces.

import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import WebSocket from 'ws';
import * as relayModule from '../src/http/console.ts';
import { Browser } from './support/browser.ts';
import { createAccount, freshIp, lastMail, linkToken } from './support/factories.ts';
import { type ApiClient, apiClient } from './support/rest.ts';
import { createUpstreamApp, type UpstreamApp, waitFor } from './support/upstreams.ts';

const WAIT = 60_000;
let u: UpstreamApp;
let wsBase: string;

before(async () => {
  u = await createUpstreamApp();
  const address = await u.t.app.listen({ port: 0, host: '127.0.0.1' });
  wsBase = address.replace(/^http/, 'ws');
});
after(() => u.close());

let n = 0;
/** A funded account with a `*` token and one running VPS. */
async function withVps(): Promise<{ api: ApiClient; id: number }> {
  const api = await apiClient(u.t, ['*'], '5000');
  const res = await api.call('POST', '/api/v1/instances', {
    plan: 'vps-1c-1g',
    server_name: `con${++n}`,
    eula: true,
    region: 'mum1',
    idempotency_key: `con-${n}`,
  });
  assert.equal(res.statusCode, 201, res.body);
  const jobId = res.json().job.id;
  const job = await waitFor(
    `job ${jobId}`,
    async () => {
      const j = (await api.call('GET', `/api/v1/jobs/${jobId}`)).json().job;
      return j.status === 'succeeded' || j.status === 'failed' ? j : null;
    },
    WAIT,
  );
  assert.equal(job.status, 'succeeded');
  return { api, id: res.json().instance.id };
}

async function ticket(api: ApiClient, id: number, kind: 'vnc' | 'console' = 'vnc'): Promise<string> {
  const res = await api.call('POST', `/api/v1/instances/${id}/${kind}`);
  assert.equal(res.statusCode, 202, res.body);
  return res.json().console.ticket;
}

interface Open {
  ws: WebSocket;
  closed: Promise<{ code: number; reason: string }>;
}

/** A console socket, open and past the VNC greeting. */
async function openConsole(t: string): Promise<Open> {
  const ws = new WebSocket(`${wsBase}/ws/console/?t=${t}`);
  const closed = new Promise<{ code: number; reason: string }>((resolve) =>
    ws.on('close', (code, reason) => resolve({ code, reason: reason.toString() })),
  );
  ws.on('error', () => {});
  await new Promise<void>((resolve, reject) => {
    ws.once('message', () => resolve());
    ws.once('unexpected-response', (_req, res) => reject(new Error(`refused: ${res.statusCode}`)));
  });
  return { ws, closed };
}

/** An upgrade refused before the 101: its status and token-envelope body. */
function refusal(t: string): Promise<{ status: number; body: Record<string, unknown> }> {
  return new Promise((resolve, reject) => {
    const ws = new WebSocket(`${wsBase}/ws/console/?t=${t}`);
    ws.on('unexpected-response', (_req, res) => {
      let body = '';
      res.on('data', (chunk: Buffer) => {
        body += chunk.toString();
      });
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body: JSON.parse(body) }));
    });
    ws.on('open', () => {
      ws.close();
      reject(new Error('the socket was upgraded'));
    });
    ws.on('error', () => {});
  });
}

async function openSessions(accountId: number): Promise<number> {
  const row = await u.t.deps.database.db
    .selectFrom('console_sessions')
    .select((eb) => eb.fn.countAll<string>().as('n'))
    .where('account_id', '=', accountId)
    .executeTakeFirstOrThrow();
  return Number(row.n);
}

/** consoleRelayStats, absent before the F3 fix (then: nothing is ever seen paused). */
const relayStats = () =>
  (relayModule as { consoleRelayStats?: () => { paused: number; peakQueuedBytes: number } }).consoleRelayStats?.() ?? {
    paused: 0,
    peakQueuedBytes: Number.NaN,
  };

describe('F3: the console relay holds a bounded amount of memory', () => {
  test('a client that floods before the node console opens is closed with 1009', { timeout: 120_000 }, async () => {
    const { api, id } = await withVps();
    const t = await ticket(api, id);
    u.pve.console.hold = true;
    try {
      const ws = new WebSocket(`${wsBase}/ws/console/?t=${t}`);
      ws.on('error', () => {});
      const closed = new Promise<number>((resolve) => ws.on('close', (code) => resolve(code)));
      ws.on('open', () => {
        // 3 MiB in frames under the 1 MiB frame cap, while the node has not answered yet.
        for (let i = 0; i < 6; i++) ws.send(Buffer.alloc(512 * 1024, i), { binary: true });
      });
      assert.equal(await closed, 1009);
    } finally {
      u.pve.console.hold = false;
    }
    await waitFor('the session released', async () => (await openSessions(api.accountId)) === 0, WAIT);
  });

  test('a client that never reads while the node floods: the node is no longer read, the queue stays bounded, nothing is lost', {
    timeout: 180_000,
  }, async () => {
    const { api, id } = await withVps();
    const FLOOD = 64 * 1024 * 1024;
    u.pve.console.flood = FLOOD;
    u.pve.console.flushed = 0;
    const t = await ticket(api, id);
    let received = 0;
    const ws = new WebSocket(`${wsBase}/ws/console/?t=${t}`);
    ws.on('error', () => {});
    let closeCode: number | null = null;
    ws.on('close', (code) => {
      closeCode = code;
    });
    ws.on('message', (data: Buffer) => {
      received += data.length;
    });
    // Read nothing from the start: TCP fills up, then the relay's own queue.
    ws.on('open', () => ws.pause());
    await waitFor(
      'the relay to stop reading the node, or the node to get everything out',
      async () => relayStats().paused > 0 || u.pve.console.flushed >= FLOOD || closeCode !== null,
      WAIT * 2,
    );
    u.pve.console.flood = 0; // only this console floods
    assert.equal(closeCode, null, 'the console stays open');
    assert.ok(
      relayStats().paused > 0,
      `the relay read ${u.pve.console.flushed} bytes from the node for a client that read ${received}`,
    );
    assert.ok(u.pve.console.flushed < FLOOD, 'the node could not push the whole flood into the relay');
    // Bounded: the high-water mark plus at most one frame of the node's (64 KiB here).
    assert.ok(
      relayStats().peakQueuedBytes <= relayModule.HIGH_WATER_BYTES + 64 * 1024,
      `peak queue ${relayStats().peakQueuedBytes}`,
    );
    // The client reads again: everything arrives, in full, and the relay was never above its bound.
    ws.resume();
    await waitFor('the whole flood', async () => received >= FLOOD + 12 || closeCode !== null, WAIT * 2);
    assert.equal(received, FLOOD + 12, 'the greeting and every flooded byte');
    assert.equal(u.pve.console.flushed, FLOOD);
    assert.ok(relayStats().peakQueuedBytes <= relayModule.HIGH_WATER_BYTES + 64 * 1024);
    ws.close();
  });
});

describe('F3: caps and limits on consoles and live reads', () => {
  test('the 5th open console of an account is refused with 429; closing one frees a place', {
    timeout: 90_000,
  }, async () => {
    const { api, id } = await withVps();
    const tickets = [];
    for (let i = 0; i < 5; i++) tickets.push(await ticket(api, id));
    const open: Open[] = [];
    for (const t of tickets.slice(0, 4)) open.push(await openConsole(t));
    assert.equal(await openSessions(api.accountId), 4);
    // At redeem: 429 in the token envelope, before any upgrade; the ticket is not spent.
    const refused = await refusal(tickets[4] as string);
    assert.equal(refused.status, 429);
    assert.equal(refused.body.ok, false);
    assert.equal(refused.body.error, 'rate_limited');
    // At issue: refused before the node is asked for a ticket.
    const issue = await api.call('POST', `/api/v1/instances/${id}/vnc`);
    assert.equal(issue.statusCode, 429);
    assert.equal(issue.json().error, 'rate_limited');
    assert.deepEqual(issue.json().details, { limit: 4, open: 4 });
    const first = open.shift() as Open;
    first.ws.close();
    await first.closed;
    await waitFor('the session released', async () => (await openSessions(api.accountId)) === 3, WAIT);
    open.push(await openConsole(tickets[4] as string));
    for (const o of open) o.ws.close();
    await Promise.all(open.map((o) => o.closed));
    await waitFor('every session released', async () => (await openSessions(api.accountId)) === 0, WAIT);
  });

  test('consoles left by a crashed process stop counting when their lease lapses; a live process renews its own', {
    timeout: 90_000,
  }, async () => {
    const { api, id } = await withVps();
    const { db } = u.t.deps.database;
    const service = await db.selectFrom('services').select('node_id').where('id', '=', id).executeTakeFirstOrThrow();
    const row = (expires: number) => ({
      account_id: api.accountId,
      service_id: id,
      node_id: service.node_id as number,
      expires_at: new Date(Date.now() + expires),
    });
    // Four rows whose process died three minutes ago: their leases lapsed, they do not count.
    const dead = await db
      .insertInto('console_sessions')
      .values([row(-1), row(-1), row(-1), row(-1)])
      .returning('id')
      .execute();
    assert.equal((await api.call('POST', `/api/v1/instances/${id}/vnc`)).statusCode, 202);
    // The same rows, renewed by a live process: they count again.
    await u.t.deps.consoles.renew(dead.map((r) => r.id));
    const refused = await api.call('POST', `/api/v1/instances/${id}/vnc`);
    assert.equal(refused.statusCode, 429, refused.body);
    await db.deleteFrom('console_sessions').where('account_id', '=', api.accountId).execute();
  });

  test('the 7th console ticket a minute for one service is 429 with RateLimit headers', async () => {
    const { api, id } = await withVps();
    for (let i = 0; i < 6; i++) await ticket(api, id, i % 2 ? 'vnc' : 'console');
    const seventh = await api.call('POST', `/api/v1/instances/${id}/console`);
    assert.equal(seventh.statusCode, 429, seventh.body);
    assert.equal(seventh.json().ok, false);
    assert.equal(seventh.json().error, 'rate_limited');
    assert.equal(seventh.headers['ratelimit-limit'], '6');
    assert.equal(seventh.headers['ratelimit-remaining'], '0');
    assert.ok(seventh.headers['retry-after']);
  });

  test('live status (60/min) and graph (20/min) reads per account, shared by both surfaces: then 429', async () => {
    const { account, password } = await createAccount(u.t);
    await u.t.deps.wallet.credit(account.id, '5000', 'test float');
    const browser = new Browser(u.t, freshIp());
    assert.equal((await browser.login(account.username, password)).statusCode, 200);
    const api = await apiClient(u.t, ['*'], '0', account.id);
    const res = await api.call('POST', '/api/v1/instances', {
      plan: 'vps-1c-1g',
      server_name: 'live1',
      eula: true,
      region: 'mum1',
      idempotency_key: 'live-1',
    });
    const id = res.json().instance.id;
    const jobId = res.json().job.id;
    await waitFor(
      'provisioned',
      async () => (await api.call('GET', `/api/v1/jobs/${jobId}`)).json().job.status === 'succeeded',
      WAIT,
    );
    for (let i = 0; i < 30; i++) {
      assert.equal((await api.call('GET', `/api/v1/instances/${id}/stats`)).statusCode, 200);
      assert.equal((await browser.get(`/api/v1/client/services/status/?id=${id}`)).statusCode, 200);
    }
    const status = await browser.get(`/api/v1/client/services/status/?id=${id}`);
    assert.equal(status.statusCode, 429, status.body);
    assert.equal(status.json().success, false);
    assert.equal(status.json().code, 'rate_limited');
    assert.equal(status.headers['ratelimit-limit'], '60');
    assert.equal((await api.call('GET', `/api/v1/instances/${id}/stats`)).json().error, 'rate_limited');
    for (let i = 0; i < 20; i++) {
      const graph = await browser.get(`/api/v1/client/services/graph/?id=${id}&timeframe=hour`);
      assert.equal(graph.statusCode, 200, graph.body);
    }
    const graph = await browser.get(`/api/v1/client/services/graph/?id=${id}&timeframe=hour`);
    assert.equal(graph.statusCode, 429);
    assert.equal(graph.json().code, 'rate_limited');
    assert.equal(graph.headers['ratelimit-limit'], '20');
  });
});

describe('F10: revoked access closes consoles and refuses tickets', () => {
  test('suspension closes the open console (1008) and an unused ticket can no longer be redeemed', {
    timeout: 90_000,
  }, async () => {
    const { api, id } = await withVps();
    const spare = await ticket(api, id);
    const open = await openConsole(await ticket(api, id));
    await u.t.deps.accounts.suspend(api.accountId, 'abuse');
    assert.equal((await open.closed).code, 1008);
    const refused = await refusal(spare);
    assert.equal(refused.status, 401);
    assert.equal(refused.body.error, 'invalid_token');
    await waitFor('the session released', async () => (await openSessions(api.accountId)) === 0, WAIT);
  });

  test('a password reset closes the open console', { timeout: 90_000 }, async () => {
    const { api, id } = await withVps();
    const open = await openConsole(await ticket(api, id));
    const forgot = await new Browser(u.t, freshIp()).post('/api/v1/client/auth/forgot/', { identifier: api.email });
    assert.equal(forgot.statusCode, 200);
    const token = linkToken((await lastMail(u.t, api.email)).text, 'reset');
    const reset = await new Browser(u.t, freshIp()).post('/api/v1/client/auth/reset/', {
      token,
      password: 'a-brand-new-pass-77',
    });
    assert.equal(reset.statusCode, 200, reset.body);
    assert.equal((await open.closed).code, 1008);
  });
});

describe('F11: the deploy allowance counts orders on both surfaces', () => {
  test('10 orders an hour per account across the session and token surfaces; the 11th is 429', async () => {
    const { account, password } = await createAccount(u.t);
    await u.t.deps.wallet.credit(account.id, '50000', 'test float');
    const browser = new Browser(u.t, freshIp());
    assert.equal((await browser.login(account.username, password)).statusCode, 200);
    const api = await apiClient(u.t, ['*'], '0', account.id);
    const plan = await u.t.deps.database.db
      .selectFrom('plans')
      .select('id')
      .where('label', '=', 'vps-1c-1g')
      .executeTakeFirstOrThrow();
    const order = (key: string) =>
      browser.post(
        '/api/v1/client/orders/',
        { plan_id: plan.id, config: { region: 'mum1' }, idempotency_key: key },
        { csrf: true },
      );
    const deploy = (key: string) =>
      api.call('POST', '/api/v1/instances', { plan: 'vps-1c-1g', server_name: key, eula: true, idempotency_key: key });
    // A refused order (unknown region) gives its point back.
    const bad = await browser.post(
      '/api/v1/client/orders/',
      { plan_id: plan.id, config: { region: 'nowhere' }, idempotency_key: 'bad' },
      { csrf: true },
    );
    assert.equal(bad.statusCode, 422, bad.body);
    for (let i = 0; i < 5; i++) {
      assert.equal((await order(`s${i}`)).statusCode, 201);
      assert.equal((await deploy(`t${i}`)).statusCode, 201);
    }
    const eleventh = await order('s-eleventh');
    assert.equal(eleventh.statusCode, 429, eleventh.body);
    assert.equal(eleventh.json().success, false);
    assert.equal(eleventh.json().code, 'rate_limited');
    assert.equal(eleventh.headers['ratelimit-limit'], '10');
    assert.equal((await deploy('t-eleventh')).statusCode, 429);
    // A replay is no new order: answered even with the allowance spent.
    const replay = await order('s0');
    assert.equal(replay.statusCode, 201);
    assert.equal(replay.headers['idempotent-replayed'], 'true');
  });
});

// @hostplane/sdk (issue 17) against the real app listening on 127.0.0.1 (emulated Proxmox node,
// worker running) and against stub servers for what the app will not do on demand: typed calls
// on both token surfaces, HostplaneError from the token envelope, paging, waitForJob's
// progress, retries of 429 (Retry-After) and 503, the timeout, an unreachable server, the
// second surface moved (ALT_BASE_PATH), and the generated types matching the served document.

import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { type Hostplane as Client, Hostplane, HostplaneError, type Job, type RetryInfo } from '../../sdk/src/index.ts';
import { freePort } from './support/process.ts';
import { type ApiClient, apiClient } from './support/rest.ts';
import { ROOT } from './support/template.ts';
import { createUpstreamApp, type UpstreamApp } from './support/upstreams.ts';

let u: UpstreamApp;
let url: string;
let owner: ApiClient;
let sdk: Client;

before(async () => {
  u = await createUpstreamApp();
  url = await u.t.app.listen({ port: 0, host: '127.0.0.1' });
  owner = await apiClient(u.t, ['*']);
  sdk = new Hostplane({ baseUrl: url, token: owner.secret });
});

after(() => u.close());

/** A stub server answering each request with the next of `answers` (the last one repeats). */
async function stub(
  answers: ((req: IncomingMessage, res: ServerResponse) => void)[],
): Promise<{ url: string; seen: string[]; close(): Promise<void> }> {
  const seen: string[] = [];
  const server: Server = createServer((req, res) => {
    seen.push(`${req.method} ${req.url}`);
    const answer = answers[Math.min(seen.length - 1, answers.length - 1)];
    answer?.(req, res);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  return {
    url: `http://127.0.0.1:${typeof address === 'object' && address ? address.port : 0}`,
    seen,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

function envelope(status: number, error: string, headers: Record<string, string> = {}) {
  return (_req: IncomingMessage, res: ServerResponse) => {
    res.writeHead(status, { 'content-type': 'application/json', 'x-request-id': `req-${error}`, ...headers });
    res.end(JSON.stringify({ ok: false, error, status, message: `stub ${error}`, request_id: `req-${error}` }));
  };
}

const SSH_KEYS = (_req: IncomingMessage, res: ServerResponse) => {
  res.writeHead(200, { 'content-type': 'application/json' });
  res.end(JSON.stringify({ ok: true, ssh_keys: [] }));
};

describe('@hostplane/sdk against the app', () => {
  test('typed calls on both surfaces', async () => {
    const me = await sdk.me();
    assert.equal(me.account.email, owner.email);
    assert.equal(me.wallet.currency, 'INR');
    const plans = await sdk.listPlans();
    assert.ok(plans.some((p) => p.label === 'vps-1c-1g' && p.type === 'kvm'));
    assert.ok((await sdk.listAllPlans()).some((p) => p.type === 'game'));
    assert.ok((await sdk.listRegions()).some((r) => r.available.kvm));
    assert.ok((await sdk.listImages()).length > 0);
    const quote = await sdk.quote('vps-1c-1g');
    assert.equal(quote.plan.label, 'vps-1c-1g');
    assert.equal((await sdk.billing()).wallet.currency, 'INR');
  });

  test('failures are HostplaneError with the envelope: status, code, message, request_id', async () => {
    const bad = new Hostplane({ baseUrl: url, token: 'svc_nope' });
    const error = await bad.me().then(
      () => assert.fail('a bad token was accepted'),
      (e: unknown) => e,
    );
    assert.ok(error instanceof HostplaneError);
    assert.equal(error.status, 401);
    assert.equal(error.code, 'invalid_token');
    assert.ok(error.message.length > 0);
    assert.match(String(error.request_id), /\S+/);

    const missing = await sdk.getInstance(987_654).catch((e: unknown) => e);
    assert.ok(missing instanceof HostplaneError);
    assert.deepEqual([missing.status, missing.code], [404, 'not_owner']);

    const poor = new Hostplane({ baseUrl: url, token: (await apiClient(u.t, ['*'], '0')).secret });
    const refused = await poor
      .createInstance({ type: 'kvm', plan: 'vps-1c-1g', region: 'mum1', image: 'ubuntu-24.04', hostname: 'poor' })
      .catch((e: unknown) => e);
    assert.ok(refused instanceof HostplaneError);
    assert.equal(refused.status, 402);
    assert.equal(refused.code, 'insufficient_funds');
    assert.ok(refused.details && 'shortfall' in refused.details, JSON.stringify(refused));
  });

  test('deploy, waitForJob with progress, paging over every instance', async () => {
    const image = (await sdk.listImages()).find((i) => i.types.includes('kvm'))?.id ?? '';
    const deployed = [];
    for (const hostname of ['sdk-a', 'sdk-b', 'sdk-c']) {
      deployed.push(await sdk.createInstance({ type: 'kvm', plan: 'vps-1c-1g', region: 'mum1', image, hostname }));
    }
    const first = deployed[0];
    assert.ok(first);
    const seen: Job[] = [];
    const job = await sdk.waitForJob(first.job.id, { intervalMs: 20, onProgress: (j) => seen.push(j) });
    assert.equal(job.status, 'succeeded');
    assert.ok(seen.length >= 1);
    assert.equal(seen.at(-1)?.status, 'succeeded');
    const progress = seen.map((j) => j.progress);
    assert.deepEqual(
      progress,
      [...progress].sort((a, b) => a - b),
    );

    const ids: number[] = [];
    for await (const instance of sdk.instances({ perPage: 1 })) ids.push(instance.id);
    assert.deepEqual(
      [...ids].sort((a, b) => a - b),
      deployed.map((d) => d.instance.id).sort((a, b) => a - b),
    );
    assert.equal((await sdk.listInstances({ per_page: 1 })).pagination.total, 3);
    for (const d of deployed) await sdk.waitForJob(d.job.id, { intervalMs: 20 });
  });

  test('the generated types name every path of the served document', async () => {
    const doc = (await u.t.inject({ method: 'GET', url: '/api/v1/openapi.json' })).json() as {
      paths: Record<string, unknown>;
    };
    const generated = readFileSync(join(ROOT, 'sdk/src/schema.ts'), 'utf8');
    const missing = Object.keys(doc.paths).filter((p) => !generated.includes(`"${p}": {`));
    assert.deepEqual(missing, [], 'stale sdk/src/schema.ts: run `npm run sdk:generate`');
  });
});

describe('@hostplane/sdk retries, timeouts and failures to connect', () => {
  test('429 waits its Retry-After, 503 backs off, then the answer comes', async () => {
    const s = await stub([
      envelope(429, 'rate_limited', { 'retry-after': '1' }),
      envelope(503, 'node_unreachable'),
      SSH_KEYS,
    ]);
    const retries: RetryInfo[] = [];
    const client = new Hostplane({ baseUrl: s.url, token: 'svc_x', backoffMs: 5, onRetry: (r) => retries.push(r) });
    try {
      assert.deepEqual(await client.listSshKeys(), []);
      assert.deepEqual(s.seen, ['GET /cloud/v1/ssh-keys', 'GET /cloud/v1/ssh-keys', 'GET /cloud/v1/ssh-keys']);
      assert.deepEqual(
        retries.map((r) => [r.attempt, r.status]),
        [
          [1, 429],
          [2, 503],
        ],
      );
      assert.equal(retries[0]?.delayMs, 1000, 'Retry-After: 1 is one second');
    } finally {
      await s.close();
    }
  });

  test('a POST is sent again with its body', async () => {
    const bodies: string[] = [];
    const record =
      (answer: (req: IncomingMessage, res: ServerResponse) => void) => (req: IncomingMessage, res: ServerResponse) => {
        let text = '';
        req.on('data', (c: Buffer) => {
          text += c.toString();
        });
        req.on('end', () => {
          bodies.push(text);
          answer(req, res);
        });
      };
    const s = await stub([
      record(envelope(503, 'node_unreachable')),
      record((_req, res) => {
        res.writeHead(201, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ ok: true, ssh_key: { id: 1, name: 'k' } }));
      }),
    ]);
    try {
      const client = new Hostplane({ baseUrl: s.url, token: 'svc_x', backoffMs: 5 });
      await client.addSshKey('k', 'ssh-ed25519 AAAA');
      assert.equal(bodies.length, 2);
      assert.equal(bodies[0], bodies[1]);
      assert.deepEqual(JSON.parse(bodies[1] ?? ''), { name: 'k', public_key: 'ssh-ed25519 AAAA' });
    } finally {
      await s.close();
    }
  });

  test('a Retry-After past maxRetryDelayMs is raised at once; retries stop after `retries`', async () => {
    const long = await stub([envelope(429, 'rate_limited', { 'retry-after': '3600' })]);
    try {
      const error = await new Hostplane({ baseUrl: long.url, token: 'svc_x' }).listSshKeys().catch((e: unknown) => e);
      assert.ok(error instanceof HostplaneError);
      assert.deepEqual([error.status, error.code, error.request_id], [429, 'rate_limited', 'req-rate_limited']);
      assert.equal(long.seen.length, 1);
    } finally {
      await long.close();
    }
    const down = await stub([envelope(503, 'node_unreachable')]);
    try {
      const error = await new Hostplane({ baseUrl: down.url, token: 'svc_x', retries: 2, backoffMs: 1 })
        .listSshKeys()
        .catch((e: unknown) => e);
      assert.ok(error instanceof HostplaneError);
      assert.equal(error.code, 'node_unreachable');
      assert.equal(down.seen.length, 3);
    } finally {
      await down.close();
    }
  });

  test('a server that does not answer: timeout; nothing listening: unreachable', async () => {
    const silent = await stub([() => {}]);
    try {
      const error = await new Hostplane({ baseUrl: silent.url, token: 'svc_x', timeoutMs: 300 })
        .me()
        .catch((e: unknown) => e);
      assert.ok(error instanceof HostplaneError);
      assert.deepEqual([error.status, error.code, error.request_id], [0, 'timeout', null]);
    } finally {
      await silent.close();
    }
    const port = await freePort();
    const error = await new Hostplane({ baseUrl: `http://127.0.0.1:${port}`, token: 'svc_x' })
      .me()
      .catch((e: unknown) => e);
    assert.ok(error instanceof HostplaneError);
    assert.equal(error.code, 'unreachable');
    assert.match(error.message, new RegExp(`cannot reach http://127\\.0\\.0\\.1:${port}: ECONNREFUSED`));
  });

  test('cloudBasePath: the second surface where the operator mounted it', async () => {
    const s = await stub([SSH_KEYS]);
    try {
      await new Hostplane({ baseUrl: s.url, token: 'svc_x', cloudBasePath: '/compute' }).listSshKeys();
      assert.deepEqual(s.seen, ['GET /compute/v1/ssh-keys']);
    } finally {
      await s.close();
    }
  });
});

/** Never called: tsc checks that the SDK's paths and bodies are the document's. */
export function typeChecks(client: Client): void {
  // @ts-expect-error: not a route of the document
  void client.raw.GET('/cloud/v1/no-such-route');
  // @ts-expect-error: power takes shutdown, reboot or power_cycle
  void client.powerInstance(1, 'explode');
  // @ts-expect-error: a deploy names its hostname
  void client.createInstance({ type: 'kvm', plan: 'p', region: 'r', image: 'i' });
}

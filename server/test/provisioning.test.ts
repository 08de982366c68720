// Provisioning through the real Proxmox driver against the emulator, and what happens when the
// node misbehaves (reliability T5/T6): retry, or refund — never stuck, never two VMs.

import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { runAdmin } from '../src/admin/run.ts';
import type { Browser } from './support/browser.ts';
import { freshIp, signedInBrowser } from './support/factories.ts';
import { createUpstreamApp, type UpstreamApp, waitFor } from './support/upstreams.ts';

let u: UpstreamApp;
before(async () => {
  u = await createUpstreamApp({ retryLimit: 3 });
});
after(() => u.close());

let n = 0;
async function client(rupees = '5000') {
  const c = await signedInBrowser(u.t, freshIp());
  await u.t.deps.wallet.credit(c.account.id, rupees, 'test float');
  return c;
}

async function orderVps(browser: Browser, region = 'mum1') {
  n++;
  const plan = await u.t.deps.database.db
    .selectFrom('plans')
    .select('id')
    .where('label', '=', 'vps-1c-1g')
    .executeTakeFirstOrThrow();
  const res = await browser.post(
    '/api/v1/client/orders/',
    {
      plan_id: plan.id,
      config: { hostname: `node${n}.example.in`, os: 'debian-12', region },
      idempotency_key: `prov-${n}-${Date.now()}`,
    },
    { csrf: true },
  );
  assert.equal(res.statusCode, 201, res.body);
  return res.json() as { service: { id: number; label: string }; job: { id: number }; order: { id: number } };
}

const service = (browser: Browser, id: number) =>
  browser.get(`/api/v1/client/services/?id=${id}`).then((r) => r.json().service);
const settled = (browser: Browser, id: number) =>
  waitFor(`service ${id} to settle`, async () => {
    const s = await service(browser, id);
    return s.status === 'active' || s.status === 'failed' ? s : null;
  });
const vmsNamed = (name: string) => [...u.pve.state.vms.values()].filter((vm) => vm.name === name);

describe('provisioning', () => {
  test('an order becomes a running VM with the allocated address, cloud-init and stored credentials', async () => {
    const { browser, account } = await client();
    const placed = await orderVps(browser);
    const active = await settled(browser, placed.service.id);
    assert.equal(active.status, 'active');
    assert.equal(active.power, 'running');
    assert.equal(active.last_job.status, 'succeeded');
    assert.equal(active.last_job.progress, 100);
    assert.match(active.ipv4, /^203\.0\.113\.\d+$/);
    assert.ok(active.paid_until);
    const [vm] = vmsNamed(`hp-${u.t.deps.installation.id}-svc-${placed.service.id}`);
    assert.ok(vm);
    assert.equal(vm.config.ipconfig0, `ip=${active.ipv4}/26,gw=203.0.113.1`);
    assert.equal(vm.status, 'running');
    const creds = await browser.get(`/api/v1/client/services/?id=${placed.service.id}&action=credentials`);
    assert.equal(creds.headers['cache-control'], 'no-store');
    const { credentials } = creds.json();
    assert.equal(credentials.username, 'root');
    assert.equal(vm.config.cipassword, credentials.password);
    const row = await u.t.deps.database.db
      .selectFrom('services')
      .select('credentials_sealed')
      .where('id', '=', placed.service.id)
      .executeTakeFirstOrThrow();
    assert.ok(row.credentials_sealed && !row.credentials_sealed.includes(credentials.password), 'encrypted at rest');
    const events = (await browser.get(`/api/v1/client/services/?id=${placed.service.id}&action=events`))
      .json()
      .events.map((e: { kind: string }) => e.kind);
    assert.deepEqual(events.reverse(), ['order_placed', 'vm_created', 'active']);
    const notes = (await browser.get('/api/v1/client/notifications/')).json();
    assert.ok(notes.notifications.some((x: { kind: string }) => x.kind === 'service_active'));
    const job = await u.t.deps.database.db
      .selectFrom('jobs')
      .selectAll()
      .where('id', '=', placed.job.id)
      .executeTakeFirstOrThrow();
    assert.ok(job.started_at && job.finished_at);
    assert.equal(account.id, job.account_id);
  });

  test('the node down during provisioning: retried, and active once it is back — one VM', async () => {
    const { browser } = await client();
    await u.pve.setFaults({ down: true });
    const placed = await orderVps(browser);
    await waitFor('a failed attempt', async () => {
      const job = await u.t.deps.database.db
        .selectFrom('jobs')
        .selectAll()
        .where('id', '=', placed.job.id)
        .executeTakeFirstOrThrow();
      return job.error_code === 'node_unreachable' ? job : null;
    });
    await u.pve.setFaults({ down: false });
    const active = await settled(browser, placed.service.id);
    assert.equal(active.status, 'active');
    assert.equal(vmsNamed(`hp-${u.t.deps.installation.id}-svc-${placed.service.id}`).length, 1);
  });

  test('the clone happened but its answer was lost: the retry continues the same VM', async () => {
    const { browser } = await client();
    await u.pve.setFaults({ loseNext: 'POST /nodes/:/qemu/:/clone' });
    const clonesBefore = u.pve.calls.get('POST /nodes/:/qemu/:/clone') ?? 0;
    const placed = await orderVps(browser);
    const active = await settled(browser, placed.service.id);
    assert.equal(active.status, 'active');
    assert.equal(vmsNamed(`hp-${u.t.deps.installation.id}-svc-${placed.service.id}`).length, 1);
    assert.equal((u.pve.calls.get('POST /nodes/:/qemu/:/clone') ?? 0) - clonesBefore, 1);
  });

  test('a node that keeps failing: after the retries, failed + refunded as a new ledger row + told; no VM left', async () => {
    const { browser, account } = await client('1000');
    await u.pve.setFaults({ errorRate: 1 });
    const placed = await orderVps(browser);
    const failed = await settled(browser, placed.service.id);
    await u.pve.setFaults({ errorRate: 0 });
    assert.equal(failed.status, 'failed');
    assert.equal(failed.last_job.status, 'failed');
    assert.equal(failed.last_job.error.code, 'node_unreachable');
    const wallet = (await browser.get('/api/v1/client/wallet/')).json();
    assert.equal(wallet.wallet.balance, '1000.00');
    assert.deepEqual(
      wallet.transactions.map((x: { kind: string; amount: string }) => [x.kind, x.amount]),
      [
        ['refund', '299.00'],
        ['order', '-299.00'],
        ['adjustment', '1000.00'],
      ],
    );
    const order = (await browser.get(`/api/v1/client/orders/?id=${placed.order.id}`)).json().order;
    assert.equal(order.status, 'refunded');
    const ip = await u.t.deps.database.db
      .selectFrom('ipv4_addresses')
      .select('id')
      .where('service_id', '=', placed.service.id)
      .execute();
    assert.equal(ip.length, 0, 'the address went back to the pool');
    assert.equal(vmsNamed(`hp-${u.t.deps.installation.id}-svc-${placed.service.id}`).length, 0);
    const notes = (await browser.get('/api/v1/client/notifications/')).json().notifications;
    assert.ok(notes.some((x: { kind: string; body: string }) => x.kind === 'service_failed' && /299\.00/.test(x.body)));
    assert.ok(account);
  });

  test('wrong credentials on the node: no retries, refunded at once', async () => {
    const { browser } = await client('1000');
    const node = await u.t.deps.database.db
      .selectFrom('nodes')
      .selectAll()
      .where('name', '=', 'pve-blr1')
      .executeTakeFirstOrThrow();
    const { encryptSecret } = await import('../src/core/crypto/secrets.ts');
    const sealed = encryptSecret(
      u.t.deps.secretKey,
      JSON.stringify({ token_id: u.pve.tokenId, token_secret: 'wrong' }),
      `node-credentials:${node.name}`,
    );
    await u.t.deps.database.db
      .updateTable('nodes')
      .set({ credentials_sealed: sealed })
      .where('id', '=', node.id)
      .execute();
    try {
      const placed = await orderVps(browser, 'blr1');
      const failed = await settled(browser, placed.service.id);
      assert.equal(failed.status, 'failed');
      assert.equal(failed.last_job.error.code, 'upstream_auth');
      const job = await u.t.deps.database.db
        .selectFrom('jobs')
        .select('attempts')
        .where('id', '=', placed.job.id)
        .executeTakeFirstOrThrow();
      assert.equal(job.attempts, 1, 'not retried');
      assert.equal((await browser.get('/api/v1/client/wallet/')).json().wallet.balance, '1000.00');
    } finally {
      await u.t.deps.database.db
        .updateTable('nodes')
        .set({ credentials_sealed: node.credentials_sealed })
        .where('id', '=', node.id)
        .execute();
    }
  });

  test('a node that hangs: the attempts time out and are retried; it completes once the node answers', async () => {
    const { browser } = await client();
    await u.pve.setFaults({ hang: true });
    const placed = await orderVps(browser);
    await waitFor('a timed-out attempt', async () => {
      const job = await u.t.deps.database.db
        .selectFrom('jobs')
        .selectAll()
        .where('id', '=', placed.job.id)
        .executeTakeFirstOrThrow();
      return job.error_code === 'node_unreachable' ? job : null;
    });
    await u.pve.setFaults({ hang: false });
    assert.equal((await settled(browser, placed.service.id)).status, 'active');
    assert.equal(vmsNamed(`hp-${u.t.deps.installation.id}-svc-${placed.service.id}`).length, 1);
  });

  test("a VM deleted behind the platform's back: clients get a plain message, staff and the logs the node's words", async () => {
    const { browser } = await client();
    const placed = await orderVps(browser);
    assert.equal((await settled(browser, placed.service.id)).status, 'active');
    const [vm] = vmsNamed(`hp-${u.t.deps.installation.id}-svc-${placed.service.id}`);
    assert.ok(vm);
    u.pve.state.vms.delete(vm.vmid);
    const stop = await browser.post(
      '/api/v1/client/services/action/',
      { id: placed.service.id, action: 'stop' },
      { csrf: true },
    );
    assert.equal(stop.statusCode, 202, stop.body);
    const failed = await waitFor('the stop to fail', async () => {
      const s = await service(browser, placed.service.id);
      return s.last_job.status === 'failed' ? s : null;
    });
    const raw = /Configuration file|qemu-server|\.conf|nodes\//;
    assert.deepEqual(failed.last_job.error, {
      code: 'upstream_error',
      message: 'The server was not found on its node.',
    });
    assert.doesNotMatch(JSON.stringify(failed), raw);
    const events = await browser.get(`/api/v1/client/services/?id=${placed.service.id}&action=events`);
    assert.doesNotMatch(events.body, raw);
    assert.doesNotMatch((await browser.get('/api/v1/client/notifications/')).body, raw);
    const shown = await runAdmin(['jobs', 'show', String(failed.last_job.id), '--json'], async () => u.t.deps);
    assert.match(JSON.parse(shown.stdout).detail, /not_found: .*Configuration file .* does not exist/);
    assert.match(u.t.logs.text(), /Configuration file/);
  });
});

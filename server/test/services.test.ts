// Managing a service (spec 4.8): power, live status, graph, reinstall, renew, staff-reviewed
// requests and their approval from the CLI; and the ownership battery over every id-bearing
// route of orders and services.

import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import WebSocket from 'ws';
import { runAdmin } from '../src/admin/run.ts';
import type { Browser } from './support/browser.ts';
import { fingerprint } from './support/db.ts';
import { freshIp, signedInBrowser } from './support/factories.ts';
import { createUpstreamApp, type UpstreamApp, waitFor } from './support/upstreams.ts';

let u: UpstreamApp;
let owner: Awaited<ReturnType<typeof signedInBrowser>>;
let serviceId: number;
let orderId: number;
const SVC = '/api/v1/client/services/';

async function jobDone(jobId: number) {
  return waitFor(`job ${jobId}`, async () => {
    const job = await u.t.deps.database.db
      .selectFrom('jobs')
      .selectAll()
      .where('id', '=', jobId)
      .executeTakeFirstOrThrow();
    return job.status === 'succeeded' || job.status === 'failed' ? job : null;
  });
}
const action = (b: Browser, body: Record<string, unknown>) => b.post(`${SVC}action/`, body, { csrf: true });
const detail = async (b: Browser, id = serviceId) => (await b.get(`${SVC}?id=${id}`)).json().service;

before(async () => {
  u = await createUpstreamApp();
  owner = await signedInBrowser(u.t, freshIp());
  await u.t.deps.wallet.credit(owner.account.id, '3000', 'test float');
  const plan = await u.t.deps.database.db
    .selectFrom('plans')
    .select('id')
    .where('label', '=', 'vps-2c-4g')
    .executeTakeFirstOrThrow();
  const res = await owner.browser.post(
    '/api/v1/client/orders/',
    { plan_id: plan.id, config: { hostname: 'app.example.in', os: 'ubuntu-24.04' }, idempotency_key: 'svc-test-1' },
    { csrf: true },
  );
  serviceId = res.json().service.id;
  orderId = res.json().order.id;
  await jobDone(res.json().job.id);
});
after(() => u.close());

describe('services', () => {
  test('list and detail show the live power state', async () => {
    const list = (await owner.browser.get(SVC)).json();
    assert.equal(list.services.length, 1);
    assert.equal(list.services[0].power, 'running');
    assert.equal(list.services[0].label, 'app');
    const one = await detail(owner.browser);
    assert.equal(one.last_job.type, 'provision');
  });

  test('power: stop, start, restart, kill (a hard power-off) — each a 202 job that runs through the node', async () => {
    for (const [signal, expected] of [
      ['stop', 'stopped'],
      ['start', 'running'],
      ['restart', 'running'],
      ['kill', 'stopped'],
      ['start', 'running'],
    ] as const) {
      const calls = (name: string) => u.pve.calls.get(`POST /nodes/:/qemu/:/status/${name}`) ?? 0;
      const before = { stop: calls('stop'), shutdown: calls('shutdown'), reset: calls('reset') };
      const res = await action(owner.browser, { id: serviceId, action: signal });
      assert.equal(res.statusCode, 202, res.body);
      assert.equal((await jobDone(res.json().job.id)).status, 'succeeded', signal);
      assert.equal((await detail(owner.browser)).power, expected, signal);
      if (signal === 'kill') {
        assert.equal(calls('stop') - before.stop, 1, 'kill pulls the plug');
        assert.equal(calls('shutdown') - before.shutdown, 0, 'kill asks the guest nothing');
        assert.equal(calls('reset') - before.reset, 0, 'kill does not boot it again');
      }
    }
    const events = (await owner.browser.get(`${SVC}?id=${serviceId}&action=events`))
      .json()
      .events.map((e: { kind: string }) => e.kind);
    assert.ok(['power_stop', 'power_start', 'power_restart', 'power_kill'].every((k) => events.includes(k)));
  });

  test('lists ask each node once, share the answer, and never show the power from before an action', async () => {
    const listed = () => u.pve.calls.get('GET /nodes/:/qemu') ?? 0;
    await new Promise((r) => setTimeout(r, 3_100)); // whatever an earlier list cached has expired
    const asked = listed();
    const lists = await Promise.all(Array.from({ length: 5 }, () => owner.browser.get(SVC)));
    assert.ok(lists.every((l) => l.json().services[0].power === 'running'));
    assert.equal(listed() - asked, 1, 'five concurrent lists, one request to the node');
    const stop = await action(owner.browser, { id: serviceId, action: 'stop' });
    await jobDone(stop.json().job.id);
    assert.equal((await owner.browser.get(SVC)).json().services[0].power, 'stopped');
    const start = await action(owner.browser, { id: serviceId, action: 'start' });
    await jobDone(start.json().job.id);
    assert.equal((await owner.browser.get(SVC)).json().services[0].power, 'running');
    // A node that does not answer leaves the list usable: power unknown.
    await u.pve.setFaults({ down: true });
    await new Promise((r) => setTimeout(r, 3_100));
    const blind = await owner.browser.get(SVC);
    await u.pve.setFaults({ down: false });
    assert.equal(blind.statusCode, 200);
    assert.equal(blind.json().services[0].power, 'unknown');
  });

  test('one job at a time: a second action while one runs is 409 locked; unknown signals 422 bad_signal', async () => {
    const first = await action(owner.browser, { id: serviceId, action: 'restart' });
    const second = await action(owner.browser, { id: serviceId, action: 'stop' });
    assert.equal(second.statusCode, 409);
    assert.equal(second.json().code, 'locked');
    await jobDone(first.json().job.id);
    const bad = await action(owner.browser, { id: serviceId, action: 'explode' });
    assert.equal(bad.statusCode, 422);
    assert.equal(bad.json().code, 'bad_signal');
  });

  test('status and graph; bad timeframe 422', async () => {
    const status = (await owner.browser.get(`${SVC}status/?id=${serviceId}`)).json();
    assert.equal(status.status.power, 'running');
    assert.equal(status.status.memory.total_bytes, 4096 * 1024 * 1024);
    for (const timeframe of ['hour', 'day', 'week', 'month', 'year']) {
      const graph = await owner.browser.get(`${SVC}graph/?id=${serviceId}&timeframe=${timeframe}`);
      assert.equal(graph.statusCode, 200, timeframe);
      assert.ok(graph.json().points.length > 10);
    }
    const bad = await owner.browser.get(`${SVC}graph/?id=${serviceId}&timeframe=decade`);
    assert.equal(bad.statusCode, 422);
    assert.equal(bad.json().code, 'bad_timeframe');
  });

  test('a retired OS template: the server installed from it keeps running; reinstalling it is refused', async () => {
    const staff = async (verb: string) =>
      assert.equal((await runAdmin(['os', verb, 'ubuntu-24.04'], async () => u.t.deps)).exitCode, 0);
    await staff('retire');
    const svc = await detail(owner.browser);
    assert.equal(svc.os, 'ubuntu-24.04');
    assert.equal(svc.power, 'running');
    const refused = await action(owner.browser, {
      id: serviceId,
      action: 'reinstall',
      os: 'ubuntu-24.04',
      confirm: 'app',
    });
    assert.equal(refused.statusCode, 422);
    assert.equal(refused.json().code, 'bad_os');
    assert.match(refused.json().errors.os, /is retired/);
    await staff('unretire');
  });

  test('reinstall: confirm must equal the label, the OS must exist; then a new system and a new password', async () => {
    const before = (await owner.browser.get(`${SVC}?id=${serviceId}&action=credentials`)).json().credentials.password;
    const mismatch = await action(owner.browser, {
      id: serviceId,
      action: 'reinstall',
      os: 'debian-12',
      confirm: 'not-app',
    });
    assert.equal(mismatch.json().code, 'confirmation_mismatch');
    const badOs = await action(owner.browser, { id: serviceId, action: 'reinstall', os: 'temple-os', confirm: 'app' });
    assert.equal(badOs.json().code, 'bad_os');
    const noOs = await action(owner.browser, { id: serviceId, action: 'reinstall', confirm: 'app' });
    assert.equal(noOs.statusCode, 422);
    assert.equal(noOs.json().code, 'validation_failed');
    assert.deepEqual(noOs.json().errors, { os: 'is required' });
    const neither = await action(owner.browser, { id: serviceId, action: 'reinstall' });
    assert.deepEqual(Object.keys(neither.json().errors).sort(), ['confirm', 'os']);
    const ok = await action(owner.browser, { id: serviceId, action: 'reinstall', os: 'debian-12', confirm: 'app' });
    assert.equal(ok.statusCode, 202);
    const again = await action(owner.browser, { id: serviceId, action: 'reinstall', os: 'debian-12', confirm: 'app' });
    assert.equal(again.json().code, 'reinstall_running');
    assert.equal((await jobDone(ok.json().job.id)).status, 'succeeded');
    const after = (await owner.browser.get(`${SVC}?id=${serviceId}&action=credentials`)).json().credentials.password;
    assert.notEqual(after, before);
    const svc = await detail(owner.browser);
    assert.equal(svc.os, 'debian-12');
    assert.equal(svc.power, 'running');
  });

  test('renew charges the wallet and extends the paid period by a month', async () => {
    const before = await detail(owner.browser);
    const res = await owner.browser.post(SVC, { id: serviceId, action: 'renew' }, { csrf: true });
    assert.equal(res.statusCode, 200, res.body);
    assert.equal(res.json().order.kind, 'renewal');
    assert.equal(res.json().order.amount, '799.00');
    const after = await detail(owner.browser);
    assert.ok(new Date(after.paid_until).getTime() - new Date(before.paid_until).getTime() > 27 * 86_400_000);
    assert.equal((await owner.browser.get('/api/v1/client/wallet/')).json().wallet.balance, '1402.00');
  });

  test('renew refusals: insufficient funds 422; a failed service is not_renewable', async () => {
    const poor = await signedInBrowser(u.t, freshIp());
    await u.t.deps.wallet.credit(poor.account.id, '299', 'exact');
    const plan = await u.t.deps.database.db
      .selectFrom('plans')
      .select('id')
      .where('label', '=', 'vps-1c-1g')
      .executeTakeFirstOrThrow();
    const placed = (
      await poor.browser.post(
        '/api/v1/client/orders/',
        { plan_id: plan.id, config: { hostname: 'p.example.in', os: 'rocky-9' }, idempotency_key: 'poor-1' },
        { csrf: true },
      )
    ).json();
    await jobDone(placed.job.id);
    const broke = await poor.browser.post(SVC, { id: placed.service.id, action: 'renew' }, { csrf: true });
    assert.equal(broke.statusCode, 422);
    assert.equal(broke.json().code, 'insufficient_funds');
    await u.t.deps.database.db
      .updateTable('services')
      .set({ status: 'failed' })
      .where('id', '=', placed.service.id)
      .execute();
    const failed = await poor.browser.post(SVC, { id: placed.service.id, action: 'renew' }, { csrf: true });
    assert.equal(failed.statusCode, 409);
    assert.equal(failed.json().code, 'not_renewable');
  });

  test('the serial console from the session surface: a ticket without a password, relayed termproxy frames', async () => {
    const res = await owner.browser.get(`${SVC}?id=${serviceId}&action=sso&console=serial`);
    assert.equal(res.statusCode, 200, res.body);
    const sso = res.json().sso;
    assert.equal(sso.kind, 'console');
    assert.equal(sso.protocol, 'serial');
    assert.equal(sso.password, null);
    assert.equal(res.headers['cache-control'], 'no-store');
    const vnc = (await owner.browser.get(`${SVC}?id=${serviceId}&action=sso`)).json().sso;
    assert.equal(vnc.protocol, 'vnc');
    assert.ok(vnc.password, 'the screen has an RFB password');
    const address = await u.t.app.listen({ port: 0, host: '127.0.0.1' });
    const ticket = new URL(sso.url).searchParams.get('t');
    const echoed = await new Promise<string>((resolve, reject) => {
      const ws = new WebSocket(`${address.replace(/^http/, 'ws')}/ws/console/?t=${ticket}`);
      ws.on('open', () => ws.send('0:5:hello'));
      ws.on('message', (data) => {
        resolve(data.toString());
        ws.close();
      });
      ws.on('error', reject);
    });
    assert.equal(echoed, 'hello');
    const misplaced = await owner.browser.get(`${SVC}?id=${serviceId}&console=serial`);
    assert.equal(misplaced.statusCode, 422);
    assert.equal(misplaced.json().errors.console, 'only with action=sso');
    const bad = await owner.browser.get(`${SVC}?id=${serviceId}&action=sso&console=ssh`);
    assert.equal(bad.statusCode, 422);
  });

  test('sso of a virtual server is a console ticket; graph of a service without a VM is 409 no_vm', async () => {
    const sso = await owner.browser.get(`${SVC}?id=${serviceId}&action=sso`);
    assert.equal(sso.statusCode, 200, sso.body);
    assert.equal(sso.json().sso.kind, 'console');
    assert.match(sso.json().sso.url, /\/ws\/console\/\?t=/);
    assert.equal(sso.headers['cache-control'], 'no-store');
    const other = await signedInBrowser(u.t, freshIp());
    await u.t.deps.wallet.credit(other.account.id, '1000', 'test float');
    const plan = await u.t.deps.database.db
      .selectFrom('plans')
      .select('id')
      .where('label', '=', 'vps-1c-1g')
      .executeTakeFirstOrThrow();
    await u.pve.setFaults({ hang: true });
    const placed = (
      await other.browser.post(
        '/api/v1/client/orders/',
        { plan_id: plan.id, config: { hostname: 'q.example.in', os: 'rocky-9' }, idempotency_key: 'novm-1' },
        { csrf: true },
      )
    ).json();
    const graph = await other.browser.get(`${SVC}graph/?id=${placed.service.id}&timeframe=hour`);
    await u.pve.setFaults({ hang: false });
    assert.equal(graph.statusCode, 409);
    assert.equal(graph.json().code, 'no_vm');
    await jobDone(placed.job.id);
  });
});

describe('requests reviewed by staff', () => {
  const admin = (...argv: string[]) => runAdmin(argv, async () => u.t.deps, 'staff:ravi');

  test('suspend: requested once (a duplicate is 409), approved from the CLI → stopped and suspended; power refused; unsuspended', async () => {
    const first = await owner.browser.post(
      SVC,
      { id: serviceId, action: 'request_suspend', note: 'on holiday' },
      { csrf: true },
    );
    assert.equal(first.statusCode, 200, first.body);
    const dup = await owner.browser.post(SVC, { id: serviceId, action: 'request_suspend' }, { csrf: true });
    assert.equal(dup.statusCode, 409);
    assert.equal(dup.json().code, 'duplicate_request');
    const listed = JSON.parse((await admin('requests', 'list', '--json')).stdout);
    const request = listed.find((r: { kind: string }) => r.kind === 'suspend');
    const approved = await admin('requests', 'approve', String(request.id));
    assert.equal(approved.exitCode, 0, approved.stderr);
    assert.match(approved.stdout, /approved suspend .*: done/);
    const svc = await detail(owner.browser);
    assert.equal(svc.status, 'suspended');
    assert.equal(svc.power, 'stopped');
    const refused = await action(owner.browser, { id: serviceId, action: 'start' });
    assert.equal(refused.statusCode, 409);
    assert.equal(refused.json().code, 'suspended');
    assert.equal((await admin('services', 'unsuspend', String(serviceId))).exitCode, 0);
    assert.equal((await detail(owner.browser)).status, 'active');
    // Both staff changes are in the audit log, as the operator (CONTRACT §14).
    const audited = await u.t.deps.database.db
      .selectFrom('audit_log')
      .select(['action', 'actor', 'target_type', 'target_id'])
      .where('target_type', '=', 'service')
      .where('target_id', '=', String(serviceId))
      .orderBy('id')
      .execute();
    assert.deepEqual(
      audited.map((a) => [a.action, a.actor]),
      [
        ['service.suspend', 'operator'],
        ['service.unsuspend', 'operator'],
      ],
    );
    const kinds = (await owner.browser.get('/api/v1/client/notifications/'))
      .json()
      .notifications.map((n: { kind: string }) => n.kind);
    assert.ok(kinds.includes('service_suspended') && kinds.includes('service_unsuspended'), kinds.join());
  });

  test('reject keeps the service; terminate approved → VM deleted, address released, credentials gone', async () => {
    await owner.browser.post(SVC, { id: serviceId, action: 'request_terminate' }, { csrf: true });
    const pending = JSON.parse((await admin('requests', 'list', '--json')).stdout)[0];
    assert.equal(
      (await admin('requests', 'reject', String(pending.id), '--reason', 'unpaid invoice first')).exitCode,
      0,
    );
    assert.equal((await detail(owner.browser)).status, 'active');
    const rejectAudit = await u.t.deps.database.db
      .selectFrom('audit_log')
      .selectAll()
      .where('action', '=', 'service_request.reject')
      .where('target_id', '=', String(pending.id))
      .executeTakeFirstOrThrow();
    assert.equal(rejectAudit.actor, 'operator');
    assert.equal(rejectAudit.reason, 'unpaid invoice first');
    const [declined] = (await owner.browser.get('/api/v1/client/notifications/')).json().notifications;
    assert.equal(declined.kind, 'terminate_request_rejected');
    assert.match(declined.body, /unpaid invoice first/);
    await owner.browser.post(SVC, { id: serviceId, action: 'request_terminate' }, { csrf: true });
    const next = JSON.parse((await admin('requests', 'list', '--json')).stdout)[0];
    const ipv4 = (await detail(owner.browser)).ipv4;
    assert.equal((await admin('requests', 'approve', String(next.id))).exitCode, 0);
    const svc = await detail(owner.browser);
    assert.equal(svc.status, 'terminated');
    assert.equal(
      [...u.pve.state.vms.values()].some((vm) => vm.name === `hp-${u.t.deps.installation.id}-svc-${serviceId}`),
      false,
    );
    const ip = await u.t.deps.database.db
      .selectFrom('ipv4_addresses')
      .select(['status', 'service_id'])
      .where('address', '=', ipv4)
      .executeTakeFirstOrThrow();
    assert.deepEqual(ip, { status: 'free', service_id: null });
    const late = await owner.browser.post(SVC, { id: serviceId, action: 'request_suspend' }, { csrf: true });
    assert.equal(late.statusCode, 409);
    assert.equal(late.json().code, 'no_vm');
    assert.match(late.json().message, /terminated/);
    const credentials = await owner.browser.get(`${SVC}?id=${serviceId}&action=credentials`);
    assert.equal(credentials.statusCode, 409);
    assert.equal(credentials.json().code, 'no_vm');
    assert.match(credentials.json().message, /terminated/);
    assert.doesNotMatch(credentials.json().message, /provisioned/);
    assert.equal(
      (await owner.browser.get(SVC)).json().services.some((s: { id: number }) => s.id === serviceId),
      false,
      'terminated services leave the list',
    );
  });

  test('jobs list/show/retry and nodes check from the CLI', async () => {
    const jobs = JSON.parse((await admin('jobs', 'list', '--json', '--service', String(serviceId))).stdout);
    assert.ok(jobs.length >= 5);
    const shown = JSON.parse((await admin('jobs', 'show', String(jobs[0].id), '--json')).stdout);
    assert.ok(shown.events.length > 0);
    const provision = jobs.find((j: { type: string }) => j.type === 'provision');
    const retry = await admin('jobs', 'retry', String(provision.id));
    assert.equal(retry.exitCode, 1, 'a succeeded job is not retried');
    for (const argv of [
      ['jobs', 'list', '--limit', 'abc'],
      ['jobs', 'list', '--limit', '5000'],
      ['services', 'list', '--status', 'foo'],
    ]) {
      const refused = await admin(...argv);
      assert.equal(refused.exitCode, 2, `${argv.join(' ')}: ${refused.stderr}`);
      assert.match(refused.stderr, /^error: --(limit|status) /);
    }
    const missingShow = await admin('jobs', 'show', '999999');
    const missingRetry = await admin('jobs', 'retry', '999999');
    assert.deepEqual(missingShow, missingRetry, 'one answer for a job that does not exist');
    assert.deepEqual(missingShow, { exitCode: 1, stdout: '', stderr: 'error: No job 999999.\n' });
    assert.equal(JSON.parse((await admin('jobs', 'show', '999999', '--json')).stdout).error, 'not_found');
    const nodes = JSON.parse((await admin('nodes', 'check', '--json')).stdout);
    assert.ok(nodes.every((n: { health: string }) => n.health === 'up'));
    await u.pve.setFaults({ down: true });
    const down = JSON.parse((await admin('nodes', 'check', 'pve-mum1', '--json')).stdout);
    await u.pve.setFaults({ down: false });
    assert.equal(down[0].health, 'down');
    assert.match(down[0].detail, /unreachable/);
  });
});

describe('ownership battery', () => {
  test("every id-bearing order and service route answers another account's id exactly like a missing one, and changes nothing", async () => {
    const intruder = await signedInBrowser(u.t, freshIp());
    await u.t.deps.wallet.credit(intruder.account.id, '5000', 'test float');
    const probes: [string, (id: number) => Promise<{ statusCode: number; json(): { code: string }; body: string }>][] =
      [
        ['order', (id) => intruder.browser.get(`/api/v1/client/orders/?id=${id === serviceId ? orderId : id}`)],
        ['detail', (id) => intruder.browser.get(`${SVC}?id=${id}`)],
        ['credentials', (id) => intruder.browser.get(`${SVC}?id=${id}&action=credentials`)],
        ['events', (id) => intruder.browser.get(`${SVC}?id=${id}&action=events`)],
        ['sso', (id) => intruder.browser.get(`${SVC}?id=${id}&action=sso`)],
        ['status', (id) => intruder.browser.get(`${SVC}status/?id=${id}`)],
        ['graph', (id) => intruder.browser.get(`${SVC}graph/?id=${id}&timeframe=hour`)],
        ['renew', (id) => intruder.browser.post(SVC, { id, action: 'renew' }, { csrf: true })],
        ['request', (id) => intruder.browser.post(SVC, { id, action: 'request_suspend' }, { csrf: true })],
        ['power', (id) => action(intruder.browser, { id, action: 'stop' })],
        ['reinstall', (id) => action(intruder.browser, { id, action: 'reinstall', os: 'debian-12', confirm: 'app' })],
      ];
    for (const [label, probe] of probes) {
      const before = await fingerprint(u.t);
      const foreign = await probe(serviceId);
      const missing = await probe(987_654);
      assert.equal(foreign.statusCode, 404, `${label}: ${foreign.body}`);
      assert.deepEqual(foreign.json(), missing.json(), label);
      assert.equal(foreign.json().code, 'not_owner', label);
      assert.doesNotMatch(foreign.body, /app\.example\.in|203\.0\.113/, label);
      assert.deepEqual(await fingerprint(u.t), before, `${label} changed something`);
    }
  });
});

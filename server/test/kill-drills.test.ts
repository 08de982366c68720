// Kill drills (issue 39; the table is docs/RELIABILITY.md): a real worker process SIGKILLed at
// every point of every product's provisioning — before each step, after each step (its upstream
// call made, the next step not recorded), and once the job has settled but before the queue was
// told — then a worker started again, without the crash point (the refund drill restarts with the
// same one, which must not stop the jobs an earlier worker began). Every service must end active
// with exactly one resource on its emulator (counted through the emulator's own API) and exactly
// one charge (the client's wallet and invoices, the ledger's sum); or, where the step then fails
// for good, failed and refunded through a credit note with nothing left upstream.
//
// Cheap by design (CI's budget): one API and database (the test app, without a worker), the four
// emulators in this process for the whole file, and worker processes only. A worker started with
// HOSTPLANE_CRASH_AT (worker/crash-point.ts) holds each job at a point of its own, and kills itself
// once every point holds one: one kill covers all of them, and one restart resumes all of them.
// The dead worker's jobs are handed back at once, as the embedded engine does at start
// (recoverOrphans), instead of waiting for pg-boss to see their heartbeat lapse (crash.test.ts
// and drills.test.ts wait for that). PostgreSQL only: a worker process needs a database server.

import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { crashPointName } from '../src/config-crash.ts';
import { PRODUCTS } from '../src/core/products/index.ts';
import {
  chargedOnce,
  inStock,
  machineIndex,
  type Placed,
  type Product,
  place,
  refundedOnce,
  resources,
  upstream,
} from './support/drill-clients.ts';
import { onPostgres } from './support/harness.ts';
import { type Running, runNode } from './support/process.ts';
import { createUpstreamApp, type UpstreamApp } from './support/upstreams.ts';
import { waitFor } from './support/wait.ts';

const SKIP = onPostgres
  ? false
  : 'a drill of the PostgreSQL + Redis run (TEST_DATABASE_URL): worker processes of their own need a database server';
const RETRY_LIMIT = 3;
/** One fetch takes every job a worker holds (support/worker-process.ts). */
const BATCH = 64;
const WAIT = 120_000;
const TYPES: readonly Product[] = ['vps', 'game', 'web', 'baremetal'];
/** The step whose run makes the service's resource upstream (what `resources` counts). */
const MAKES: Record<Product, string> = {
  vps: 'creating the virtual machine',
  game: 'creating the game server',
  web: 'creating the hosting account',
  baremetal: 'starting the install',
};

let u: UpstreamApp;
const workers: Running[] = [];
let dataDir = '';

before(async () => {
  if (!onPostgres) return;
  u = await createUpstreamApp({
    worker: false,
    game: true,
    web: true,
    // A machine for each bare-metal drill (a node each): every point, and the refund.
    redfish: { machines: PRODUCTS.baremetal.jobs.provision.length * 2 + 2 },
    retryLimit: RETRY_LIMIT,
  });
  dataDir = mkdtempSync(join(tmpdir(), 'hostplane-kill-'));
});
after(async () => {
  await noWorkers();
  await u?.close();
  if (dataDir) rmSync(dataDir, { recursive: true, force: true });
});

/** Every point of a product's provisioning, in the order a job passes them. */
function pointsOf(product: Product): string[] {
  const steps = u.t.deps.products.of(product).jobs.provision;
  return [
    ...steps.flatMap((s) => [`${product}:${s.name}:before`, `${product}:${s.name}:after`]),
    crashPointName({ product, step: null, when: 'settled' }),
  ];
}

/** No worker left running (one a failed test left behind would take the next test's jobs). */
async function noWorkers(): Promise<void> {
  for (const worker of workers.splice(0)) {
    if (worker.child.exitCode === null && worker.child.signalCode === null) worker.child.kill('SIGKILL');
    await worker.exited;
  }
}

/** A worker process on the test app's database; with `points`, it kills itself once each holds a job. */
function startWorker(points: string[] = []): Running {
  const env: Record<string, string> = {
    DATABASE_URL: u.t.config.databaseUrl ?? '',
    SECRET_KEY: u.t.deps.secretKey.toString('base64'),
    PUBLIC_URL: u.t.config.publicUrl,
    DATA_DIR: dataDir,
    DEMO: '0',
    LOG_LEVEL: 'warn',
    ...(points.length > 0 ? { HOSTPLANE_CRASH_AT: points.join(',') } : {}),
  };
  const worker = runNode('server/test/support/worker-process.ts', [String(BATCH), String(RETRY_LIMIT)], env);
  workers.push(worker);
  return worker;
}

const jobsOf = (placed: readonly Placed[]) =>
  u.t.deps.database.db
    .selectFrom('jobs')
    .selectAll()
    .where(
      'id',
      'in',
      placed.map((p) => p.jobId),
    )
    .execute();

/** Wait for the crash worker to kill itself; the job each point holds (by service), from its log. */
async function killed(worker: Running, placed: readonly Placed[]): Promise<Map<number, string>> {
  const code = await Promise.race([
    worker.exited,
    new Promise<'hung'>((resolve) => setTimeout(resolve, WAIT, 'hung').unref()),
  ]);
  if (code === 'hung') {
    const jobs = await jobsOf(placed);
    assert.fail(`the worker did not kill itself: ${JSON.stringify(jobs.map((j) => [j.id, j.status, j.step]))}
${worker.output()}`);
  }
  assert.equal(worker.child.signalCode, 'SIGKILL', worker.output());
  const held = new Map<number, string>();
  for (const line of worker.output().split('\n')) {
    if (!line.startsWith('{')) continue;
    const entry = JSON.parse(line) as { crashPoint?: string; serviceId?: number };
    if (entry.crashPoint && entry.serviceId) held.set(entry.serviceId, entry.crashPoint);
  }
  return held;
}

/**
 * Hand the dead worker's jobs back (as a restart of the embedded engine does), start a worker
 * (with `points`, the same crash points: it must not stop the jobs it did not begin), wait for every
 * job to settle.
 */
async function restarted(placed: readonly Placed[], points: string[] = []): Promise<Running> {
  await u.t.deps.jobs.recoverOrphans(u.t.deps.database.db);
  const worker = startWorker(points);
  await waitFor(
    'every job to settle after the restart',
    async () => {
      const jobs = await jobsOf(placed);
      if (worker.child.exitCode !== null) assert.fail(`the worker stopped:\n${worker.output()}`);
      return jobs.every((j) => j.status === 'succeeded' || j.status === 'failed');
    },
    WAIT,
  );
  return worker;
}

async function stopped(worker: Running): Promise<void> {
  worker.child.kill('SIGTERM');
  assert.equal(await worker.exited, 0, worker.output());
}

describe('kill drills: the worker SIGKILLed at every provisioning step of every product', { skip: SKIP }, () => {
  test('before and after each step, and once settled: after a restart each service is active, with one resource upstream and one charge', {
    timeout: 300_000,
  }, async (t) => {
    await noWorkers();
    const points = TYPES.flatMap(pointsOf);
    const placed: Placed[] = [];
    for (const product of TYPES) for (const _ of pointsOf(product)) placed.push(await place(u, product));
    const byService = new Map(placed.map((p) => [p.serviceId, p]));
    const machines = new Map<number, number>();
    for (const p of placed)
      if (p.product === 'baremetal') machines.set(p.serviceId, await machineIndex(u, p.serviceId));

    const held = await killed(startWorker(points), placed);
    assert.deepEqual([...held.values()].sort(), [...points].sort(), 'each point held a job of its own');

    // Where each job stopped: the step it shows, and whether its resource exists yet upstream.
    const atKill = await upstream(u);
    const jobs = new Map((await jobsOf(placed)).map((j) => [j.service_id, j]));
    for (const [serviceId, point] of held) {
      const p = byService.get(serviceId) as Placed;
      const job = jobs.get(serviceId);
      const [, step] = point.split(':') as [string, string];
      if (step === 'settled') assert.equal(job?.status, 'succeeded', point);
      else assert.deepEqual([job?.status, job?.step], ['running', step], point);
      // (An attempt that failed before its point, retried by the same worker, may have made it already.)
      if (job?.attempts !== 1) continue;
      const order = pointsOf(p.product);
      const made = order.indexOf(point) >= order.indexOf(`${p.product}:${MAKES[p.product]}:after`);
      assert.equal(
        resources(u, atKill, p, machines.get(serviceId) ?? -1),
        made ? 1 : 0,
        `${point}: resource at the kill`,
      );
    }

    const worker = await restarted(placed);
    const after = await upstream(u);
    const final = new Map((await jobsOf(placed)).map((j) => [j.service_id, j]));
    for (const p of placed) {
      const point = held.get(p.serviceId) as string;
      const job = final.get(p.serviceId);
      assert.equal(job?.status, 'succeeded', `${point}: ${job?.error_code} ${job?.error_message}`);
      // Killed during an attempt, finished by the next one; a settled job is not run again.
      const killedAt = jobs.get(p.serviceId)?.attempts ?? 0;
      assert.equal(job?.attempts, point.endsWith(':settled') ? killedAt : killedAt + 1, point);
      const service = (await p.browser.get(`/api/v1/client/services/?id=${p.serviceId}`)).json().service;
      assert.equal(service.status, 'active', point);
      assert.equal(resources(u, after, p, machines.get(p.serviceId) ?? -1), 1, `${point}: one resource upstream`);
      await chargedOnce(u, p);
    }
    // Nothing else made: no VM, game server or hosting account of this installation beyond one each.
    const ours = (name: string | null) => name?.startsWith(`hp-${u.t.deps.installation.id}-svc-`) === true;
    const count = (product: Product) => placed.filter((p) => p.product === product).length;
    assert.equal(after.vms.filter((vm) => ours(vm.name)).length, count('vps'), 'VMs');
    assert.equal(after.servers.filter((s) => ours(s.externalId)).length, count('game'), 'game servers');
    assert.equal(after.accounts.filter((a) => ours(a.email.split('@')[0] ?? '')).length, count('web'), 'accounts');
    // Each machine runs the OS of its own service.
    for (const p of placed.filter((x) => x.product === 'baremetal')) {
      const machine = after.machines[machines.get(p.serviceId) ?? -1];
      assert.equal(machine?.power, 'On');
      assert.equal(machine?.drives[0]?.os?.hostname, p.domain);
    }
    t.diagnostic(`${points.length} points, one kill, one restart`);
    await stopped(worker);
  });

  test('killed mid-provisioning, then the step fails for good: failed, refunded through a credit note, nothing left upstream', {
    timeout: 300_000,
  }, async () => {
    await noWorkers();
    // The game server's install script fails; every bare-metal install fails; the web domain is
    // taken on the server by another account while the worker is dead.
    await u.ptero?.setFaults({ failInstalls: 1 });
    await u.redfish?.setFaults({ installFails: true });
    const game = await place(u, 'game');
    const web = await place(u, 'web', 'taken-later.example.in');
    const metal = await place(u, 'baremetal');
    const placed = [game, web, metal];
    const machine = await machineIndex(u, metal.serviceId);
    const points = [
      'game:creating the game server:after',
      'web:preparing:after',
      'baremetal:starting the install:after',
    ];
    const held = await killed(startWorker(points), placed);
    assert.equal(held.size, 3);
    const cpanel = u.cpanel;
    assert.ok(cpanel);
    const made = await fetch(`${cpanel.url}/json-api/createacct?api.version=1`, {
      method: 'POST',
      headers: {
        authorization: `whm ${cpanel.whmUser}:${cpanel.whmToken}`,
        'content-type': 'application/x-www-form-urlencoded',
      },
      body: new URLSearchParams({
        username: 'otherown',
        domain: web.domain,
        plan: 'default',
        password: 'Other-Owner-Pass-2026!',
        contactemail: 'owner@elsewhere.example',
      }).toString(),
    });
    const answer = (await made.json()) as { metadata: { result: number; reason: string } };
    assert.equal(answer.metadata.result, 1, `the domain taken meanwhile: ${answer.metadata.reason}`);

    // Restarted with the same crash points: the jobs the dead worker began run through.
    const worker = await restarted(placed, points);
    const jobs = new Map((await jobsOf(placed)).map((j) => [j.service_id, j]));
    assert.equal(jobs.get(web.serviceId)?.error_code, 'domain_taken');
    const up = await upstream(u);
    for (const p of placed) {
      const job = jobs.get(p.serviceId);
      assert.deepEqual([job?.status, job?.attempts], ['failed', 2], `${p.product}: ${job?.error_message}`);
      const service = (await p.browser.get(`/api/v1/client/services/?id=${p.serviceId}`)).json().service;
      assert.equal(service.status, 'failed', p.product);
      await refundedOnce(u, p);
    }
    assert.equal(resources(u, up, game, -1), 0, 'the game server was deleted');
    assert.equal(resources(u, up, web, -1), 0, 'no hosting account of ours');
    assert.deepEqual(
      up.accounts.filter((a) => a.domain === web.domain).map((a) => a.user),
      ['otherown'],
      "the other owner's account is left as it was",
    );
    assert.ok(inStock(up.machines[machine]), 'the machine is wiped back into stock');
    await u.ptero?.setFaults({ failInstalls: 0 });
    await u.redfish?.setFaults({ installFails: false });
    await stopped(worker);
  });
});

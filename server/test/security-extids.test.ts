// Security review 3, T3-M2 and T3-M3, black-box through the session surface.
//
// T3-M2: two installations (two databases, so two installation ids) share one emulated
// Pterodactyl panel and one emulated Proxmox node, as a staging copy or a second installation on
// the same nodes would. Their first customers and services have the same ids; each must get its
// own game server, panel user and VM, never the other installation's. A server that carries this
// installation's name but is recorded by another service is refused, not adopted.
//
// T3-M3: an invite of an address never stands in the way of the customer who registers with it
// later, never names another customer's panel user, and is limited per service and hour.

import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import type { Kysely } from 'kysely';
import { seedDemoCatalog } from '../src/core/catalog/demo-seed.ts';
import * as legacy from '../src/db/migrations/0021_extids_legacy.ts';
import { Browser } from './support/browser.ts';
import { freshIp } from './support/factories.ts';
import { type GameClient, gameClient, orderGame, WAIT } from './support/game.ts';
import { createTestApp } from './support/harness.ts';
import { createUpstreamApp, type UpstreamApp, waitFor } from './support/upstreams.ts';

let a: UpstreamApp;
let b: UpstreamApp;

/** A second installation on the first one's panel and node: its own database, the same upstreams. */
async function secondInstallation(first: UpstreamApp): Promise<UpstreamApp> {
  const t = await createTestApp({
    worker: true,
    overrides: {
      driverTiming: { pollIntervalMs: 10, requestTimeoutMs: 1500, taskTimeoutMs: 5000 },
      queues: {
        'service.provision': { retryDelay: 1, retryBackoff: false, retryLimit: 1 },
        'service.action': { retryDelay: 1, retryBackoff: false, retryLimit: 1 },
      },
    },
  });
  await seedDemoCatalog(t.deps.database.db);
  const { pve, ptero } = first;
  assert.ok(ptero);
  for (const code of ['mum1', 'blr1', 'del1']) {
    await t.deps.nodes.add({
      name: `pve-${code}`,
      kind: 'proxmox',
      locationCode: code,
      endpoint: pve.url,
      credentials: { token_id: pve.tokenId, token_secret: pve.tokenSecret },
      settings: { node: pve.node },
      capacity: 100,
    });
    await t.deps.nodes.add({
      name: `ptero-${code}`,
      kind: 'pterodactyl',
      locationCode: code,
      endpoint: ptero.url,
      credentials: { app_key: ptero.appKey, client_key: ptero.clientKey },
      settings: { panel_node: ptero.panelNodeId },
      capacity: 100,
    });
  }
  return { t, pve, ptero, cpanel: null, redfish: null, close: () => t.close() };
}

const db = (u: UpstreamApp) => u.t.deps.database.db;
const serviceRow = (u: UpstreamApp, id: number) =>
  db(u).selectFrom('services').selectAll().where('id', '=', id).executeTakeFirstOrThrow();
const jobRow = (u: UpstreamApp, id: number) =>
  db(u).selectFrom('jobs').selectAll().where('id', '=', id).executeTakeFirstOrThrow();
const ptero = () => {
  assert.ok(a.ptero);
  return a.ptero;
};

/** The panel server a service recorded (by its uuid, whatever name it carries). */
async function serverOf(u: UpstreamApp, serviceId: number) {
  const { uuid } = (await serviceRow(u, serviceId)).external as { uuid: string };
  const server = [...ptero().state.servers.values()].find((s) => s.uuid === uuid);
  assert.ok(server, `no panel server for service ${serviceId}`);
  return server;
}

async function jobDone(u: UpstreamApp, id: number) {
  return waitFor(
    `job ${id}`,
    async () => {
      const job = await jobRow(u, id);
      return job.status === 'succeeded' || job.status === 'failed' ? job : null;
    },
    WAIT,
  );
}

/** Order a VPS on the session surface and wait for its provisioning job. */
async function orderVps(u: UpstreamApp, client: GameClient): Promise<{ serviceId: number; jobId: number }> {
  const plan = await db(u).selectFrom('plans').select('id').where('label', '=', 'vps-1c-1g').executeTakeFirstOrThrow();
  const res = await client.browser.post(
    '/api/v1/client/orders/',
    {
      plan_id: plan.id,
      config: { hostname: 'app.example.in', os: 'ubuntu-24.04', region: 'mum1' },
      idempotency_key: `extids-vps-${randomBytes(4).toString('hex')}`,
    },
    { csrf: true },
  );
  assert.equal(res.statusCode, 201, res.body);
  const job = await jobDone(u, res.json().job.id);
  assert.equal(job.status, 'succeeded', `${job.error_code}: ${job.error_message}`);
  return { serviceId: res.json().service.id, jobId: job.id };
}

before(async () => {
  // A PUBLIC_URL with a DNS name: the panel users' addresses are at its host.
  a = await createUpstreamApp({ game: true, env: { PUBLIC_URL: 'http://hostplane.example.in:8080' } });
  b = await secondInstallation(a);
});
after(async () => {
  await b?.close();
  await a?.close();
});

describe('T3-M2: external ids across installations', () => {
  let alice: GameClient;
  let bob: GameClient;
  let aliceVps: number;

  before(async () => {
    alice = await gameClient(a, { order: true });
    aliceVps = (await orderVps(a, alice)).serviceId;
  });

  test('the two databases are two installations whose first customer and services have the same ids', async () => {
    assert.notEqual(a.t.deps.installation.id, b.t.deps.installation.id);
    bob = await gameClient(b, { order: true });
    assert.equal(bob.accountId, alice.accountId, 'the same account id in both installations');
    assert.equal(bob.serviceId, alice.serviceId, 'the same service id in both installations');
  });

  test("the second installation's game service gets a server and a panel user of its own", async () => {
    const mine = await serverOf(a, alice.serviceId);
    const theirs = await serverOf(b, bob.serviceId);
    assert.notEqual(theirs.id, mine.id, 'a server of its own');
    assert.equal(theirs.externalId, `hp-${b.t.deps.installation.id}-svc-${bob.serviceId}`);
    assert.equal(mine.externalId, `hp-${a.t.deps.installation.id}-svc-${alice.serviceId}`);
    assert.notEqual(theirs.ownerId, mine.ownerId, 'a panel user of its own');
    const bobUser = ptero().state.users.get(theirs.ownerId);
    assert.equal(bobUser?.externalId, `hp-${b.t.deps.installation.id}-acct-${bob.accountId}`);

    const aRow = await serviceRow(a, alice.serviceId);
    const bRow = await serviceRow(b, bob.serviceId);
    assert.notEqual((bRow.external as { uuid: string }).uuid, (aRow.external as { uuid: string }).uuid);
    assert.equal((bRow.external as { name: string }).name, theirs.externalId, 'the name is recorded with the server');
    assert.equal((bRow.external as { user_id: number }).user_id, theirs.ownerId);

    // What the first installation's customer keeps on their server stays theirs.
    const write = await alice.act('file_write', { path: 'secret.txt', content: 'alice-secret' });
    assert.equal(write.statusCode, 200, write.body);
    const read = await bob.read('file_read', { path: 'secret.txt' });
    assert.notEqual(read.statusCode, 200, read.body);
    assert.ok(!read.body.includes('alice-secret'));
    assert.equal((await alice.read('file_read', { path: 'secret.txt' })).json().content, 'alice-secret');
  });

  test("the second installation's VPS gets a VM of its own", async () => {
    const bobVps = (await orderVps(b, bob)).serviceId;
    assert.equal(bobVps, aliceVps, 'the same service id in both installations');
    const aVm = (await serviceRow(a, aliceVps)).external as { vmid: number; name: string };
    const bVm = (await serviceRow(b, bobVps)).external as { vmid: number; name: string };
    assert.notEqual(bVm.vmid, aVm.vmid, 'a VM of its own');
    assert.equal(bVm.name, `hp-${b.t.deps.installation.id}-svc-${bobVps}`);
    assert.equal(aVm.name, `hp-${a.t.deps.installation.id}-svc-${aliceVps}`);
    const names = [...a.pve.state.vms.values()].map((vm) => vm.name);
    assert.ok(names.includes(aVm.name) && names.includes(bVm.name), names.join(', '));
  });

  test("a server carrying this installation's name but recorded by another service is refused, and left alone", async () => {
    // The next service of the second installation, and a panel server that already carries its
    // name while another service records it (what a restore that reused ids would find).
    const next = await b.t.deps.database.db
      .selectFrom('services')
      .select((eb) => eb.fn.max('id').as('id'))
      .executeTakeFirstOrThrow();
    const name = `hp-${b.t.deps.installation.id}-svc-${Number(next.id) + 1}`;
    const claimed = await serverOf(b, bob.serviceId);
    const original = claimed.externalId;
    claimed.externalId = name;
    try {
      const failed = await orderGame(b, bob, 'mc-java-2g', 'failed');
      assert.equal(failed.serviceId, Number(next.id) + 1);
      const job = await jobRow(b, failed.jobId);
      assert.match(String(job.params.error_detail), /refused to adopt/, JSON.stringify(job.params));
      assert.match(String(job.params.error_detail), new RegExp(`recorded by service ${bob.serviceId}`));
      assert.equal((await serviceRow(b, failed.serviceId)).status, 'failed');
      assert.equal((await serviceRow(b, failed.serviceId)).external, null, 'nothing recorded');
      assert.ok(ptero().state.servers.has(claimed.id), 'the server was not deleted by the undo');
      assert.ok(
        b.t.logs.parsed().some((line) => line.level === 50 && String(line.msg).includes('refused to adopt')),
        'an error for staff in the log',
      );
    } finally {
      claimed.externalId = original;
    }
  });

  test('migration 0021 records the legacy name of a game server made before names carried the installation', async () => {
    const row = await serviceRow(a, alice.serviceId);
    const { name: _name, user_id: _user, ...ref } = row.external as Record<string, unknown>;
    await db(a)
      .updateTable('services')
      .set({ external: JSON.stringify(ref) })
      .where('id', '=', alice.serviceId)
      .execute();
    await legacy.up(db(a) as unknown as Kysely<unknown>);
    const after = (await serviceRow(a, alice.serviceId)).external as Record<string, unknown>;
    assert.deepEqual(after, { ...ref, name: `hp-svc-${alice.serviceId}` });
    // Put back what provisioning recorded.
    await db(a)
      .updateTable('services')
      .set({ external: JSON.stringify(row.external) })
      .where('id', '=', alice.serviceId)
      .execute();
  });
});

describe('T3-M3: subuser invites', () => {
  let alice: GameClient;
  const invite = (email: string) => alice.act('user_invite', { email, permissions: ['control.console'] });

  before(async () => {
    alice = await gameClient(a, { order: true });
  });

  test('an address alice invited can still register and get a game server', async () => {
    const email = `carol-${randomBytes(3).toString('hex')}@example.in`;
    const invited = await invite(email);
    assert.equal(invited.statusCode, 201, invited.body);
    assert.ok(
      [...ptero().state.users.values()].some((u) => u.email === email),
      'the invite made a panel user with that address',
    );

    const password = `pw-carol-${randomBytes(4).toString('hex')}`;
    const username = `carol${randomBytes(3).toString('hex')}`;
    let carol = await a.t.deps.accounts.register({ name: 'Carol Client', email, username, password });
    carol = await a.t.deps.accounts.markVerified(carol.id);
    await a.t.deps.wallet.credit(carol.id, '5000', 'test float');
    const browser = new Browser(a.t, freshIp());
    assert.equal((await browser.login(username, password)).statusCode, 200);
    const ordered = await orderGame(a, { browser });
    assert.equal((await serviceRow(a, ordered.serviceId)).status, 'active');
    const owner = ptero().state.users.get((await serverOf(a, ordered.serviceId)).ownerId);
    assert.equal(owner?.externalId, `hp-${a.t.deps.installation.id}-acct-${carol.id}`);
    assert.equal(
      owner?.email,
      `hp-${a.t.deps.installation.id}-acct-${carol.id}@hostplane.example.in`,
      "the platform's address",
    );
  });

  test("an invite never names another customer's panel user", async () => {
    const bob = await gameClient(a, { order: true });
    const bobEmail = (
      await db(a).selectFrom('accounts').select('email').where('id', '=', bob.accountId).executeTakeFirstOrThrow()
    ).email;
    const res = await invite(bobEmail);
    assert.equal(res.statusCode, 201, res.body);
    assert.ok(!res.body.includes(`hp${bob.accountId}`), res.body);
    assert.equal(res.json().user.username, undefined);
    assert.deepEqual(Object.keys(res.json().user).sort(), ['email', 'permissions', 'uuid']);

    // A panel user made for a customer before panel users got the platform's addresses (the
    // customer's own address, username hp<id>): inviting that address does not name it either.
    const oldEmail = `dave-${randomBytes(3).toString('hex')}@example.in`;
    const made = await fetch(`${ptero().url}/api/application/users`, {
      method: 'POST',
      headers: {
        authorization: `Bearer ${ptero().appKey}`,
        accept: 'application/json',
        'content-type': 'application/json',
      },
      body: JSON.stringify({
        email: oldEmail,
        username: 'hp4242',
        external_id: 'hp-acct-4242',
        first_name: 'Dave',
        last_name: 'Legacy',
      }),
    });
    assert.equal(made.status, 201, await made.text());
    const old = await invite(oldEmail);
    assert.equal(old.statusCode, 201, old.body);
    assert.ok(!old.body.includes('hp4242'), old.body);
    const users = await alice.read('users');
    assert.equal(users.statusCode, 200, users.body);
    assert.ok(!users.body.includes('hp4242') && !users.body.includes(`hp${bob.accountId}"`), users.body);
  });

  test("the platform's own panel addresses cannot be invited", async () => {
    const held = ptero().state.users.size;
    const res = await invite(`HP-${a.t.deps.installation.id}-acct-99999@Hostplane.Example.in`);
    assert.equal(res.statusCode, 422, res.body);
    assert.equal(res.json().code, 'validation_failed');
    assert.match(res.json().errors.email, /platform's own panel users/, res.body);
    assert.equal(ptero().state.users.size, held, 'no panel user was made');
  });

  test('invites are limited to 10 per service and hour: the 11th is 429 with Retry-After', async () => {
    const serverId = (await serverOf(a, alice.serviceId)).id;
    const held = () => [...ptero().state.subusers.values()].filter((s) => s.serverId === serverId);
    // The invites above count (the refused one of a platform address did not reach the panel);
    // one the panel refuses (already a subuser) is given back.
    const before = held().length;
    const existing = [...ptero().state.users.values()].find((u) => u.id === held()[0]?.userId);
    const again = await invite(existing?.email ?? '');
    assert.equal(again.statusCode, 409, again.body);
    for (let i = before; i < 10; i++) {
      const res = await invite(`friend${i}-${randomBytes(3).toString('hex')}@example.in`);
      assert.equal(res.statusCode, 201, res.body);
    }
    assert.equal(held().length, 10);
    const refused = await invite(`friend11-${randomBytes(3).toString('hex')}@example.in`);
    assert.equal(refused.statusCode, 429, refused.body);
    assert.equal(refused.json().success, false);
    assert.equal(refused.json().code, 'rate_limited');
    assert.ok(Number(refused.headers['retry-after']) > 0, JSON.stringify(refused.headers));
    assert.equal(held().length, 10, 'the panel was not asked');
  });
});

// The web-hosting panel misbehaving (reliability, CONTRACT §6): each fault knob of the emulated
// cPanel/WHM server against the web route (dead, hanging, crashing, upgrading: 503
// node_unreachable with Retry-After; a refused call: the panel's words as 409 conflict; never a
// 500, and the action works again once the panel does) and against provisioning (a lost
// createacct answer not making a second account, a crashing panel retried, a dead one failed and
// refunded, an account left behind removed by the cleanup pass, a domain another account holds on
// the server). Then a seeded fuzz of every management action: never a 5xx, every refusal in the
// session envelope, no account made or lost on the server.

import assert from 'node:assert/strict';
import { after, afterEach, before, describe, test } from 'node:test';
import fc from 'fast-check';
import type { LightMyRequestResponse } from 'fastify';
import type { TObject } from 'typebox';
import type { CpanelFaultKnobs } from '../../emulators/src/cpanel/index.ts';
import { sessionRoutes } from '../src/core/product-kit/actions.ts';
import { PRODUCTS } from '../src/core/products/index.ts';
import { retryCleanups } from '../src/worker/cleanup.ts';
import type { Browser } from './support/browser.ts';
import { freshIp, signedInBrowser } from './support/factories.ts';
import { createUpstreamApp, type UpstreamApp, waitFor } from './support/upstreams.ts';

const WEB = '/api/v1/client/web/';
const WAIT = 60_000;
const RETRY_LIMIT = 2;
const FUZZ_RUNS = Number(process.env.FUZZ_RUNS ?? 30);
const FUZZ_SEED = Number(process.env.FUZZ_SEED ?? 20261313);
const DOMAIN = 'fault.example.in';
const USER = 'faultexa';
const STRONG = 'Tr1cky-Passw0rd-Here';

interface Client {
  browser: Browser;
  accountId: number;
}

let u: UpstreamApp;
let c: Client;
let serviceId: number;
let orders = 0;

const db = () => u.t.deps.database.db;
const cpanel = () => {
  assert.ok(u.cpanel, 'the app has no cPanel server');
  return u.cpanel;
};
const account = (user = USER) => {
  const found = cpanel().state.accounts.get(user);
  assert.ok(found, `no account ${user} on the server`);
  return found;
};
const accountsOf = (domain: string) => [...cpanel().state.accounts.values()].filter((a) => a.domain === domain);

const CLEAR: Partial<CpanelFaultKnobs> = {
  latencyMs: 0,
  down: false,
  hang: false,
  errorRate: 0,
  upgrading: false,
  loseResponses: 0,
  loseNext: null,
  failNext: {},
  autosslFails: false,
};
const clearFaults = () => cpanel().setFaults(CLEAR);

const read = (action: string, params: Record<string, string> = {}, id = serviceId, client = c) =>
  client.browser.get(`${WEB}?${new URLSearchParams({ service: String(id), action, ...params })}`);
const act = (action: string, body: Record<string, unknown> = {}, id = serviceId, client = c) =>
  client.browser.post(`${WEB}?service=${id}&action=${action}`, body, { csrf: true });

function ok(res: LightMyRequestResponse, status = 200) {
  assert.equal(res.statusCode, status, res.body);
  assert.equal(res.json().success, true, res.body);
  return res.json();
}

/** A refusal in the session envelope with this status and code; never the panel's address or token. */
function refused(res: LightMyRequestResponse, status: number, code: string): Record<string, unknown> {
  assert.equal(res.statusCode, status, res.body);
  const body = res.json() as Record<string, unknown>;
  assert.equal(body.success, false, res.body);
  assert.equal(body.code, code, res.body);
  assert.equal(typeof body.message, 'string', res.body);
  assert.ok(!res.body.includes(cpanel().whmToken), 'the answer shows the WHM token');
  assert.ok(!res.body.includes(cpanel().url), "the answer shows the panel's address");
  return body;
}

async function newClient(app: UpstreamApp = u): Promise<Client> {
  const { browser, account: acct } = await signedInBrowser(app.t, freshIp());
  await app.t.deps.wallet.credit(acct.id, '5000', 'test float');
  return { browser, accountId: acct.id };
}

interface Placed {
  client: Client;
  serviceId: number;
  jobId: number;
  price: number;
  domain: string;
}

/** A new funded client orders web-starter for `domain`; not waited for. */
async function place(domain: string, app: UpstreamApp = u): Promise<Placed> {
  const client = await newClient(app);
  const plan = await app.t.deps.database.db
    .selectFrom('plans')
    .select(['id', 'price_paise'])
    .where('label', '=', 'web-starter')
    .executeTakeFirstOrThrow();
  const res = await client.browser.post(
    '/api/v1/client/orders/',
    { plan_id: plan.id, config: { region: 'mum1' }, domain, idempotency_key: `wf-${++orders}-${Date.now()}` },
    { csrf: true },
  );
  assert.equal(res.statusCode, 201, res.body);
  return {
    client,
    serviceId: res.json().service.id,
    jobId: res.json().job.id,
    price: Number(plan.price_paise),
    domain,
  };
}

const jobOf = (jobId: number) => db().selectFrom('jobs').selectAll().where('id', '=', jobId).executeTakeFirstOrThrow();

async function settled(placed: Placed) {
  return waitFor(
    `job ${placed.jobId} settled`,
    async () => {
      const job = await jobOf(placed.jobId);
      return job.status === 'succeeded' || job.status === 'failed' ? job : null;
    },
    WAIT,
  );
}

async function serviceRow(id: number) {
  return db().selectFrom('services').selectAll().where('id', '=', id).executeTakeFirstOrThrow();
}

/** The ledger adds up to the balance, which is the float again: the order was refunded; the client was told. */
async function refunded(placed: Placed): Promise<void> {
  const rows = await db()
    .selectFrom('wallet_transactions')
    .select(['kind', 'amount_paise'])
    .where('account_id', '=', placed.client.accountId)
    .orderBy('id')
    .execute();
  const sum = rows.reduce((total, r) => total + Number(r.amount_paise), 0);
  const wallet = await db()
    .selectFrom('wallets')
    .select('balance_paise')
    .where('account_id', '=', placed.client.accountId)
    .executeTakeFirstOrThrow();
  assert.equal(sum, Number(wallet.balance_paise), 'the ledger adds up to the balance');
  assert.equal(sum, 5000 * 100, 'the float is whole again');
  assert.deepEqual(
    rows.map((r) => [r.kind, Number(r.amount_paise)]),
    [
      ['adjustment', 500_000],
      ['order', -placed.price],
      ['refund', placed.price],
    ],
  );
  const notes = (await placed.client.browser.get('/api/v1/client/notifications/')).json().notifications;
  assert.ok(
    notes.some((n: { kind: string }) => n.kind === 'service_failed'),
    JSON.stringify(notes),
  );
}

/** Watch the server while a job runs: the most accounts it ever had for the domain. */
function watchAccounts(domain: string): { most(): number; stop(): void } {
  let most = 0;
  const timer = setInterval(() => {
    most = Math.max(most, accountsOf(domain).length);
  }, 5);
  return {
    most: () => Math.max(most, accountsOf(domain).length),
    stop: () => clearInterval(timer),
  };
}

const cleanupPending = async (id: number) =>
  ((await serviceRow(id)).config as { cleanup_pending?: boolean }).cleanup_pending === true;

before(async () => {
  u = await createUpstreamApp({ web: true, retryLimit: RETRY_LIMIT });
  const placed = await place(DOMAIN);
  const job = await settled(placed);
  assert.equal(job.status, 'succeeded', `${job.error_code}: ${job.error_message}`);
  c = placed.client;
  serviceId = placed.serviceId;
  account();
  // A database, a user and a mailbox for the actions that need a target; AutoSSL issued.
  ok(await act('db_create', { name: 'shop' }), 201);
  ok(await act('db_user_create', { name: 'app', password: STRONG }), 201);
  ok(await act('mailbox_create', { email: 'info', password: 'Mailbox-Pass-2026!' }), 201);
  await waitFor(
    'AutoSSL issued',
    async () => {
      const https = (await read('https_status')).json().https;
      return https?.certificate && !https.certificate.self_signed;
    },
    WAIT,
  );
});
after(() => u.close());

// ---- the actions under faults ----

/** One call of every web action, with parameters it would succeed with on a healthy panel. */
const EVERY_CALL: [string, () => Promise<LightMyRequestResponse>][] = [
  ['overview', () => read('overview')],
  ['usage', () => read('usage')],
  ['nameservers', () => read('nameservers')],
  ['dns', () => read('dns')],
  ['databases', () => read('databases')],
  ['db_create', () => act('db_create', { name: 'faulty' })],
  ['db_delete', () => act('db_delete', { name: 'shop' })],
  ['db_user_create', () => act('db_user_create', { name: 'faulty', password: STRONG })],
  ['db_user_delete', () => act('db_user_delete', { name: 'app' })],
  ['db_assign', () => act('db_assign', { user: 'app', database: 'shop', privileges: ['SELECT'] })],
  ['mailboxes', () => read('mailboxes')],
  ['mailbox_create', () => act('mailbox_create', { email: 'faulty', password: 'Faulty-Mailbox-Pass-1' })],
  ['mailbox_delete', () => act('mailbox_delete', { email: 'info' })],
  ['mailbox_password', () => act('mailbox_password', { email: 'info', password: 'Changed-Mailbox-Pass-2' })],
  ['mailbox_quota', () => act('mailbox_quota', { email: 'info', quota_mb: 64 })],
  ['php', () => read('php')],
  ['php_set', () => act('php_set', { version: 'ea-php81' })],
  ['password_change', () => act('password_change', { password: 'Faulty-Account-Pass-3' })],
  ['https_status', () => read('https_status')],
  ['https_force', () => act('https_force')],
  ['https_unforce', () => act('https_unforce')],
];

/** What the account holds, to show a refused call changed nothing. */
function snapshot(): string {
  const a = account();
  return JSON.stringify({
    databases: a.databases.map((d) => d.name),
    dbUsers: a.dbUsers.map((x) => x.name),
    grants: a.grants,
    mailboxes: a.mailboxes.map((m) => [m.email, m.quotaMb, m.password]),
    php: a.php,
    sslRedirects: a.sslRedirects,
    password: a.password,
  });
}

/** Every action refused with this status and code (events still answer); nothing changed on the server. */
async function everyActionRefused(status: number, code: string): Promise<void> {
  const before = snapshot();
  const names = PRODUCTS.web.actions.filter((a) => sessionRoutes(a).includes('panel')).map((a) => a.name);
  assert.deepEqual([...EVERY_CALL.map(([n]) => n), 'events'].sort(), [...names].sort(), 'every action is called');
  for (const [name, call] of EVERY_CALL) {
    const res = await call();
    refused(res, status, code);
    assert.ok(Number(res.headers['retry-after']) >= 1, `${name}: Retry-After ${res.headers['retry-after']}`);
  }
  ok(await read('events'));
  assert.equal(snapshot(), before, 'nothing changed on the server');
}

/** Once the panel is healthy again, reads and a change work. */
async function worksAgain(): Promise<void> {
  await clearFaults();
  ok(await read('overview'));
  ok(await read('databases'));
  ok(await act('php_set', { version: 'ea-php83' }));
  assert.equal(account().php[DOMAIN], 'ea-php83');
}

describe('panel faults on actions', () => {
  afterEach(clearFaults);

  test('down: every action is 503 node_unreachable with Retry-After, never a 500; events still answer; then it works again', async () => {
    await cpanel().setFaults({ down: true });
    await everyActionRefused(503, 'node_unreachable');
    const sso = await c.browser.get(`/api/v1/client/services/?id=${serviceId}&action=sso`);
    refused(sso, 503, 'node_unreachable');
    await worksAgain();
  });

  test('errorRate 1 (the API subprocess crashes, HTTP 500): every action is 503 node_unreachable; then it works again', async () => {
    await cpanel().setFaults({ errorRate: 1 });
    await everyActionRefused(503, 'node_unreachable');
    await worksAgain();
  });

  test('upgrading (HTTP 503 from cpsrvd): every action is 503 node_unreachable; then it works again', async () => {
    await cpanel().setFaults({ upgrading: true });
    await everyActionRefused(503, 'node_unreachable');
    await worksAgain();
  });

  test('hang: 503 node_unreachable once the driver stops waiting', { timeout: 120_000 }, async () => {
    await cpanel().setFaults({ hang: true });
    const before = snapshot();
    for (const res of [
      await read('overview'),
      await read('databases'),
      await act('db_create', { name: 'hung' }),
      await act('password_change', { password: 'Hung-Account-Pass-4' }),
    ]) {
      refused(res, 503, 'node_unreachable');
    }
    ok(await read('events'));
    assert.equal(snapshot(), before);
    await worksAgain();
  });

  test('latency below the deadline: actions still work', async () => {
    await cpanel().setFaults({ latencyMs: 150 });
    ok(await read('databases'));
    ok(await act('php_set', { version: 'ea-php80' }));
    assert.equal(account().php[DOMAIN], 'ea-php80');
  });

  test("failNext on each function an action calls: 409 conflict with the panel's text, nothing changed; the same call then succeeds", async () => {
    const cases: [string, string, () => Promise<LightMyRequestResponse>, number][] = [
      ['Mysql::create_database', 'db_create', () => act('db_create', { name: 'second' }), 201],
      [
        'Mysql::create_user',
        'db_user_create',
        () => act('db_user_create', { name: 'seconduser', password: STRONG }),
        201,
      ],
      [
        'Mysql::set_privileges_on_database',
        'db_assign',
        () => act('db_assign', { user: 'seconduser', database: 'second', privileges: ['SELECT', 'UPDATE'] }),
        200,
      ],
      ['Mysql::delete_user', 'db_user_delete', () => act('db_user_delete', { name: 'seconduser' }), 200],
      ['Mysql::delete_database', 'db_delete', () => act('db_delete', { name: 'second' }), 200],
      [
        'Email::add_pop',
        'mailbox_create',
        () => act('mailbox_create', { email: 'sales', password: 'Sales-Box-Pass-45' }),
        201,
      ],
      [
        'Email::passwd_pop',
        'mailbox_password',
        () => act('mailbox_password', { email: 'sales', password: 'Sales-Box-Pass-46' }),
        200,
      ],
      ['Email::edit_pop_quota', 'mailbox_quota', () => act('mailbox_quota', { email: 'sales', quota_mb: 300 }), 200],
      ['Email::delete_pop', 'mailbox_delete', () => act('mailbox_delete', { email: 'sales' }), 200],
      ['LangPHP::php_set_vhost_versions', 'php_set', () => act('php_set', { version: 'ea-php74' }), 200],
      ['SSL::toggle_ssl_redirect_for_domains', 'https_force', () => act('https_force'), 200],
      ['SSL::toggle_ssl_redirect_for_domains', 'https_unforce', () => act('https_unforce'), 200],
      ['passwd', 'password_change', () => act('password_change', { password: 'Fail-Next-Account-Pass-5' }), 200],
      // Reads: the refusal is passed on the same way.
      ['Mysql::list_databases', 'databases', () => read('databases'), 200],
      ['Email::list_pops_with_disk', 'mailboxes', () => read('mailboxes'), 200],
      ['ResourceUsage::get_usages', 'usage', () => read('usage'), 200],
      ['DNS::parse_zone', 'dns', () => read('dns'), 200],
      ['LangPHP::php_get_installed_versions', 'php', () => read('php'), 200],
      ['SSL::installed_hosts', 'https_status', () => read('https_status'), 200],
      ['listaccts', 'overview', () => read('overview'), 200],
    ];
    for (const [fn, name, call, status] of cases) {
      const before = snapshot();
      await cpanel().setFaults({ failNext: { [fn]: 1 } });
      const res = refused(await call(), 409, 'conflict');
      assert.match(String(res.message), /internal error/, `${name}: ${res.message}`);
      assert.deepEqual(cpanel().faults.failNext, {}, `${name}: ${fn} was called`);
      assert.equal(snapshot(), before, `${name}: nothing changed`);
      ok(await call(), status);
    }
    // What the successful calls did, on the server.
    assert.ok(!account().databases.some((d) => d.name === `${USER}_second`));
    assert.ok(!account().mailboxes.some((m) => m.email === `sales@${DOMAIN}`));
    assert.equal(account().php[DOMAIN], 'ea-php74');
    assert.deepEqual(account().sslRedirects, []);
    assert.ok(cpanel().checkPassword(USER, 'Fail-Next-Account-Pass-5'));
  });

  test('loseNext on a change: the panel did it but the answer is lost: 503 node_unreachable; the change is there, and asking again says so', async (t) => {
    // Room under the plan's 2 databases for the lost one and a second try.
    ok(await act('db_delete', { name: 'shop' }));
    await cpanel().setFaults({ loseNext: 'Mysql::create_database' });
    refused(await act('db_create', { name: 'lost' }), 503, 'node_unreachable');
    assert.equal(cpanel().faults.loseNext, null, 'the answer was lost');
    assert.ok(
      account().databases.some((d) => d.name === `${USER}_lost`),
      'the database was made',
    );
    const listed = ok(await read('databases')).databases.map((d: { name: string }) => d.name);
    assert.ok(listed.includes(`${USER}_lost`));
    const again = await act('db_create', { name: 'lost' });
    t.diagnostic(`creating it again: ${again.statusCode} ${again.json().code}`);
    const body = refused(again, 409, 'conflict');
    assert.match(String(body.message), /already exists/);
    assert.equal(account().databases.filter((d) => d.name === `${USER}_lost`).length, 1);
    ok(await act('db_delete', { name: 'lost' }));
    ok(await act('db_create', { name: 'shop' }), 201);
  });

  test('loseNext on password_change: 503; the panel has the new password; asking again makes the stored credentials match', async (t) => {
    const credentials = async () =>
      ok(await c.browser.get(`/api/v1/client/services/?id=${serviceId}&action=credentials`)).credentials as {
        username: string;
        password: string;
      };
    const before = await credentials();
    assert.ok(cpanel().checkPassword(USER, before.password));
    await cpanel().setFaults({ loseNext: 'passwd' });
    refused(await act('password_change', { password: 'Lost-Answer-Account-Pass-8' }), 503, 'node_unreachable');
    assert.equal(cpanel().faults.loseNext, null, 'the answer was lost');
    assert.ok(cpanel().checkPassword(USER, 'Lost-Answer-Account-Pass-8'), 'the panel changed it');
    const stale = await credentials();
    t.diagnostic(
      `stored credentials after the lost answer: ${stale.password === before.password ? 'the old password (stale)' : 'the new one'}`,
    );
    ok(await act('password_change', { password: 'Lost-Answer-Account-Pass-8' }));
    const after = await credentials();
    assert.equal(after.password, 'Lost-Answer-Account-Pass-8');
    assert.ok(cpanel().checkPassword(USER, after.password));
  });
});

// ---- provisioning ----

describe('panel faults during provisioning', () => {
  afterEach(clearFaults);

  test("loseNext 'createacct': the account is made, its answer lost; the job finds it: exactly one account, succeeded", async () => {
    const creates = () => cpanel().calls.get('POST /json-api/createacct') ?? 0;
    const before = creates();
    await cpanel().setFaults({ loseNext: 'createacct' });
    const placed = await place('lost.example.in');
    const watch = watchAccounts(placed.domain);
    const job = await settled(placed);
    watch.stop();
    assert.equal(job.status, 'succeeded', `${job.error_code}: ${job.error_message}`);
    assert.equal(cpanel().faults.loseNext, null, 'the answer was lost');
    assert.equal(creates() - before, 1, 'createacct was called once');
    assert.equal(watch.most(), 1, 'never two accounts');
    const [made] = accountsOf(placed.domain);
    assert.ok(made);
    const service = await serviceRow(placed.serviceId);
    assert.equal(service.status, 'active');
    assert.deepEqual(service.external, { username: made.user, domain: placed.domain, marker: made.email });
    assert.match(made.email, /^hp-[a-z2-7]{8}-svc-\d+@/, 'the account carries the service marker');
    const creds = ok(
      await placed.client.browser.get(`/api/v1/client/services/?id=${placed.serviceId}&action=credentials`),
    ).credentials;
    assert.equal(creds.username, made.user);
    assert.ok(cpanel().checkPassword(made.user, creds.password), 'the stored password opens the account');
    ok(await read('overview', {}, placed.serviceId, placed.client));
  });

  test('errorRate 1 for the first attempt, then a healthy panel: retried, one account, active', async () => {
    await cpanel().setFaults({ errorRate: 1 });
    const placed = await place('flaky.example.in');
    const watch = watchAccounts(placed.domain);
    await waitFor(
      'an attempt failed on the crashing panel',
      async () => {
        const job = await jobOf(placed.jobId);
        return job.error_code === 'node_unreachable' && job.status === 'running';
      },
      WAIT,
    );
    await clearFaults();
    const job = await settled(placed);
    watch.stop();
    assert.equal(job.status, 'succeeded', `${job.error_code}: ${job.error_message}`);
    assert.ok(job.attempts >= 2, `attempts ${job.attempts}`);
    assert.equal(watch.most(), 1);
    assert.equal((await serviceRow(placed.serviceId)).status, 'active');
    const kinds = ok(await read('events', {}, placed.serviceId, placed.client)).events.map(
      (e: { kind: string }) => e.kind,
    );
    assert.ok(kinds.includes('provision_retry'), kinds.join());
  });

  test('errorRate 0.3 throughout: it ends active with one account, or failed and refunded; never two accounts', async (t) => {
    await cpanel().setFaults({ errorRate: 0.3 });
    const placed = await place('shaky.example.in');
    const watch = watchAccounts(placed.domain);
    const job = await settled(placed);
    watch.stop();
    await clearFaults();
    t.diagnostic(`job ${job.status} after ${job.attempts} attempts (${job.error_code ?? 'no error'})`);
    assert.ok(watch.most() <= 1, `${watch.most()} accounts for one domain`);
    const service = await serviceRow(placed.serviceId);
    if (job.status === 'succeeded') {
      assert.equal(service.status, 'active');
      assert.equal(accountsOf(placed.domain).length, 1);
    } else {
      assert.equal(service.status, 'failed');
      assert.equal(job.error_code, 'node_unreachable');
      await refunded(placed);
      t.diagnostic(`accounts left for the domain: ${accountsOf(placed.domain).length}`);
      if (accountsOf(placed.domain).length > 0)
        assert.equal(await cleanupPending(placed.serviceId), true, 'an account left behind is marked');
      // The undo may also have failed on an account never made (the mark is then cautious):
      // either way one pass with the panel healthy clears the domain and the mark.
      if (await cleanupPending(placed.serviceId)) await retryCleanups(u.t.deps, u.t.deps.logger);
      assert.equal(accountsOf(placed.domain).length, 0);
      assert.equal(await cleanupPending(placed.serviceId), false);
    }
  });

  test('down until the retries run out: failed, refunded, no account on the server, nothing to clean up', async () => {
    await cpanel().setFaults({ down: true });
    const placed = await place('dead.example.in');
    const job = await settled(placed);
    await clearFaults();
    assert.equal(job.status, 'failed');
    assert.equal(job.error_code, 'node_unreachable');
    assert.equal(job.attempts, RETRY_LIMIT + 1, 'the first attempt and every retry');
    const service = await serviceRow(placed.serviceId);
    assert.equal(service.status, 'failed');
    await refunded(placed);
    assert.equal(accountsOf(placed.domain).length, 0);
    assert.equal(await cleanupPending(placed.serviceId), false);
    refused(await read('overview', {}, placed.serviceId, placed.client), 409, 'no_panel_user');
    // The domain can be ordered again once the panel is back.
    const again = await place(placed.domain);
    assert.equal((await settled(again)).status, 'succeeded');
    assert.equal(accountsOf(placed.domain).length, 1);
  });

  test('the account made, then the panel dies until the retries run out: failed and refunded at once; the cleanup pass removes the account once the panel is back', async () => {
    // The account is made but its answer lost; before the retry finds it, the panel goes down.
    await cpanel().setFaults({ loseNext: 'createacct' });
    const placed = await place('orphan.example.in');
    await new Promise<void>((resolve) => {
      const timer = setInterval(() => {
        if (accountsOf(placed.domain).length === 0) return;
        clearInterval(timer);
        void cpanel()
          .setFaults({ down: true })
          .then(() => resolve());
      }, 2);
    });
    const job = await settled(placed);
    assert.equal(job.status, 'failed', `${job.error_code}: ${job.error_message}`);
    assert.equal(job.error_code, 'node_unreachable');
    await refunded(placed);
    // The undo ran while the panel was down: the account is still there, and the service says so.
    assert.equal(accountsOf(placed.domain).length, 1);
    assert.equal(await cleanupPending(placed.serviceId), true);
    const kinds = ok(await read('events', {}, placed.serviceId, placed.client)).events.map(
      (e: { kind: string }) => e.kind,
    );
    assert.ok(kinds.includes('cleanup_pending'), kinds.join());
    // The cleanup pass: nothing while the panel is down …
    assert.deepEqual(await retryCleanups(u.t.deps, u.t.deps.logger), { cleaned: 0, left: 1 });
    await cpanel().setFaults({ down: false });
    // … and once it answers, the account goes and the mark with it.
    assert.deepEqual(await retryCleanups(u.t.deps, u.t.deps.logger), { cleaned: 1, left: 0 });
    assert.equal(accountsOf(placed.domain).length, 0, 'the failed service left its account behind');
    assert.equal(await cleanupPending(placed.serviceId), false);
    assert.deepEqual(await retryCleanups(u.t.deps, u.t.deps.logger), { cleaned: 0, left: 0 });
    // Our other accounts are untouched.
    account();
  });

  test('a domain another account holds on the server: the job fails cleanly, refunded; that account is left alone and none is made', async () => {
    const cp = cpanel();
    const made = await fetch(`${cp.url}/json-api/createacct?api.version=1`, {
      method: 'POST',
      headers: {
        authorization: `whm ${cp.whmUser}:${cp.whmToken}`,
        'content-type': 'application/x-www-form-urlencoded',
      },
      body: new URLSearchParams({ username: 'elsewher', domain: 'taken.example.in', plan: 'default' }).toString(),
    });
    assert.equal(made.status, 200);
    assert.equal(((await made.json()) as { metadata: { result: number } }).metadata.result, 1);
    // What we could have done to it; AutoSSL replaces its certificate on the panel's own clock.
    const seen = () => {
      const { certs: _c, autosslDueAt: _d, autosslProblems: _p, ...rest } = cp.state.accounts.get('elsewher') ?? {};
      return JSON.stringify(rest);
    };
    const foreign = seen();
    const count = cp.state.accounts.size;

    const placed = await place('taken.example.in');
    const job = await settled(placed);
    assert.equal(job.status, 'failed');
    assert.equal(job.attempts, 1, 'a refusal is not retried');
    assert.equal(job.error_code, 'domain_taken');
    assert.match(job.error_message ?? '', /already hosted on the server/);
    assert.equal((await serviceRow(placed.serviceId)).status, 'failed');
    await refunded(placed);
    assert.equal(cp.state.accounts.size, count, 'no account made');
    assert.equal(seen(), foreign, 'the other account is untouched');
    assert.equal(await cleanupPending(placed.serviceId), false);
  });
});

// ---- fuzz ----

const NASTY_STRINGS = [
  '',
  ' ',
  '\u0000',
  'a\u0000b',
  '..',
  '../',
  '../../etc/passwd',
  '/',
  '%2e%2e/x',
  '..\\..\\windows',
  '\u202egnp.exe',
  'ä😀𝕏\u0301',
  '😀'.repeat(300),
  'x'.repeat(5000),
  'x'.repeat(70_000),
  '<script>alert(1)</script>',
  "' or 1=1 --",
  'shop`; DROP DATABASE mysql; --',
  '"quoted"',
  '\r\nX-Injected: 1',
  '$'.concat('{jndi:ldap://x}'),
  'info@other.example.in',
  `info@${DOMAIN}@evil.example`,
  '-1',
  '2147483648',
  'NaN',
  'true',
  'null',
  '[]',
  '{}',
];
const NASTY_VALUES: unknown[] = [
  0,
  -1,
  -0.5,
  1.5,
  2 ** 31,
  2 ** 53,
  -(2 ** 53),
  1e308,
  true,
  false,
  null,
  [],
  [1, 'a', null],
  [[[[[[[[[[]]]]]]]]]],
  {},
  { nested: { deeper: { deepest: ['..'] } } },
  JSON.parse('{"__proto__":{"polluted":true}}'),
  { constructor: { prototype: { polluted: true } } },
];
const PLAUSIBLE = [
  'shop',
  'app',
  'fuzz',
  `${USER}_shop`,
  'info',
  `info@${DOMAIN}`,
  'fuzzbox',
  'ea-php82',
  'ea-php99',
  'inherit',
  STRONG,
  'Fuzz-Mailbox-Pass-2026!',
  'password1',
  'SELECT',
  'ALL PRIVILEGES',
  '0',
  '1024',
];

const nastyString = fc.constantFrom(...NASTY_STRINGS);
const nasty: fc.Arbitrary<unknown> = fc.oneof(
  { weight: 3, arbitrary: nastyString },
  { weight: 2, arbitrary: fc.constantFrom(...NASTY_VALUES) },
  { weight: 1, arbitrary: fc.string({ unit: 'binary', maxLength: 40 }) },
);

interface JsonSchema {
  type?: string;
  properties?: Record<string, JsonSchema>;
  items?: JsonSchema;
  anyOf?: JsonSchema[];
  const?: unknown;
}

/** A value of the schema's type (often plausible, so the request reaches the panel) or a spoiled one. */
function valueFor(schema: JsonSchema | undefined, depth = 0): fc.Arbitrary<unknown> {
  if (!schema || depth > 3) return nasty;
  let own: fc.Arbitrary<unknown>;
  if (schema.anyOf) {
    const consts = schema.anyOf.map((s) => s.const).filter((v) => v !== undefined);
    own = consts.length > 0 ? fc.constantFrom(...consts) : fc.oneof(...schema.anyOf.map((s) => valueFor(s, depth + 1)));
  } else {
    switch (schema.type) {
      case 'integer':
        own = fc.oneof(fc.integer({ min: 0, max: 4096 }), fc.constantFrom(0, -1, 1_048_577, 2 ** 31, 2 ** 53));
        break;
      case 'boolean':
        own = fc.boolean();
        break;
      case 'array':
        own = fc.array(valueFor(schema.items, depth + 1), { maxLength: 4 });
        break;
      case 'object':
        own = objectFor(schema, depth + 1);
        break;
      default:
        own = fc.oneof(
          fc.constantFrom(...PLAUSIBLE),
          fc.string({ maxLength: 30 }),
          fc.string({ unit: 'grapheme', maxLength: 30 }),
          nastyString,
        );
    }
  }
  return fc.oneof({ weight: 3, arbitrary: own }, { weight: 1, arbitrary: nasty });
}

function objectFor(schema: JsonSchema, depth = 0): fc.Arbitrary<Record<string, unknown>> {
  const props = schema.properties ?? {};
  const shaped = fc.record(Object.fromEntries(Object.entries(props).map(([key, sub]) => [key, valueFor(sub, depth)])), {
    requiredKeys: [],
  }) as fc.Arbitrary<Record<string, unknown>>;
  const extra = fc
    .tuple(shaped, fc.oneof(fc.string({ minLength: 1, maxLength: 12 }), fc.constantFrom('action', 'service')), nasty)
    .map(([object, key, value]) => ({ ...object, [key]: value }));
  return fc.oneof({ weight: 5, arbitrary: shaped }, { weight: 1, arbitrary: extra });
}

/** One request of the fuzz: the parameters, or a body that is not an object at all. */
type Input = { kind: 'params'; params: Record<string, unknown> } | { kind: 'raw'; body: string | unknown[] };

const inputFor = (schema: TObject): fc.Arbitrary<Input> =>
  fc.oneof(
    {
      weight: 8,
      arbitrary: objectFor(schema as unknown as JsonSchema).map((params): Input => ({ kind: 'params', params })),
    },
    {
      weight: 1,
      arbitrary: fc
        .constantFrom<string | unknown[]>('{"name":', '[1,2', 'null', '"text"', '42', [], [{ name: '..' }])
        .map((body): Input => ({ kind: 'raw', body })),
    },
  );

/** A value as it goes in a query string: text as is, arrays as repeated keys, anything else as JSON. */
function toQuery(search: URLSearchParams, key: string, value: unknown): void {
  if (Array.isArray(value)) {
    for (const item of value.slice(0, 5)) search.append(key, typeof item === 'string' ? item : JSON.stringify(item));
    return;
  }
  const text = typeof value === 'string' ? value : (JSON.stringify(value) ?? '');
  search.append(key, text.slice(0, 6000));
}

async function send(action: { name: string; method: 'read' | 'mutate' }, input: Input) {
  const url = `${WEB}?service=${serviceId}&action=${action.name}`;
  if (action.method === 'read') {
    const search = new URLSearchParams();
    if (input.kind === 'params') for (const [k, v] of Object.entries(input.params)) toQuery(search, k, v);
    const query = search.toString();
    return c.browser.get(query ? `${url}&${query}` : url);
  }
  const payload =
    input.kind === 'params'
      ? JSON.stringify(input.params)
      : typeof input.body === 'string'
        ? input.body
        : JSON.stringify(input.body);
  return c.browser.request('POST', url, {
    csrf: true,
    body: payload,
    headers: { 'content-type': 'application/json' },
  });
}

/** Never a 5xx; a refusal is the session envelope, a success says so. */
function sane(res: LightMyRequestResponse, what: string): void {
  assert.ok(res.statusCode < 500, `${what}: ${res.statusCode} ${res.body.slice(0, 500)}`);
  const body = res.json() as Record<string, unknown>;
  if (res.statusCode >= 400) {
    assert.equal(body.success, false, what);
    assert.equal(typeof body.message, 'string', what);
    assert.equal(typeof body.code, 'string', what);
    assert.equal(typeof body.errors, 'object', what);
  } else {
    assert.equal(body.success, true, what);
  }
  assert.ok(!res.body.includes(cpanel().whmToken), `${what}: the WHM token in the answer`);
  assert.equal(({} as { polluted?: unknown }).polluted, undefined, `${what}: prototype polluted`);
}

describe('fuzz', () => {
  test('every web action, seeded random parameters: no 5xx, the envelope, no account made or lost on the server', async (t) => {
    await clearFaults();
    const actions = PRODUCTS.web.actions.filter((a) => sessionRoutes(a).includes('panel'));
    assert.equal(actions.length, 22, actions.map((a) => a.name).join());
    const accounts = [...cpanel().state.accounts.keys()].sort();
    const codes = new Map<string, number>();
    for (const [i, action] of actions.entries()) {
      const inputs = fc.sample(inputFor(action.params), { seed: FUZZ_SEED + i, numRuns: FUZZ_RUNS });
      for (const input of inputs) {
        const res = await send(action, input);
        const shown = JSON.stringify(input).slice(0, 300);
        sane(res, `${action.method} ${action.name} ${shown}`);
        const key = `${res.statusCode} ${res.json().code ?? 'ok'}`;
        codes.set(key, (codes.get(key) ?? 0) + 1);
      }
    }
    assert.deepEqual([...cpanel().state.accounts.keys()].sort(), accounts, 'no account made or lost on the server');
    assert.equal((await serviceRow(serviceId)).status, 'active');
    ok(await read('overview'));
    t.diagnostic(`answers: ${JSON.stringify(Object.fromEntries([...codes].sort()))}`);
    // The fuzz got past the parameter checks to the panel too.
    assert.ok(
      [...codes.keys()].some((k) => k.startsWith('2')),
      JSON.stringify(Object.fromEntries(codes)),
    );
  });
});

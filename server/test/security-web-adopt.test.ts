// Security review 3, T3-H1: web provisioning must never adopt a cPanel account it did not create
// for the service. The review's scenario through both HTTP surfaces: staff made `legacyex` for
// legacyexample.in directly on WHM (with a mailbox `ceo@`); a customer ordering hosting for that
// domain gets neither the account, its mailboxes nor a cPanel session into it: the job fails with
// 422 domain_taken and the order is refunded, and `legacyex` is left as it was. A candidate
// username held by an unrelated account is taken (the next one is used); our own account found
// again after a lost createacct answer or a re-run of the steps is adopted (it carries the
// service's marker, its contact e-mail); an account carrying another installation's marker is not.

import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { LightMyRequestResponse } from 'fastify';
import { stepRun } from '../src/core/product-kit/steps.ts';
import { PRODUCTS } from '../src/core/products/index.ts';
import { accountMarker } from '../src/core/products/web/username.ts';
import { externalName } from '../src/core/system/installation.ts';
import { createAccount } from '../src/upstreams/cpanel/accounts.ts';
import type { CpanelClient } from '../src/upstreams/cpanel/client.ts';
import { UpstreamError } from '../src/upstreams/errors.ts';
import type { Browser } from './support/browser.ts';
import { freshIp, signedInBrowser } from './support/factories.ts';
import { type ApiClient, apiClient } from './support/rest.ts';
import { createUpstreamApp, type UpstreamApp, waitFor } from './support/upstreams.ts';

const WEB = '/api/v1/client/web/';
const WAIT = 60_000;
const LEGACY_DOMAIN = 'legacyexample.in';
const LEGACY_USER = 'legacyex';
const LEGACY_PASSWORD = 'Legacy-Acct-Pass-2019!';
const CEO_PASSWORD = 'Ceo-Mailbox-Pass-2019!';

let u: UpstreamApp;
let orders = 0;

const db = () => u.t.deps.database.db;
const cpanel = () => {
  assert.ok(u.cpanel, 'the app has no cPanel server');
  return u.cpanel;
};
const accountsOf = (domain: string) => [...cpanel().state.accounts.values()].filter((a) => a.domain === domain);

/** A WHM API 1 call with the operator's token, as staff (or another system) would make it. */
async function whm(
  fn: string,
  params: Record<string, string>,
): Promise<{ metadata: { result: number; reason: string } }> {
  const cp = cpanel();
  const res = await fetch(`${cp.url}/json-api/${fn}?api.version=1`, {
    method: 'POST',
    headers: { authorization: `whm ${cp.whmUser}:${cp.whmToken}`, 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams(params).toString(),
  });
  assert.equal(res.status, 200);
  return (await res.json()) as { metadata: { result: number; reason: string } };
}

async function staffCreates(username: string, domain: string, contactemail: string, password: string) {
  const made = await whm('createacct', { username, domain, plan: 'default', password, contactemail });
  assert.equal(made.metadata.result, 1, made.metadata.reason);
}

interface Customer {
  browser: Browser;
  accountId: number;
}

async function customer(): Promise<Customer> {
  const { browser, account } = await signedInBrowser(u.t, freshIp());
  await u.t.deps.wallet.credit(account.id, '5000', 'test float');
  return { browser, accountId: account.id };
}

async function webPlan(): Promise<{ id: number; price: number }> {
  const plan = await db()
    .selectFrom('plans')
    .select(['id', 'price_paise'])
    .where('label', '=', 'web-starter')
    .executeTakeFirstOrThrow();
  return { id: plan.id, price: Number(plan.price_paise) };
}

/** The session surface's order of web-starter for `domain`; its answer. */
async function order(c: Customer, domain: string): Promise<LightMyRequestResponse> {
  const plan = await webPlan();
  return c.browser.post(
    '/api/v1/client/orders/',
    { plan_id: plan.id, config: { region: 'mum1' }, domain, idempotency_key: `adopt-${++orders}` },
    { csrf: true },
  );
}

const jobRow = (id: number) => db().selectFrom('jobs').selectAll().where('id', '=', id).executeTakeFirstOrThrow();
const serviceRow = (id: number) =>
  db().selectFrom('services').selectAll().where('id', '=', id).executeTakeFirstOrThrow();

async function settled(jobId: number) {
  return waitFor(
    `job ${jobId} settled`,
    async () => {
      const job = await jobRow(jobId);
      return job.status === 'succeeded' || job.status === 'failed' ? job : null;
    },
    WAIT,
  );
}

/** A refusal in the session envelope. */
function refused(res: LightMyRequestResponse, status: number, code: string) {
  assert.equal(res.statusCode, status, res.body);
  assert.equal(res.json().success, false, res.body);
  assert.equal(res.json().code, code, res.body);
}

/** The client's ledger: the float, the order, its refund. */
async function refunded(accountId: number, price: number) {
  const rows = await db()
    .selectFrom('wallet_transactions')
    .select(['kind', 'amount_paise'])
    .where('account_id', '=', accountId)
    .orderBy('id')
    .execute();
  assert.deepEqual(
    rows.map((r) => [r.kind, Number(r.amount_paise)]),
    [
      ['adjustment', 500_000],
      ['order', -price],
      ['refund', price],
    ],
  );
}

/** What an account holds, to show nothing was done to it (AutoSSL replaces certificates on its own clock). */
function seen(user: string): string {
  const {
    certs: _c,
    autosslDueAt: _d,
    autosslProblems: _p,
    ...rest
  } = cpanel().state.accounts.get(user) ?? ({} as Record<string, unknown>);
  return JSON.stringify(rest);
}

const legacySeen = () => seen(LEGACY_USER);

before(async () => {
  u = await createUpstreamApp({ web: true, retryLimit: 2 });
  // Staff make an account directly in WHM, with a mailbox, as the review did.
  await staffCreates(LEGACY_USER, LEGACY_DOMAIN, 'it@legacyexample.in', LEGACY_PASSWORD);
  const pop = await whm('uapi_cpanel', {
    'cpanel.user': LEGACY_USER,
    'cpanel.module': 'Email',
    'cpanel.function': 'add_pop',
    email: 'ceo',
    domain: LEGACY_DOMAIN,
    password: CEO_PASSWORD,
    quota: '0',
  });
  assert.equal(pop.metadata.result, 1, pop.metadata.reason);
});
after(() => u.close());

describe('T3-H1: a domain already on the server under an account that is not ours', () => {
  test('the session order: no legacyex, no mailboxes, no SSO; the job fails 422 domain_taken and the order is refunded', async (t) => {
    const before = legacySeen();
    const count = cpanel().state.accounts.size;
    const c = await customer();
    const plan = await webPlan();
    const res = await order(c, LEGACY_DOMAIN);
    assert.equal(res.statusCode, 201, res.body);
    const serviceId = res.json().service.id as number;
    const job = await settled(res.json().job.id);
    t.diagnostic(`job ${job.status}: ${job.error_code} ${job.error_message}`);
    assert.equal(job.status, 'failed', 'the service never went active on the foreign account');
    assert.equal(job.error_code, 'domain_taken');
    assert.equal(job.attempts, 1, 'a refusal is not retried');
    assert.match(job.error_message ?? '', /legacyexample\.in is already hosted on the server/);
    assert.doesNotMatch(job.error_message ?? '', /legacyex\b/, "the holder's username is not told");

    // The client sees the failure with its code on the service and its last job.
    const view = await c.browser.get(`/api/v1/client/services/?id=${serviceId}`);
    assert.equal(view.statusCode, 200, view.body);
    const service = view.json().service;
    assert.equal(service.status, 'failed');
    assert.equal(service.last_job.error.code, 'domain_taken', view.body);
    assert.match(service.last_job.error.message, /already hosted on the server/);
    await refunded(c.accountId, plan.price);
    const notes = (await c.browser.get('/api/v1/client/notifications/')).json().notifications;
    assert.ok(
      notes.some((n: { kind: string }) => n.kind === 'service_failed'),
      JSON.stringify(notes),
    );

    // Nothing of legacyex reaches the client.
    const read = (action: string) => c.browser.get(`${WEB}?service=${serviceId}&action=${action}`);
    for (const action of ['overview', 'mailboxes', 'databases', 'usage']) {
      const answer = await read(action);
      refused(answer, 409, 'no_panel_user');
      assert.ok(!answer.body.includes(LEGACY_USER), `${action} names ${LEGACY_USER}`);
      assert.ok(!answer.body.includes('ceo@'), `${action} lists a mailbox of ${LEGACY_USER}`);
    }
    refused(
      await c.browser.post(
        `${WEB}?service=${serviceId}&action=mailbox_password`,
        { email: 'ceo', password: 'Taken-Over-Pass-2026!' },
        { csrf: true },
      ),
      409,
      'no_panel_user',
    );
    refused(
      await c.browser.post(
        `${WEB}?service=${serviceId}&action=password_change`,
        { password: 'Taken-Over-Pass-2026!' },
        { csrf: true },
      ),
      409,
      'no_panel_user',
    );
    const sso = await c.browser.get(`/api/v1/client/services/?id=${serviceId}&action=sso`);
    assert.ok(sso.statusCode >= 400, `sso answered ${sso.statusCode}: ${sso.body}`);
    assert.ok(!sso.body.includes('session='), 'no cPanel session');
    const creds = await c.browser.get(`/api/v1/client/services/?id=${serviceId}&action=credentials`);
    assert.ok(!creds.body.includes(`"${LEGACY_USER}"`), `credentials name ${LEGACY_USER}: ${creds.body}`);
    const events = (await c.browser.get(`/api/v1/client/services/?id=${serviceId}&action=events`)).body;
    assert.doesNotMatch(events, /Hosting account \w+ created/);

    // The service records no account, and legacyex is exactly as staff left it; none was made.
    const row = await serviceRow(serviceId);
    assert.notEqual((row.external as { username?: string } | null)?.username, LEGACY_USER);
    assert.equal(cpanel().state.accounts.size, count, 'no account made');
    assert.deepEqual(
      accountsOf(LEGACY_DOMAIN).map((a) => a.user),
      [LEGACY_USER],
    );
    assert.equal(legacySeen(), before, 'legacyex untouched');
    assert.ok(cpanel().checkPassword(LEGACY_USER, LEGACY_PASSWORD), 'its password unchanged');
    const ceo = cpanel()
      .state.accounts.get(LEGACY_USER)
      ?.mailboxes.find((m) => m.email === `ceo@${LEGACY_DOMAIN}`);
    assert.ok(ceo, 'its mailbox is still there');
    assert.notEqual((row.config as { cleanup_pending?: boolean }).cleanup_pending, true, 'nothing to clean up');
  });

  test('the token deploy: the job fails with domain_taken, visible on the job and the instance; refunded', async () => {
    const before = legacySeen();
    const api: ApiClient = await apiClient(u.t, ['*'], '5000');
    const plan = await webPlan();
    const res = await api.call('POST', '/api/v1/instances', {
      plan: 'web-starter',
      server_name: 'legacy-web',
      eula: true,
      region: 'mum1',
      domain: LEGACY_DOMAIN,
      idempotency_key: `deploy-${++orders}`,
    });
    assert.equal(res.statusCode, 201, res.body);
    const jobId = res.json().job.id as number;
    const instanceId = res.json().instance.id as number;
    await settled(jobId);
    const job = await api.call('GET', `/api/v1/jobs/${jobId}`);
    assert.equal(job.statusCode, 200, job.body);
    assert.equal(job.json().job.status, 'failed');
    assert.equal(job.json().job.error.code, 'domain_taken', job.body);
    assert.match(job.json().job.error.message, /legacyexample\.in is already hosted on the server/);
    const instance = await api.call('GET', `/api/v1/instances/${instanceId}`);
    assert.equal(instance.statusCode, 200, instance.body);
    assert.equal(instance.json().instance.status, 'failed');
    assert.ok(!instance.body.includes(`"${LEGACY_USER}"`), instance.body);
    await refunded(api.accountId, plan.price);
    assert.equal(legacySeen(), before, 'legacyex untouched');
  });

  test('a domain one of our live services holds is refused at order time: 422 domain_taken on both surfaces', async () => {
    const c = await customer();
    const placed = await order(c, 'ours.example.in');
    assert.equal(placed.statusCode, 201, placed.body);
    assert.equal((await settled(placed.json().job.id)).status, 'succeeded');
    const again = await order(await customer(), 'ours.example.in');
    assert.equal(again.statusCode, 422, again.body);
    assert.equal(again.json().code, 'domain_taken');
    assert.match(again.json().errors.domain, /already hosted/);
    const api = await apiClient(u.t, ['*'], '5000');
    const deploy = await api.call('POST', '/api/v1/instances', {
      plan: 'web-starter',
      server_name: 'ours-again',
      eula: true,
      region: 'mum1',
      domain: 'ours.example.in',
      idempotency_key: `deploy-${++orders}`,
    });
    assert.equal(deploy.statusCode, 422, deploy.body);
    assert.equal(deploy.json().error, 'domain_taken', deploy.body);
  });
});

describe('T3-H1: usernames and adoption', () => {
  test('the first candidate held by an unrelated account is taken: the next candidate is used, that account left alone', async () => {
    // `occupied` is the first candidate for occupied.example.in; staff gave it to another domain.
    await staffCreates('occupied', 'elsewhere-occupied.in', 'someone@elsewhere-occupied.in', LEGACY_PASSWORD);
    const c = await customer();
    const res = await order(c, 'occupied.example.in');
    assert.equal(res.statusCode, 201, res.body);
    const serviceId = res.json().service.id as number;
    const job = await settled(res.json().job.id);
    assert.equal(job.status, 'succeeded', `${job.error_code}: ${job.error_message}`);
    const overview = await c.browser.get(`${WEB}?service=${serviceId}&action=overview`);
    assert.equal(overview.statusCode, 200, overview.body);
    assert.equal(overview.json().account.username, 'occupie1');
    assert.equal(overview.json().account.domain, 'occupied.example.in');
    const held = cpanel().state.accounts.get('occupied');
    assert.equal(held?.domain, 'elsewhere-occupied.in', 'the other account kept its domain');
    assert.ok(cpanel().checkPassword('occupied', LEGACY_PASSWORD), 'and its password');
    // Ours carries the service's marker, recorded on the service with the username.
    const marker = accountMarker(externalName(u.t.deps.installation.id, 'svc', serviceId), u.t.deps.config.publicUrl);
    assert.equal(cpanel().state.accounts.get('occupie1')?.email, marker);
    assert.deepEqual((await serviceRow(serviceId)).external, {
      username: 'occupie1',
      domain: 'occupied.example.in',
      marker,
    });
  });

  test('a lost createacct answer: the retry finds our account (our marker) and adopts it: one account, one createacct', async () => {
    const creates = () => cpanel().calls.get('POST /json-api/createacct') ?? 0;
    const before = creates();
    await cpanel().setFaults({ loseNext: 'createacct' });
    const c = await customer();
    const res = await order(c, 'lostanswer.example.in');
    assert.equal(res.statusCode, 201, res.body);
    const job = await settled(res.json().job.id);
    await cpanel().setFaults({ loseNext: null });
    assert.equal(job.status, 'succeeded', `${job.error_code}: ${job.error_message}`);
    assert.ok(job.attempts >= 2, `attempts ${job.attempts}`);
    assert.equal(creates() - before, 1, 'createacct was sent once');
    assert.deepEqual(
      accountsOf('lostanswer.example.in').map((a) => a.user),
      ['lostansw'],
    );
    const overview = await c.browser.get(`${WEB}?service=${res.json().service.id}&action=overview`);
    assert.equal(overview.json().account.username, 'lostansw', overview.body);
  });

  test('the provisioning steps run again after the account was made (a crash): adopted, nothing made twice; another marker is not ours', async () => {
    const c = await customer();
    const res = await order(c, 'rerun.example.in');
    assert.equal(res.statusCode, 201, res.body);
    const serviceId = res.json().service.id as number;
    const jobId = res.json().job.id as number;
    assert.equal((await settled(jobId)).status, 'succeeded');
    const creates = () => cpanel().calls.get('POST /json-api/createacct') ?? 0;
    const removes = () => cpanel().calls.get('POST /json-api/removeacct') ?? 0;
    const external = (await serviceRow(serviceId)).external;
    const events = async () =>
      (await db().selectFrom('service_events').select('kind').where('service_id', '=', serviceId).execute()).filter(
        (e) => e.kind === 'account_created',
      ).length;
    assert.equal(await events(), 1);

    /** The job's steps from the first, as the worker runs them when a job is taken up again. */
    const rerun = async () => {
      const service = await serviceRow(serviceId);
      const job = await jobRow(jobId);
      const plan = await db()
        .selectFrom('plans')
        .selectAll()
        .where('id', '=', service.plan_id)
        .executeTakeFirstOrThrow();
      const node = await db()
        .selectFrom('nodes')
        .selectAll()
        .where('id', '=', service.node_id as number)
        .executeTakeFirstOrThrow();
      const product = PRODUCTS.web;
      const context = product.jobs.open({ ...u.t.deps.productEnv, job, service, plan, node });
      const run = stepRun(product.jobs.provision, context, { reached: async () => {} }, 0);
      await run.run();
      return { context, run };
    };

    // Our account, our marker: adopted as it is.
    const made = creates();
    await rerun();
    assert.equal(creates(), made, 'no createacct');
    assert.deepEqual((await serviceRow(serviceId)).external, external, 'the same account recorded');
    assert.equal(await events(), 1, 'no second "created" event');
    assert.deepEqual(
      accountsOf('rerun.example.in').map((a) => a.user),
      ['rerunexa'],
    );

    // The same name and domain without the service's marker (another installation on the same
    // server made it, or someone else did): not ours. The claim is what a fresh database has
    // (nothing recorded), and the account's contact e-mail another installation's marker.
    const account = cpanel().state.accounts.get('rerunexa');
    assert.ok(account);
    account.email = accountMarker(externalName('zzzzzzzz', 'svc', serviceId), u.t.deps.config.publicUrl);
    await db()
      .updateTable('services')
      .set({ external: null, credentials_sealed: null })
      .where('id', '=', serviceId)
      .execute();
    const before = seen('rerunexa');
    const removed = removes();
    await assert.rejects(rerun(), (error: { code?: string }) => {
      assert.equal(error.code, 'domain_taken', String(error));
      return true;
    });
    assert.equal(creates(), made, 'no createacct for the domain it holds');
    assert.equal(removes(), removed, 'nothing removed');
    assert.equal(seen('rerunexa'), before, 'that account untouched');
    const recorded = (await serviceRow(serviceId)).external as { claim?: string; username?: string };
    assert.notEqual(recorded.claim, 'rerunexa', 'its name was taken, not claimed');
    assert.equal(recorded.username, undefined, 'no account recorded');
  });

  test('the undo of a failed provisioning removes only an account carrying the claim and marker', async () => {
    const c = await customer();
    const res = await order(c, 'undo.example.in');
    const serviceId = res.json().service.id as number;
    const jobId = res.json().job.id as number;
    assert.equal((await settled(jobId)).status, 'succeeded');
    const service = await serviceRow(serviceId);
    const job = await jobRow(jobId);
    const plan = await db().selectFrom('plans').selectAll().where('id', '=', service.plan_id).executeTakeFirstOrThrow();
    const node = await db()
      .selectFrom('nodes')
      .selectAll()
      .where('id', '=', service.node_id as number)
      .executeTakeFirstOrThrow();
    const product = PRODUCTS.web;
    const undo = async (external: Record<string, unknown> | null) => {
      const context = product.jobs.open({
        ...u.t.deps.productEnv,
        job,
        service: { ...service, external },
        plan,
        node,
      });
      await stepRun(product.jobs.provision, context, { reached: async () => {} }, 100).undo((_s, error) => {
        throw error;
      });
    };
    const marker = (service.external as { marker: string }).marker;
    // Another marker, or nothing recorded (a service from before markers): the account stays.
    await undo({ claim: 'undoexam', marker: 'hp-zzzzzzzz-svc-1@hostplane.invalid' });
    await undo({ username: 'undoexam', domain: 'undo.example.in' });
    await undo(null);
    assert.ok(cpanel().state.accounts.has('undoexam'));
    // Staff's account is never removed, whatever a service's claim names.
    await undo({ claim: LEGACY_USER, marker });
    assert.ok(cpanel().state.accounts.has(LEGACY_USER));
    // The claim and marker of the account: it goes.
    await undo({ claim: 'undoexam', marker });
    assert.equal(cpanel().state.accounts.has('undoexam'), false);
  });
});

describe('T3-H1: the driver', () => {
  test('a createacct refusal naming the domain (an addon domain, another reseller’s account) is domain_taken; one naming the user is exists', async () => {
    /** A WHM that lists nothing and refuses createacct with `reason`. */
    const fake = (reason: string) =>
      ({
        label: 'cpanel test',
        async whm(fn: string) {
          if (fn === 'listaccts') return {};
          throw new UpstreamError('rejected', `createacct was refused (${reason})`, {
            retryable: false,
            detail: reason,
            reason: 'exists',
          });
        },
        garbled: (what: string) => new UpstreamError('protocol', `garbled ${what}`, { retryable: false }),
      }) as unknown as CpanelClient;
    const spec = {
      username: 'shopexam',
      domain: 'shop.example.in',
      package: 'default',
      password: 'Tr1cky-Passw0rd-Here',
      contactEmail: 'hp-abcdefgh-svc-1@hostplane.invalid',
    };
    for (const said of [
      'The domain “shop.example.in” already exists in the userdata.',
      'A DNS entry for “shop.example.in” already exists. You must remove this DNS entry from all servers in the DNS cluster to proceed.',
    ]) {
      await assert.rejects(createAccount(fake(said), spec), (e: UpstreamError) => {
        assert.equal(e.reason, 'domain_taken', said);
        return true;
      });
    }
    await assert.rejects(
      createAccount(fake('This system already has an account named “shopexam”.'), spec),
      (e: UpstreamError) => {
        assert.equal(e.reason, 'exists');
        return true;
      },
    );
  });

  test('the marker: the installation and the service, at the platform host (or .invalid for one WHM would refuse)', () => {
    assert.equal(
      accountMarker('hp-abcdefgh-svc-7', 'https://panel.hostplane.in'),
      'hp-abcdefgh-svc-7@panel.hostplane.in',
    );
    assert.equal(accountMarker('hp-abcdefgh-svc-7', 'http://localhost:8080'), 'hp-abcdefgh-svc-7@hostplane.invalid');
    assert.equal(accountMarker('hp-abcdefgh-svc-7', 'http://127.0.0.1:8080'), 'hp-abcdefgh-svc-7@hostplane.invalid');
  });
});

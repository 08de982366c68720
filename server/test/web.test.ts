// Web hosting end to end (issue 13): a web plan ordered for shop.example.in is provisioned on the
// emulated cPanel/WHM server through the real driver (the plan's package, a username derived
// from the domain, the account), then managed through /api/v1/client/web/ as a new user would:
// a database and a user assigned to it, a mailbox with its quota and password changed, PHP
// switched, HTTPS forced once AutoSSL has issued, SSO into cPanel, the usage read. Order rules
// (domain required, reserved TLDs, a domain hosted once), username collisions and the lifecycle
// on the panel (suspend, unsuspend, terminate) are covered here too.

import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { LightMyRequestResponse } from 'fastify';
import type { Browser } from './support/browser.ts';
import { freshIp, signedInBrowser } from './support/factories.ts';
import { apiClient } from './support/rest.ts';
import { createUpstreamApp, type UpstreamApp, waitFor } from './support/upstreams.ts';

const WEB = '/api/v1/client/web/';
const WAIT = 60_000;
let u: UpstreamApp;
let browser: Browser;
let accountId: number;
let serviceId: number;
let n = 0;

const read = (action: string, params: Record<string, string> = {}, id = serviceId) =>
  browser.get(`${WEB}?${new URLSearchParams({ service: String(id), action, ...params })}`);
const act = (action: string, body: Record<string, unknown> = {}, id = serviceId) =>
  browser.post(`${WEB}?service=${id}&action=${action}`, body, { csrf: true });
const ok = (res: LightMyRequestResponse, status = 200) => {
  assert.equal(res.statusCode, status, res.body);
  return res.json();
};

async function planId(label: string): Promise<number> {
  const row = await u.t.deps.database.db
    .selectFrom('plans')
    .select('id')
    .where('label', '=', label)
    .executeTakeFirstOrThrow();
  return row.id;
}

/** Order web-starter for `domain`; the answer, and with `wait` the settled job. */
async function orderWeb(
  b: Browser,
  domain: string,
  wait = true,
): Promise<{ res: LightMyRequestResponse; job?: { status: string; error_code: string | null } }> {
  const res = await b.post(
    '/api/v1/client/orders/',
    { plan_id: await planId('web-starter'), config: { region: 'mum1' }, domain, idempotency_key: `web-${++n}` },
    { csrf: true },
  );
  if (!wait || res.statusCode !== 201) return { res };
  const jobId = res.json().job.id as number;
  const job = await waitFor(
    `web job ${jobId}`,
    async () => {
      const j = await u.t.deps.database.db
        .selectFrom('jobs')
        .selectAll()
        .where('id', '=', jobId)
        .executeTakeFirstOrThrow();
      return j.status === 'succeeded' || j.status === 'failed' ? j : null;
    },
    WAIT,
  );
  return { res, job };
}

const account = () => {
  const cpanel = u.cpanel;
  assert.ok(cpanel);
  const found = [...cpanel.state.accounts.values()].find((a) => a.domain === 'shop.example.in');
  assert.ok(found, 'no account for shop.example.in');
  return found;
};

before(async () => {
  u = await createUpstreamApp({ web: true });
  const signed = await signedInBrowser(u.t, freshIp());
  browser = signed.browser;
  accountId = signed.account.id;
  await u.t.deps.wallet.credit(accountId, '5000', 'test float');
  const { res, job } = await orderWeb(browser, 'Shop.Example.IN');
  assert.equal(job?.status, 'succeeded', JSON.stringify(job));
  serviceId = res.json().service.id;
});
after(() => u.close());

describe('provisioning', () => {
  test('the account exists with the plan package, a username from the domain, and the password stored sealed', async () => {
    const acct = account();
    assert.equal(acct.user, 'shopexam');
    assert.equal(acct.plan, 'hostplane_web-starter');
    const creds = ok(await browser.get(`/api/v1/client/services/?id=${serviceId}&action=credentials`)).credentials;
    assert.equal(creds.username, 'shopexam');
    assert.ok(u.cpanel?.checkPassword('shopexam', creds.password), 'the stored password is the account password');
    const pkg = u.cpanel?.state.packages.get('hostplane_web-starter');
    assert.ok(pkg, 'the package of the plan exists');
    const overview = ok(await read('overview')).account;
    assert.equal(overview.domain, 'shop.example.in');
    assert.equal(overview.username, 'shopexam');
  });

  test('a domain is hosted once (domain_taken); reserved TLDs and IPs are bad_domain; no domain is domain_required', async () => {
    const again = await orderWeb(browser, 'shop.example.in', false);
    assert.equal(again.res.statusCode, 422, again.res.body);
    assert.equal(again.res.json().code, 'domain_taken');
    assert.match(again.res.json().errors.domain, /already hosted/);
    for (const domain of ['site.test', 'my.local', 'x.example', '192.0.2.1', 'localhost']) {
      const res = (await orderWeb(browser, domain, false)).res;
      assert.equal(res.statusCode, 422, `${domain}: ${res.body}`);
      assert.equal(res.json().code, 'bad_domain', domain);
    }
    const none = await browser.post(
      '/api/v1/client/orders/',
      { plan_id: await planId('web-starter'), config: {}, idempotency_key: `web-${++n}` },
      { csrf: true },
    );
    assert.equal(none.json().code, 'domain_required');
  });

  test('usernames collide on their first 8 characters: the next candidate is taken', async () => {
    const { job, res } = await orderWeb(browser, 'shopexample.co.in');
    assert.equal(job?.status, 'succeeded');
    const creds = ok(
      await browser.get(`/api/v1/client/services/?id=${res.json().service.id}&action=credentials`),
    ).credentials;
    assert.equal(creds.username, 'shopexa1');
  });
});

describe('the README walk-through', () => {
  test('database and user assigned, mailbox with quota and password, PHP, HTTPS forced after AutoSSL, SSO, usage', async () => {
    const dbs = ok(await read('databases'));
    assert.equal(dbs.prefix, 'shopexam_');
    ok(await act('db_create', { name: 'shop' }), 201);
    ok(await act('db_user_create', { name: 'app', password: 'Tr1cky-Passw0rd-Here' }), 201);
    ok(await act('db_assign', { user: 'app', database: 'shop' }));
    const listed = ok(await read('databases'));
    assert.deepEqual(
      listed.databases.map((d: { name: string; users: string[] }) => [d.name, d.users]),
      [['shopexam_shop', ['shopexam_app']]],
    );
    const weak = await act('db_user_create', { name: 'weak', password: 'password1' });
    assert.equal(weak.statusCode, 422, weak.body);
    assert.equal(weak.json().code, 'weak_password');

    ok(await act('mailbox_create', { email: 'info', password: 'Mailbox-Pass-2026!', quota_mb: 512 }), 201);
    ok(await act('mailbox_quota', { email: 'info@shop.example.in', quota_mb: 2048 }));
    ok(await act('mailbox_password', { email: 'info', password: 'Another-Mail-Pass-77' }));
    assert.ok(u.cpanel?.checkMailboxPassword('info@shop.example.in', 'Another-Mail-Pass-77'));
    const boxes = ok(await read('mailboxes'));
    assert.equal(boxes.mailboxes[0].email, 'info@shop.example.in');
    assert.equal(boxes.mailboxes[0].quota_bytes, 2048 * 1024 * 1024);
    const badBox = await act('mailbox_create', { email: '-bad-', password: 'Mailbox-Pass-2026!' });
    assert.equal(badBox.json().code, 'bad_mailbox');

    const php = ok(await read('php')).php;
    assert.ok(php.installed.includes('ea-php82'), php.installed.join());
    ok(await act('php_set', { version: 'ea-php82' }));
    assert.equal(ok(await read('php')).php.version, 'ea-php82');

    const https = await waitFor(
      'AutoSSL issued',
      async () => {
        const status = ok(await read('https_status')).https;
        return status.certificate && !status.certificate.self_signed ? status : null;
      },
      WAIT,
    );
    assert.equal(https.forced, false);
    ok(await act('https_force'));
    assert.equal(ok(await read('https_status')).https.forced, true);
    ok(await act('https_unforce'));
    assert.equal(ok(await read('https_status')).https.forced, false);

    const sso = ok(await browser.get(`/api/v1/client/services/?id=${serviceId}&action=sso`)).sso;
    assert.equal(sso.kind, 'panel');
    const login = await fetch(sso.url, { redirect: 'manual' });
    assert.ok(login.status < 400, `the session URL signs in (${login.status})`);

    const usage = ok(await read('usage')).usage as { id: string; usage: number; maximum: number | null }[];
    assert.equal(usage.find((x) => x.id === 'mysql_databases')?.usage, 1);
    assert.equal(usage.find((x) => x.id === 'email_accounts')?.usage, 1);
    ok(await read('nameservers'));
    const zone = ok(await read('dns'));
    assert.ok(zone.records.some((r: { type: string }) => r.type === 'MX'));
  });

  test('plan limits: web-starter has 2 databases and 5 mailboxes (409 limit_reached)', async () => {
    ok(await act('db_create', { name: 'second' }), 201);
    const third = await act('db_create', { name: 'third' });
    assert.equal(third.statusCode, 409, third.body);
    assert.equal(third.json().code, 'limit_reached');
    assert.equal(third.json().details.limit, 2);
  });

  test('password_change changes the account password and the stored credentials', async () => {
    ok(await act('password_change', { password: 'New-Account-Pass-91' }));
    assert.ok(u.cpanel?.checkPassword('shopexam', 'New-Account-Pass-91'));
    const creds = ok(await browser.get(`/api/v1/client/services/?id=${serviceId}&action=credentials`)).credentials;
    assert.equal(creds.password, 'New-Account-Pass-91');
  });
});

describe('shared surfaces and the lifecycle', () => {
  test('web services list; power actions are 422 not_supported on both surfaces', async () => {
    const list = ok(await browser.get('/api/v1/client/services/')).services;
    const mine = list.find((s: { id: number }) => s.id === serviceId);
    assert.equal(mine.type, 'web');
    assert.equal(mine.domain, 'shop.example.in');
    const start = await browser.post(
      '/api/v1/client/services/action/',
      { id: serviceId, action: 'start' },
      { csrf: true },
    );
    assert.equal(start.statusCode, 422, start.body);
    assert.equal(start.json().code, 'not_supported');
    const api = await apiClient(u.t, ['*'], '0', accountId);
    const instances = await api.call('GET', '/api/v1/instances');
    assert.ok(instances.json().instances.some((i: { id: number }) => i.id === serviceId));
    const stop = await api.call('POST', `/api/v1/instances/${serviceId}/stop`);
    assert.equal(stop.statusCode, 422, stop.body);
    assert.equal(stop.json().error, 'not_supported');
  });

  test('suspend and unsuspend by staff reach the panel; actions are 409 suspended meanwhile; terminate removes the account', async () => {
    const { serviceId: id } = await (async () => {
      const { job, res } = await orderWeb(browser, `life${Date.now()}.example.in`);
      assert.equal(job?.status, 'succeeded');
      return { serviceId: res.json().service.id as number };
    })();
    const username = ok(await browser.get(`/api/v1/client/services/?id=${id}&action=credentials`)).credentials.username;
    const settle = async (jobId: number) =>
      waitFor(
        `job ${jobId}`,
        async () => {
          const j = await u.t.deps.database.db
            .selectFrom('jobs')
            .selectAll()
            .where('id', '=', jobId)
            .executeTakeFirstOrThrow();
          return j.status === 'succeeded' || j.status === 'failed' ? j : null;
        },
        WAIT,
      );
    const staff = u.t.deps.serviceStaff;
    // The client asks, staff approve: the suspension and the termination run as jobs on the panel.
    const request = async (action: 'request_suspend' | 'request_terminate') => {
      const res = ok(await browser.post('/api/v1/client/services/', { id, action }, { csrf: true }));
      return (await staff.approveRequest(res.request.id, 'staff:test')).job.id;
    };
    const suspended = await settle(await request('request_suspend'));
    assert.equal(suspended.status, 'succeeded', suspended.error_message ?? '');
    assert.equal(u.cpanel?.state.accounts.get(username)?.suspended, true);
    const refused = await read('databases', {}, id);
    assert.equal(refused.statusCode, 409, refused.body);
    assert.equal(refused.json().code, 'suspended');
    const lifted = await settle((await staff.unsuspend(id)).id);
    assert.equal(lifted.status, 'succeeded', lifted.error_message ?? '');
    assert.equal(u.cpanel?.state.accounts.get(username)?.suspended, false);
    const gone = await settle(await request('request_terminate'));
    assert.equal(gone.status, 'succeeded', gone.error_message ?? '');
    assert.equal(u.cpanel?.state.accounts.get(username), undefined);
  });
});

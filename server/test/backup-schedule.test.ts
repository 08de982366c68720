// Scheduled backups of virtual servers (issue 37, CONTRACT §13, docs/backups.md), through the
// HTTP surfaces against the emulated Proxmox node, with the scheduler's pass run as at chosen
// times (deps.backups.run({at}), what the worker runs every minute): snapshots taken at the
// chosen IST hour, daily and weekly; retention keeps the newest `keep` automatic snapshots and
// never touches a manual one; one run per slot across passes and concurrent workers; one run, not
// many, after downtime; a failure recorded and told to the owner. Money: the pro-rata charge on
// turning it on (exact paise, with its order, ledger row and invoice), the renewal's separate
// "Scheduled backups" line, off stopping it, a short wallet (402) changing nothing; validation on
// both surfaces; and `hostplane backups schedule` as a person runs it.

import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { nextRunAt } from '../src/core/backups/schedule.ts';
import { proRataPaise } from '../src/core/billing/addons.ts';
import { addMonth } from '../src/core/time.ts';
import type { Browser } from './support/browser.ts';
import { cliRunner, ok } from './support/cli.ts';
import { fingerprint } from './support/db.ts';
import { freshIp, signedInBrowser } from './support/factories.ts';
import { type ApiClient, apiClient } from './support/rest.ts';
import { createUpstreamApp, type UpstreamApp, waitFor } from './support/upstreams.ts';

const SVC = '/api/v1/client/services/';
const IST = 330 * 60_000;

let u: UpstreamApp;
/** The app's clock: real time, or the instant a test holds it at. */
let frozen: Date | null = null;
const clock = () => frozen ?? new Date();
let owner: { browser: Browser; account: { id: number } };
let token: ApiClient;
let scheduled: number;
let billed: number;
const cli = cliRunner('hostplane-cli-backups');

const db = () => u.t.deps.database.db;
const pass = (at: Date) => u.t.deps.backups.run({ at });
const schedule = (id: number, body: Record<string, unknown>, browser = owner.browser) =>
  browser.post(SVC, { action: 'backup_schedule', id, ...body }, { csrf: true });
const rowOf = (id: number) =>
  db().selectFrom('backup_schedules').selectAll().where('service_id', '=', id).executeTakeFirstOrThrow();
const balance = async (accountId: number) =>
  BigInt(
    (
      await db()
        .selectFrom('wallets')
        .select('balance_paise')
        .where('account_id', '=', accountId)
        .executeTakeFirstOrThrow()
    ).balance_paise,
  );
const autoJobs = async (id: number) =>
  (
    await db().selectFrom('jobs').selectAll().where('service_id', '=', id).where('type', '=', 'snapshot').execute()
  ).filter((j) => j.params.action === 'auto');
/** IST wall clock of a time: [weekday, hour, minute]. */
const ist = (d: Date) => {
  const local = new Date(d.getTime() + IST);
  return [local.getUTCDay(), local.getUTCHours(), local.getUTCMinutes()];
};

async function orderVps(browser: Browser, key: string, plan = 'vps-2c-4g'): Promise<number> {
  const row = await db().selectFrom('plans').select('id').where('label', '=', plan).executeTakeFirstOrThrow();
  const res = await browser.post(
    '/api/v1/client/orders/',
    { plan_id: row.id, config: { hostname: `${key}.example.in` }, idempotency_key: key },
    { csrf: true },
  );
  assert.equal(res.statusCode, 201, res.body);
  await idle(res.json().service.id);
  return res.json().service.id;
}

/** Wait until the service has no job queued or running; the last one's status. */
async function idle(serviceId: number): Promise<string> {
  return waitFor(`service ${serviceId} idle`, async () => {
    const jobs = await db()
      .selectFrom('jobs')
      .select('status')
      .where('service_id', '=', serviceId)
      .orderBy('id')
      .execute();
    const last = jobs.at(-1);
    return last && ['succeeded', 'failed'].includes(last.status) ? last.status : null;
  });
}

async function snapshots(serviceId: number): Promise<{ name: string; automatic: boolean }[]> {
  const res = await owner.browser.get(`/api/v1/client/vps/?service=${serviceId}&action=snapshots`);
  assert.equal(res.statusCode, 200, res.body);
  return res.json().snapshots;
}

/** A pass at `at` that starts one run; then the run, and the pass that records it. */
async function runSlot(serviceId: number, at: Date): Promise<string> {
  const actions = await pass(at);
  assert.deepEqual(
    actions.filter((a) => a.service === serviceId).map((a) => a.action),
    ['queued'],
    JSON.stringify(actions),
  );
  const status = await idle(serviceId);
  const recorded = await pass(new Date(at.getTime() + 30_000));
  assert.ok(recorded.some((a) => a.service === serviceId && ['succeeded', 'failed'].includes(a.action)));
  return status;
}

before(async () => {
  u = await createUpstreamApp({ overrides: { clock } });
  owner = await signedInBrowser(u.t, freshIp());
  await u.t.deps.wallet.credit(owner.account.id, '5000', 'test float');
  token = await apiClient(u.t, ['*'], '0', owner.account.id);
  scheduled = await orderVps(owner.browser, 'backups-a');
  billed = await orderVps(owner.browser, 'backups-b');
});
after(async () => {
  await u.close();
  cli.cleanup();
});

describe('backup_schedule: validation', () => {
  test('hour 24, keep 0 and 15, an unknown frequency, a missing hour: 422 naming the field, nothing changed', async () => {
    const before = await fingerprint(u.t);
    const cases: [Record<string, unknown>, string][] = [
      [{ frequency: 'daily', hour: 24, keep: 3 }, 'hour'],
      [{ frequency: 'daily', hour: 3, keep: 0 }, 'keep'],
      [{ frequency: 'weekly', hour: 3, keep: 15 }, 'keep'],
      [{ frequency: 'hourly', hour: 3, keep: 3 }, 'frequency'],
      [{ frequency: 'daily', keep: 3 }, 'hour'],
      [{ frequency: 'weekly', hour: 3, keep: 3, weekday: 7 }, 'weekday'],
    ];
    for (const [body, field] of cases) {
      const res = await schedule(scheduled, body);
      assert.equal(res.statusCode, 422, `${JSON.stringify(body)}: ${res.body}`);
      assert.equal(res.json().code, 'validation_failed');
      assert.ok(res.json().errors[field], `${field} named: ${res.body}`);
      const put = await token.call('PUT', `/api/v1/instances/${scheduled}/backup-schedule`, body);
      assert.equal(put.statusCode, 422, put.body);
      assert.equal(put.json().error, 'validation_failed');
    }
    assert.deepEqual(await fingerprint(u.t), before);
  });

  test('a plan without a backup price: 422 "this plan does not offer scheduled backups"', async () => {
    const plan = await db().selectFrom('plans').selectAll().where('label', '=', 'vps-2c-4g').executeTakeFirstOrThrow();
    const { backup_price: _price, ...specs } = plan.specs as Record<string, unknown>;
    await db()
      .updateTable('plans')
      .set({ specs: JSON.stringify(specs) })
      .where('id', '=', plan.id)
      .execute();
    try {
      const res = await schedule(scheduled, { frequency: 'daily', hour: 3, keep: 2 });
      assert.equal(res.statusCode, 422, res.body);
      assert.match(res.json().message, /this plan does not offer scheduled backups/i);
      assert.equal((await db().selectFrom('backup_schedules').selectAll().execute()).length, 0);
    } finally {
      await db()
        .updateTable('plans')
        .set({ specs: JSON.stringify(plan.specs) })
        .where('id', '=', plan.id)
        .execute();
    }
  });
});

describe('backup_schedule: billing', () => {
  test('pro rata of the rest of the period (worked example)', () => {
    // 26 of the 31 days from 15 Jan to 15 Feb: 9900 × 26 ÷ 31 = 8303.2 → 8303 paise.
    assert.equal(proRataPaise(9900n, new Date('2026-01-20T00:00:00Z'), new Date('2026-02-15T00:00:00Z')), 8303n);
    assert.equal(proRataPaise(9900n, new Date('2026-02-15T00:00:00Z'), new Date('2026-02-15T00:00:00Z')), 0n);
  });

  test('a short wallet: 402 insufficient_funds and nothing changes', async () => {
    const poor = await signedInBrowser(u.t, freshIp());
    await u.t.deps.wallet.credit(poor.account.id, '799', 'exactly one month');
    const id = await orderVps(poor.browser, 'backups-poor');
    const before = await fingerprint(u.t);
    const res = await schedule(id, { frequency: 'daily', hour: 2, keep: 3 }, poor.browser);
    assert.equal(res.statusCode, 402, res.body);
    assert.equal(res.json().code, 'insufficient_funds');
    assert.deepEqual(await fingerprint(u.t), before);
  });

  test('turning it on charges the rest of the period pro rata: order, ledger row and invoice, exact paise', async () => {
    frozen = new Date(Math.floor(Date.now() / 1000) * 1000);
    const periodEnd = new Date(frozen.getTime() + 10 * 86_400_000 + 3_600_000);
    await db().updateTable('services').set({ period_end: periodEnd }).where('id', '=', billed).execute();
    const start = new Date(periodEnd);
    start.setUTCMonth(start.getUTCMonth() - 1);
    if (start.getUTCDate() !== periodEnd.getUTCDate()) start.setUTCDate(0); // the shorter month's last day
    const length = BigInt((periodEnd.getTime() - start.getTime()) / 1000);
    const left = BigInt((periodEnd.getTime() - frozen.getTime()) / 1000);
    const expected = (2n * 9900n * left + length) / (2n * length);
    const before = await balance(owner.account.id);
    try {
      const quote = await schedule(billed, { frequency: 'daily', hour: 4, keep: 3, dry_run: true });
      assert.equal(quote.statusCode, 200, quote.body);
      assert.equal(quote.json().charged, (Number(expected) / 100).toFixed(2));
      assert.equal(quote.json().price_per_month, '99.00');
      assert.equal(await balance(owner.account.id), before, 'a dry run charges nothing');
      const res = await schedule(billed, { frequency: 'daily', hour: 4, keep: 3 });
      assert.equal(res.statusCode, 200, res.body);
      const body = res.json();
      assert.equal(body.charged, (Number(expected) / 100).toFixed(2));
      assert.equal(await balance(owner.account.id), before - expected);
      const order = await db()
        .selectFrom('orders')
        .selectAll()
        .where('public_id', '=', body.order_id)
        .executeTakeFirstOrThrow();
      assert.equal(order.kind, 'addon');
      assert.equal(order.status, 'paid');
      assert.equal(BigInt(order.amount_paise), expected);
      const ledger = await db()
        .selectFrom('wallet_transactions')
        .selectAll()
        .where('id', '=', order.transaction_id as number)
        .executeTakeFirstOrThrow();
      assert.equal(BigInt(ledger.amount_paise), -expected);
      const invoice = await db()
        .selectFrom('invoices')
        .selectAll()
        .where('order_id', '=', order.id)
        .executeTakeFirstOrThrow();
      assert.equal(BigInt(invoice.total_paise), expected);
      assert.match(invoice.lines[0]?.description ?? '', /Scheduled backups/);
      // Changing a schedule that is on charges nothing more.
      const again = await schedule(billed, { frequency: 'weekly', hour: 5, keep: 2 });
      assert.equal(again.json().charged, '0.00');
      assert.equal(await balance(owner.account.id), before - expected);
    } finally {
      frozen = null;
    }
  });

  test('renewals include the add-on as a separate "Scheduled backups" line while it is on; off stops it', async () => {
    const service = await db().selectFrom('services').selectAll().where('id', '=', billed).executeTakeFirstOrThrow();
    const first = service.period_end as Date;
    // What GET /api/v1/billing says the renewal will take, and the run-rate, count the add-on.
    const billing = async () => {
      const res = await token.call('GET', '/api/v1/billing');
      assert.equal(res.statusCode, 200, res.body);
      const data = res.json().billing;
      const next = data.next_renewals.find((r: { service: { id: number } }) => r.service.id === billed);
      return { runRate: Math.round(Number(data.monthly_run_rate.amount) * 100), next: next?.amount };
    };
    const withBackups = await billing();
    assert.equal(withBackups.next, '898.00', 'the plan (₹799) and the scheduled backups (₹99)');
    await u.t.deps.billing.run({ at: first, accountId: owner.account.id });
    const renewal = await db()
      .selectFrom('orders')
      .selectAll()
      .where('service_id', '=', billed)
      .where('renews_from', '=', first)
      .executeTakeFirstOrThrow();
    assert.equal(renewal.status, 'paid');
    assert.equal(BigInt(renewal.amount_paise), 79_900n + 9_900n);
    const invoice = await db()
      .selectFrom('invoices')
      .selectAll()
      .where('order_id', '=', renewal.id)
      .executeTakeFirstOrThrow();
    assert.equal(invoice.lines.length, 2);
    assert.equal(invoice.lines[1]?.description, 'Scheduled backups');
    assert.equal(invoice.lines[1]?.total_paise, '9900');
    assert.equal(BigInt(invoice.total_paise), 89_800n);

    const off = await schedule(billed, { frequency: 'off' });
    assert.equal(off.statusCode, 200, off.body);
    assert.equal(off.json().charged, '0.00');
    assert.equal(off.json().backup_schedule.next_run_at, null);
    const withoutBackups = await billing();
    assert.equal(withoutBackups.next, '799.00');
    assert.equal(withBackups.runRate - withoutBackups.runRate, 9_900, 'the run-rate drops by the add-on');
    const second = addMonth(first);
    await u.t.deps.billing.run({ at: second, accountId: owner.account.id });
    const next = await db()
      .selectFrom('orders')
      .selectAll()
      .where('service_id', '=', billed)
      .where('renews_from', '=', second)
      .executeTakeFirstOrThrow();
    assert.equal(BigInt(next.amount_paise), 79_900n);
    const nextInvoice = await db()
      .selectFrom('invoices')
      .selectAll()
      .where('order_id', '=', next.id)
      .executeTakeFirstOrThrow();
    assert.equal(nextInvoice.lines.length, 1);
  });
});

describe('the scheduler', () => {
  let slot: Date;

  test('daily: nothing before the hour; at it one snapshot auto-YYYYMMDD-HHmm, once across passes and workers', async () => {
    const res = await schedule(scheduled, { frequency: 'daily', hour: 3, keep: 2 });
    assert.equal(res.statusCode, 200, res.body);
    slot = new Date(res.json().backup_schedule.next_run_at);
    assert.deepEqual(ist(slot).slice(1), [3, 0]);
    assert.ok(slot.getTime() > Date.now() && slot.getTime() <= Date.now() + 86_400_000);
    // The views of both surfaces show it.
    const detail = await owner.browser.get(`${SVC}?id=${scheduled}`);
    assert.equal(detail.json().service.backup_schedule.frequency, 'daily');
    const instance = await token.call('GET', `/api/v1/instances/${scheduled}`);
    assert.equal(instance.json().instance.backup_schedule.hour, 3);

    assert.deepEqual(
      (await pass(new Date(slot.getTime() - 60_000))).filter((a) => a.service === scheduled),
      [],
    );
    const at = new Date(slot.getTime() + 20_000);
    // Two workers at once, then another pass: one run.
    const [a, b] = await Promise.all([pass(at), pass(at)]);
    const again = await pass(at);
    const started = [...a, ...b, ...again].filter((x) => x.service === scheduled && x.action === 'queued');
    assert.equal(started.length, 1);
    assert.equal((await autoJobs(scheduled)).length, 1);
    assert.equal(await idle(scheduled), 'succeeded');
    await pass(new Date(at.getTime() + 60_000));
    const row = await rowOf(scheduled);
    assert.equal(row.last_error, null);
    assert.ok(row.last_run_at);
    assert.equal(row.next_run_at?.getTime(), slot.getTime() + 86_400_000);
    const local = new Date(at.getTime() + IST).toISOString();
    const name = `auto-${local.slice(0, 10).replaceAll('-', '')}-0300`;
    assert.deepEqual(
      (await snapshots(scheduled)).map((s) => [s.name, s.automatic]),
      [[name, true]],
    );
  });

  test('retention keeps the newest `keep` automatic snapshots and never deletes a manual one', async () => {
    const manual = await owner.browser.post(
      `/api/v1/client/vps/?service=${scheduled}&action=snapshot_create`,
      { name: 'mine' },
      { csrf: true },
    );
    assert.equal(manual.statusCode, 202, manual.body);
    assert.equal(await idle(scheduled), 'succeeded');
    // A manual snapshot may not take the automatic prefix.
    const reserved = await owner.browser.post(
      `/api/v1/client/vps/?service=${scheduled}&action=snapshot_create`,
      { name: 'auto-20260101-0300' },
      { csrf: true },
    );
    assert.equal(reserved.statusCode, 422, reserved.body);
    for (const day of [1, 2, 3]) {
      assert.equal(await runSlot(scheduled, new Date(slot.getTime() + day * 86_400_000 + 10_000)), 'succeeded');
    }
    const list = await snapshots(scheduled);
    assert.deepEqual(
      list.filter((s) => !s.automatic).map((s) => s.name),
      ['mine'],
    );
    const names = list.filter((s) => s.automatic).map((s) => s.name);
    const expected = [2, 3].map((day) => {
      const local = new Date(slot.getTime() + day * 86_400_000 + IST).toISOString();
      return `auto-${local.slice(0, 10).replaceAll('-', '')}-0300`;
    });
    assert.deepEqual(names.sort(), expected);
  });

  test('after downtime: one run, not one per missed day; the next slot is after the time it woke', async () => {
    const row = await rowOf(scheduled);
    const woke = new Date((row.next_run_at as Date).getTime() + 5 * 86_400_000 + 120_000);
    const before = (await autoJobs(scheduled)).length;
    assert.equal(await runSlot(scheduled, woke), 'succeeded');
    assert.equal((await autoJobs(scheduled)).length, before + 1);
    const after = await rowOf(scheduled);
    assert.equal(after.next_run_at?.getTime(), nextRunAt({ frequency: 'daily', hour: 3, weekday: 0 }, woke)?.getTime());
    assert.ok((after.next_run_at as Date) > woke);
  });

  test('weekly: on the chosen IST weekday and hour; the token surface sets it', async () => {
    const res = await token.call('PUT', `/api/v1/instances/${scheduled}/backup-schedule`, {
      frequency: 'weekly',
      hour: 22,
      keep: 2,
      weekday: 3,
    });
    assert.equal(res.statusCode, 200, res.body);
    assert.equal(res.json().charged, '0.00', 'already on: nothing charged');
    const next = new Date(res.json().backup_schedule.next_run_at);
    assert.deepEqual(ist(next), [3, 22, 0]);
    assert.deepEqual(
      (await pass(new Date(next.getTime() - 60_000))).filter((a) => a.service === scheduled),
      [],
    );
    assert.equal(await runSlot(scheduled, new Date(next.getTime() + 5_000)), 'succeeded');
    assert.equal((await rowOf(scheduled)).next_run_at?.getTime(), next.getTime() + 7 * 86_400_000);
  });

  test('a failure is recorded in last_error and told to the owner (notification and e-mail)', async () => {
    const row = await rowOf(scheduled);
    const mails = async () =>
      (await db().selectFrom('mail_outbox').select('id').where('account_id', '=', owner.account.id).execute()).length;
    const mailed = await mails();
    await u.pve.setFaults({ failTasks: 20 });
    try {
      assert.equal(await runSlot(scheduled, new Date((row.next_run_at as Date).getTime() + 5_000)), 'failed');
    } finally {
      await u.pve.setFaults({ failTasks: 0 });
    }
    const failed = await rowOf(scheduled);
    assert.ok(failed.last_error, 'last_error is set');
    const view = await owner.browser.get(`${SVC}?id=${scheduled}`);
    assert.equal(view.json().service.backup_schedule.last_error, failed.last_error);
    const notes = await db()
      .selectFrom('notifications')
      .selectAll()
      .where('account_id', '=', owner.account.id)
      .where('kind', '=', 'backup_failed')
      .execute();
    assert.equal(notes.length, 1);
    assert.equal(await mails(), mailed + 1);
    // Recorded once: another pass tells nobody again.
    await pass(new Date());
    assert.equal(
      (
        await db()
          .selectFrom('notifications')
          .select('id')
          .where('account_id', '=', owner.account.id)
          .where('kind', '=', 'backup_failed')
          .execute()
      ).length,
      1,
    );
  });

  test('off: no more runs', async () => {
    const res = await schedule(scheduled, { frequency: 'off' });
    assert.equal(res.statusCode, 200, res.body);
    const jobs = (await autoJobs(scheduled)).length;
    const far = new Date(Date.now() + 30 * 86_400_000);
    assert.deepEqual(
      (await pass(far)).filter((a) => a.service === scheduled),
      [],
    );
    assert.equal((await autoJobs(scheduled)).length, jobs);
  });
});

describe('hostplane backups schedule', () => {
  test('sets the schedule through the token surface, as a table and as JSON; a bad hour exits 1', async () => {
    const url = await u.t.app.listen({ port: 0, host: '127.0.0.1' });
    const home = cli.home();
    const env = { HOSTPLANE_TOKEN: token.secret, HOSTPLANE_URL: url };
    const label = (
      await db().selectFrom('services').select('label').where('id', '=', scheduled).executeTakeFirstOrThrow()
    ).label;
    const shown = ok(
      await cli.run(home, ['backups', 'schedule', label, '--frequency', 'daily', '--hour', '6', '--keep', '4'], {
        env,
      }),
    );
    assert.match(shown.stdout, /frequency\s+daily/);
    assert.match(shown.stdout, /06:00/);
    assert.match(shown.stdout, /price a month\s+₹99\.00/);
    const asJson = ok(
      await cli.run(
        home,
        ['backups', 'schedule', String(scheduled), '--frequency', 'weekly', '--hour', '7', '--keep', '2', '-o', 'json'],
        { env },
      ),
    );
    const answer = JSON.parse(asJson.stdout);
    assert.equal(answer.backup_schedule.frequency, 'weekly');
    assert.equal(answer.backup_schedule.weekday, 0, 'weekly without a weekday: Sunday');
    assert.equal(answer.backup_schedule.keep, 2);
    const show = ok(await cli.run(home, ['instances', 'show', String(scheduled)], { env }));
    assert.match(show.stdout, /backups\s+Sundays at 07:00 IST, keeping 2/);
    const bad = await cli.run(
      home,
      ['backups', 'schedule', String(scheduled), '--frequency', 'daily', '--hour', '24', '--keep', '2'],
      { env },
    );
    assert.equal(bad.code, 1, bad.stderr);
    assert.match(bad.stderr, /validation_failed/);
  });
});

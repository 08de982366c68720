// A client's renew against the billing cycle (security review 3, T3-M1 and T3-L2; CONTRACT §7).
// A renew pays the service's unpaid renewal orders first (oldest first), or answers 422
// insufficient_funds naming them: it never buys a month beside an unpaid one. Suspension and
// termination count from paid_until; an unpaid order the service is already paid past is
// cancelled, never charged; money coming in passes over an order it cannot cover and pays a
// younger one it can. Renew (like pay) is 409 while a terminate job is queued or running.
// Last, a seeded property test: random sequences of renew, pay, deposit approval, staff credit,
// money arriving without settling (a refund) and billing runs at advancing times never charge a
// period twice, never take the wallet below zero, keep the ledger summing to the balance, and never
// suspend or terminate a service that is paid past the run's time.

import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import fc from 'fast-check';
import { addMonth } from '../src/core/time.ts';
import {
  admin,
  balance,
  booksHold,
  customer,
  DAY,
  db,
  deposit,
  drainMail,
  GRACE_DAYS,
  HOUR,
  later,
  of,
  order,
  periodsHold,
  quiet,
  refund,
  renew,
  renewalOrders,
  run,
  service,
  settled,
  TERMINATE_DAYS,
  twoServers,
  useApp,
} from './support/renew.ts';
import { apiClient } from './support/rest.ts';
import { createUpstreamApp, type UpstreamApp } from './support/upstreams.ts';

const SEED = Number(process.env.RENEW_SEED ?? 20270127);
const RUNS = Number(process.env.RENEW_RUNS ?? 15);

let u: UpstreamApp;

before(async () => {
  u = await createUpstreamApp();
  useApp(u);
});
after(async () => {
  await drainMail();
  await u.close();
});

describe('T3-M1: a renew pays what is owed first; the cycle counts from paid_until', () => {
  // The review's first reproduction: two servers overdue with an empty wallet, ₹500 comes in, the
  // client renews the cheaper one. Before the fix the credit paid nothing (it stopped at the ₹799
  // order), the renew bought a month beside the unpaid order, and the cycle suspended and then
  // terminated the service it had just been paid for.
  test('two overdue servers, ₹500 credited, renew of the ₹299 one: never suspended or terminated while paid', async () => {
    const { c, x, y } = await twoServers();
    const due = new Date(Math.max((x.period_end as Date).getTime(), (y.period_end as Date).getTime()));
    const billed = await run(later(due, HOUR), c.accountId);
    assert.deepEqual(of(billed, x.id), ['unpaid']);
    assert.deepEqual(of(billed, y.id), ['unpaid']);

    // ₹500 covers the ₹299 order, not the older ₹799 one: it is passed over, the younger one paid.
    const credited = await admin('wallet', 'credit', c.email, '500', '--note', 'bank transfer', '--json');
    assert.equal(credited.exitCode, 0, credited.stderr);
    assert.deepEqual(
      (await renewalOrders(y.id)).map((o) => o.status),
      ['paid'],
      'the credit paid the order it covers',
    );
    assert.deepEqual(
      (await renewalOrders(x.id)).map((o) => o.status),
      ['unpaid'],
    );
    assert.equal(await balance(c.accountId), 20_100n);
    assert.equal((await service(y.id)).period_end?.toISOString(), addMonth(y.period_end as Date).toISOString());

    // Nothing is owed for Y now: a renew is one more month, which ₹201 does not cover.
    const renewed = await renew(c, y.id);
    assert.equal(renewed.statusCode, 422, renewed.body);
    assert.equal(renewed.json().code, 'insufficient_funds');
    assert.equal(await balance(c.accountId), 20_100n, 'nothing charged');

    const grace = await run(later(due, GRACE_DAYS * DAY + HOUR), c.accountId);
    assert.deepEqual(of(grace, y.id), [], 'Y is paid: not suspended');
    assert.deepEqual(of(grace, x.id), ['suspended']);
    await quiet([x.id, y.id]);
    const end = await run(later(due, TERMINATE_DAYS * DAY + HOUR), c.accountId);
    assert.deepEqual(of(end, y.id), [], 'Y is paid: not terminated');
    assert.deepEqual(of(end, x.id), ['terminated']);
    // Money comes in while X is being deleted (or just after): it pays nothing for X, and X cannot
    // be renewed (T3-L2: the termination job is queued, running or done).
    await u.t.deps.wallet.credit(c.accountId, '1000', 'too late');
    assert.equal(await balance(c.accountId), 120_100n);
    const late = await renew(c, x.id);
    assert.equal(late.statusCode, 409, late.body);
    assert.equal(late.json().code, 'not_renewable');
    assert.equal(await balance(c.accountId), 120_100n, 'nothing charged for a service being deleted');
    await quiet([x.id, y.id]);
    assert.equal((await service(y.id)).status, 'active');
    assert.equal((await service(x.id)).status, 'terminated');
    await booksHold(c.accountId);
    await periodsHold(y);
    await periodsHold(x);
  });

  // The review's second run: a renew while the renewal order is unpaid, then ₹1,100 credited.
  // Before the fix the renew bought a second month beside the order (paid_until +1 month) and the
  // credit then paid the stale order too: two ₹299 charges for one month.
  test('a renew with an unpaid renewal order pays that order; a credit afterwards charges nothing twice', async () => {
    const c = await customer('299');
    const y = await order(c, 'vps-1c-1g');
    const due = y.period_end as Date;
    assert.deepEqual(of(await run(later(due, HOUR), c.accountId), y.id), ['unpaid']);
    const [owed] = await renewalOrders(y.id);
    assert.ok(owed);

    // Money beside the unpaid order without paying it (a refund does not settle orders).
    await refund(c.accountId, 299);
    const res = await renew(c, y.id);
    assert.equal(res.statusCode, 200, res.body);
    assert.equal(res.json().order.id, owed.id, 'the renew paid the unpaid order');
    assert.equal(res.json().order.status, 'paid');
    assert.equal(new Date(res.json().paid_until).toISOString(), addMonth(due).toISOString());
    assert.equal(await balance(c.accountId), 0n);
    assert.deepEqual(
      (await renewalOrders(y.id)).map((o) => o.status),
      ['paid'],
      'one order for the period, paid',
    );

    const credited = await admin('wallet', 'credit', c.email, '1100', '--note', 'bank transfer', '--json');
    assert.equal(credited.exitCode, 0, credited.stderr);
    assert.equal(await balance(c.accountId), 110_000n, 'the credit paid nothing: nothing was owed');
    assert.deepEqual(of(await run(later(due, GRACE_DAYS * DAY + HOUR), c.accountId), y.id), []);
    assert.deepEqual(of(await run(later(due, TERMINATE_DAYS * DAY + HOUR), c.accountId), y.id), []);
    const now = await service(y.id);
    assert.equal(now.status, 'active');
    assert.equal(now.period_end?.toISOString(), addMonth(due).toISOString());
    await booksHold(c.accountId);
    await periodsHold(y);
  });

  test('a renew the wallet cannot cover beside an unpaid order: 422 naming the order, nothing charged', async () => {
    const c = await customer('299');
    const y = await order(c, 'vps-1c-1g');
    const due = y.period_end as Date;
    await run(later(due, HOUR), c.accountId);
    const [owed] = await renewalOrders(y.id);
    assert.ok(owed);
    await refund(c.accountId, 100);
    const res = await renew(c, y.id);
    assert.equal(res.statusCode, 422, res.body);
    assert.equal(res.json().code, 'insufficient_funds');
    assert.match(res.json().message, new RegExp(owed.public_id));
    assert.deepEqual(res.json().details.unpaid_orders, [{ id: owed.id, public_id: owed.public_id, amount: '299.00' }]);
    assert.equal(res.json().details.shortfall, '199.00');
    assert.equal(await balance(c.accountId), 10_000n);
    assert.deepEqual(
      (await renewalOrders(y.id)).map((o) => o.status),
      ['unpaid'],
    );
    await booksHold(c.accountId);
  });

  // A database written before the fix holds services renewed beside an unpaid order: the order
  // is for a period the service is already paid past. It is cancelled, never charged, and never
  // a reason to suspend or terminate.
  test('an unpaid order the service is already paid past is cancelled by the run and by pay, never charged', async () => {
    const c = await customer('598');
    const a = await order(c, 'vps-1c-1g');
    const b = await order(c, 'vps-1c-1g');
    const due = new Date(Math.max((a.period_end as Date).getTime(), (b.period_end as Date).getTime()));
    await run(later(due, HOUR), c.accountId);
    const [staleA] = await renewalOrders(a.id);
    const [staleB] = await renewalOrders(b.id);
    assert.ok(staleA && staleB);
    // What the old renew left: paid_until moved a month on, the order still unpaid.
    for (const s of [a, b])
      await db()
        .updateTable('services')
        .set({ period_end: addMonth(s.period_end as Date) })
        .where('id', '=', s.id)
        .execute();

    const paid = await c.browser.post('/api/v1/client/orders/', { action: 'pay', id: staleA.id }, { csrf: true });
    assert.equal(paid.statusCode, 409, paid.body);
    assert.equal(paid.json().code, 'conflict');
    assert.match(paid.json().message, /already paid/);
    assert.equal((await renewalOrders(a.id))[0]?.status, 'cancelled');

    const grace = await run(later(due, GRACE_DAYS * DAY + HOUR), c.accountId);
    assert.deepEqual(of(grace, b.id), ['cancelled']);
    assert.deepEqual(of(grace, a.id), []);
    assert.equal((await renewalOrders(b.id))[0]?.status, 'cancelled');
    await u.t.deps.wallet.credit(c.accountId, '299', 'money in');
    assert.equal(await balance(c.accountId), 29_900n, 'nothing paid for a cancelled order');
    assert.deepEqual(of(await run(later(due, TERMINATE_DAYS * DAY + HOUR), c.accountId), b.id), []);
    for (const s of [a, b]) assert.equal((await service(s.id)).status, 'active');
    await booksHold(c.accountId);
  });
});

describe('T3-L2: no renew while the service is being terminated', () => {
  test('DELETE the instance, then renew at once: 409 not_renewable, nothing charged', async () => {
    const c = await customer('598');
    const svc = await order(c, 'vps-1c-1g');
    const api = await apiClient(u.t, ['*'], '0', c.accountId);
    const before = await balance(c.accountId);
    const ledger = async () =>
      (await db().selectFrom('wallet_transactions').select('id').where('account_id', '=', c.accountId).execute())
        .length;
    const rows = await ledger();
    // The node hangs, so the terminate job is still running when the renew arrives.
    await u.pve.setFaults({ hang: true });
    let jobId = 0;
    try {
      const del = await api.call('DELETE', `/api/v1/instances/${svc.id}`, { confirm: svc.label });
      assert.equal(del.statusCode, 202, del.body);
      jobId = del.json().job.id;
      const res = await renew(c, svc.id);
      const job = await db().selectFrom('jobs').select('status').where('id', '=', jobId).executeTakeFirstOrThrow();
      assert.ok(['queued', 'running'].includes(job.status), 'the terminate job was still going when renew answered');
      assert.equal(res.statusCode, 409, res.body);
      assert.equal(res.json().code, 'not_renewable');
      assert.match(res.json().message, /being terminated/);
    } finally {
      await u.pve.setFaults({ hang: false });
    }
    assert.equal(await balance(c.accountId), before, 'nothing charged');
    assert.equal(await ledger(), rows, 'no ledger row');
    assert.deepEqual(await renewalOrders(svc.id), []);
    await settled(jobId);
    await quiet([svc.id]);
    await booksHold(c.accountId);
  });
});

// ---------------------------------------------------------------------------------------------
// The property: random sequences of what moves money or time, one account with two servers.

type Op =
  | { kind: 'run'; hours: number }
  | { kind: 'renew'; which: 0 | 1 }
  | { kind: 'pay'; which: 0 | 1 }
  | { kind: 'credit'; rupees: number }
  | { kind: 'deposit'; rupees: number }
  | { kind: 'refund'; rupees: number };

const RUPEES = [100, 299, 500, 799, 1100];
const opArb: fc.Arbitrary<Op> = fc.oneof(
  {
    weight: 5,
    // Up to 8 days a step: runs reach the grace days, and in two or three steps the termination.
    arbitrary: fc.record({ kind: fc.constant('run' as const), hours: fc.integer({ min: 0, max: 8 * 24 }) }),
  },
  {
    weight: 3,
    arbitrary: fc.record({ kind: fc.constant('renew' as const), which: fc.constantFrom(0 as const, 1 as const) }),
  },
  {
    weight: 1,
    arbitrary: fc.record({ kind: fc.constant('pay' as const), which: fc.constantFrom(0 as const, 1 as const) }),
  },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('credit' as const), rupees: fc.constantFrom(...RUPEES) }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('deposit' as const), rupees: fc.constantFrom(...RUPEES) }) },
  { weight: 2, arbitrary: fc.record({ kind: fc.constant('refund' as const), rupees: fc.constantFrom(...RUPEES) }) },
);

/** A sequence; neighbours marked `together` run at the same time. */
const scenarioArb = fc.record({
  steps: fc.array(fc.record({ op: opArb, together: fc.boolean() }), { minLength: 6, maxLength: 16 }),
  overdue: fc.boolean(),
});

const count = (bag: Record<string, number>, key: string) => {
  bag[key] = (bag[key] ?? 0) + 1;
};

interface Tally {
  answers: Record<string, number>;
  actions: Record<string, number>;
}

async function oneScenario(
  { steps, overdue }: { steps: { op: Op; together: boolean }[]; overdue: boolean },
  tally: Tally,
): Promise<void> {
  const { c, x, y } = await twoServers(true);
  const svcs = [x, y];
  const ids = [x.id, y.id];
  const base = new Date(Math.max(...svcs.map((s) => (s.period_end as Date).getTime())));
  // Time only moves forward. Half the sequences start as the review's did, both servers overdue
  // with an empty wallet (a run just past the later paid_until); the others a few days before it.
  let at = overdue ? later(base, HOUR) : later(base, -4 * DAY);
  if (overdue) {
    const first = await run(at, c.accountId);
    for (const id of ids) assert.deepEqual(of(first, id), ['unpaid']);
    for (const a of first) count(tally.actions, a.action);
  }
  let deposits = 0;

  const perform = async (op: Op, paidUntil: Map<number, Date>): Promise<void> => {
    switch (op.kind) {
      case 'run': {
        at = later(at, op.hours * HOUR);
        const when = at;
        const actions = await run(when, c.accountId);
        for (const a of actions) {
          count(tally.actions, a.action);
          // Never suspended or terminated while paid past the run's time: paid_until only moves
          // forward, so the value before the batch bounds the one the run decided on.
          const until = paidUntil.get(a.service) as Date;
          if (a.action === 'suspended')
            assert.ok(
              until.getTime() + GRACE_DAYS * DAY <= when.getTime(),
              `suspended while paid until ${until.toISOString()}`,
            );
          if (a.action === 'terminated')
            assert.ok(
              until.getTime() + TERMINATE_DAYS * DAY <= when.getTime(),
              `terminated while paid until ${until.toISOString()}`,
            );
        }
        return;
      }
      case 'renew': {
        const res = await renew(c, ids[op.which] as number);
        const answer = res.statusCode === 200 ? 'renew 200' : `renew ${res.statusCode} ${res.json().code}`;
        count(tally.answers, answer);
        assert.ok(
          ['renew 200', 'renew 422 insufficient_funds', 'renew 409 not_renewable'].includes(answer),
          `${answer}: ${res.body}`,
        );
        return;
      }
      case 'pay': {
        const open = await db()
          .selectFrom('orders')
          .select('id')
          .where('service_id', '=', ids[op.which] as number)
          .where('status', '=', 'unpaid')
          .executeTakeFirst();
        if (!open) return;
        const res = await c.browser.post('/api/v1/client/orders/', { action: 'pay', id: open.id }, { csrf: true });
        const answer = res.statusCode === 200 ? 'pay 200' : `pay ${res.statusCode} ${res.json().code}`;
        count(tally.answers, answer);
        assert.ok(
          ['pay 200', 'pay 422 insufficient_funds', 'pay 409 conflict'].includes(answer),
          `${answer}: ${res.body}`,
        );
        return;
      }
      case 'credit': {
        const out = await admin('wallet', 'credit', c.email, String(op.rupees), '--note', 'property credit', '--json');
        assert.equal(out.exitCode, 0, out.stderr);
        return;
      }
      case 'deposit': {
        // The client's own allowance is 5 deposits an hour.
        if (deposits >= 4) return;
        deposits += 1;
        await deposit(c, op.rupees);
        return;
      }
      case 'refund':
        await refund(c.accountId, op.rupees);
        return;
    }
  };

  for (let i = 0; i < steps.length; ) {
    const batch = [steps[i] as { op: Op; together: boolean }];
    while (batch.length < 2 && steps[i + batch.length] && steps[i + batch.length - 1]?.together)
      batch.push(steps[i + batch.length] as { op: Op; together: boolean });
    i += batch.length;
    const paidUntil = new Map((await Promise.all(ids.map(service))).map((s) => [s.id, s.period_end as Date]));
    const outcomes = await Promise.allSettled(batch.map((s) => perform(s.op, paidUntil)));
    for (const o of outcomes) if (o.status === 'rejected') throw o.reason;
    const context = `after ${batch.map((s) => s.op.kind).join('+')} at ${at.toISOString()}:`;
    await booksHold(c.accountId, context);
    for (const s of svcs) await periodsHold(s, context);
  }

  // Quiet: every job done, then the cycle once more at the latest time, and the end state.
  await quiet(ids);
  await run(at, c.accountId);
  await quiet(ids);
  await booksHold(c.accountId, 'at the end:');
  for (const s of svcs) {
    await periodsHold(s, 'at the end:');
    const now = await service(s.id);
    const until = now.period_end as Date;
    const where = `service ${s.id} (${now.status}/${now.suspend_reason}) paid until ${until.toISOString()}, at ${at.toISOString()}:`;
    if (until > at) assert.equal(now.status, 'active', `${where} paid past now, so running`);
    if (now.status === 'terminated')
      assert.ok(until.getTime() + TERMINATE_DAYS * DAY <= at.getTime(), `${where} terminated before TERMINATE_DAYS`);
    if (now.status === 'suspended') {
      assert.ok(until.getTime() + GRACE_DAYS * DAY <= at.getTime(), `${where} suspended within the grace days`);
      const open = (await renewalOrders(s.id)).filter((o) => o.status === 'unpaid');
      assert.equal(open.length, 1, `${where} suspended with nothing owed`);
    }
    const cancelled = (await renewalOrders(s.id)).filter((o) => o.status === 'cancelled');
    if (cancelled.length > 0) assert.equal(now.status, 'terminated', `${where} an order cancelled on a live service`);
  }
}

describe('property: renew, pay, deposits, credits, refunds and runs in any order', () => {
  // A hang guard only.
  test(`${RUNS} random sequences never charge a period twice nor suspend or terminate a paid service`, {
    timeout: 600_000,
  }, async (t) => {
    const tally: Tally = { answers: {}, actions: {} };
    await fc.assert(
      fc.asyncProperty(scenarioArb, (scenario) => oneScenario(scenario, tally)),
      { seed: SEED, numRuns: RUNS, endOnFailure: true },
    );
    t.diagnostic(`seed ${SEED}, ${RUNS} sequences: ${JSON.stringify(tally)}`);
  });
});

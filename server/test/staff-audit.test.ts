// The audit trail (CONTRACT §14, issue 38): staff changes write audit_log rows in the change's
// own transaction (a failed change leaves none), the table refuses UPDATE, DELETE and TRUNCATE,
// the staff CLI's money and state commands are audited as the operator, the console's deposit
// decision moves the customer's wallet at once and is audited as the staff member, with a row in
// the customer's activity log; GET /audit (admin) pages and filters the log.

import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { sql } from 'kysely';
import { runAdmin } from '../src/admin/run.ts';
import { OPERATOR, recordAudit } from '../src/core/audit/audit.ts';
import type { AuditRow } from '../src/db/tables.ts';
import type { Browser } from './support/browser.ts';
import { freshIp, signedInBrowser } from './support/factories.ts';
import { createTestApp, ManualClock, type TestApp } from './support/harness.ts';
import { type SignedInStaff, signedInStaff } from './support/staff.ts';
import { multipart, PNG } from './support/uploads.ts';

let t: TestApp;
const clock = new ManualClock();
let billing: SignedInStaff;
let adminStaff: SignedInStaff;
before(async () => {
  t = await createTestApp({ overrides: { clock: clock.now } });
  billing = await signedInStaff(t, clock, 'billing', freshIp());
  adminStaff = await signedInStaff(t, clock, 'admin', freshIp());
});
after(() => t.close());

const admin = (...argv: string[]) => runAdmin(argv, async () => t.deps, 'staff:audit-test');
const db = () => t.deps.database.db;

async function auditRows(action?: string): Promise<AuditRow[]> {
  let query = db().selectFrom('audit_log').selectAll().orderBy('id');
  if (action !== undefined) query = query.where('action', '=', action);
  return query.execute();
}

let refCounter = 0;
async function reportDeposit(browser: Browser, amount: string): Promise<number> {
  refCounter += 1;
  const ref = `51${Date.now().toString().slice(-8)}${String(refCounter).padStart(2, '0')}`;
  const form = multipart({ amount, txn_ref: ref, csrf_token: browser.csrfToken as string }, [
    { field: 'screenshot', filename: 'upi.png', contentType: 'image/png', data: PNG },
  ]);
  const res = await browser.request('POST', '/api/v1/client/wallet/deposit/', {
    body: form.body,
    headers: { 'content-type': form.contentType },
  });
  assert.equal(res.statusCode, 201, res.body);
  const row = await db().selectFrom('deposits').select('id').where('txn_ref', '=', ref).executeTakeFirstOrThrow();
  return row.id;
}

describe('the audit log', () => {
  test('a deposit approved in the console: the wallet at once, the audit row as the staff member, the activity log', async () => {
    const customer = await signedInBrowser(t, freshIp());
    const id = await reportDeposit(customer.browser, '750.25');
    const queue = await billing.browser.get('/deposits?status=pending');
    assert.equal(queue.statusCode, 200);
    const listed = queue.json().deposits.find((d: { id: number }) => d.id === id);
    assert.equal(listed.amount, '750.25');
    assert.equal(listed.account.email, customer.account.email);

    const missingReason = await billing.browser.post('/deposits', { action: 'reject', id });
    assert.equal(missingReason.statusCode, 422);
    assert.ok(missingReason.json().errors.reason);
    const bad = await billing.browser.post('/deposits', { action: 'approve', id: 'x' });
    assert.equal(bad.statusCode, 422);
    assert.equal(bad.json().success, false);

    const approved = await billing.browser.post('/deposits', { action: 'approve', id });
    assert.equal(approved.statusCode, 200, approved.body);
    assert.equal(approved.json().deposit.status, 'approved');
    assert.equal(approved.json().deposit.reviewed_by, `staff:${billing.id}`);
    const wallet = (await customer.browser.get('/api/v1/client/wallet/')).json();
    assert.equal(wallet.wallet.balance, '750.25');

    const [row] = (await auditRows('deposit.approve')).filter((r) => r.target_id === String(id));
    assert.ok(row, 'an audit row');
    assert.equal(row.actor, `staff:${billing.id}`);
    assert.equal(row.staff_id, billing.id);
    assert.equal(row.role, 'billing');
    assert.equal(row.target_type, 'deposit');
    assert.equal(row.ip, billing.browser.ip);
    assert.deepEqual(row.before, { status: 'pending', account_id: customer.account.id, amount: '750.25' });
    assert.equal((row.after as { status: string }).status, 'approved');

    const activity = await db()
      .selectFrom('account_activity')
      .selectAll()
      .where('account_id', '=', customer.account.id)
      .where('type', '=', 'deposit_approved')
      .executeTakeFirstOrThrow();
    assert.equal(activity.actor, 'staff');
    assert.equal(activity.staff_name, 'Hostplane staff');

    const twice = await billing.browser.post('/deposits', { action: 'approve', id });
    assert.equal(twice.statusCode, 409);
    assert.equal((await auditRows('deposit.approve')).filter((r) => r.target_id === String(id)).length, 1);
    const unknown = await billing.browser.post('/deposits', { action: 'reject', id: 987654, reason: 'no such' });
    assert.equal(unknown.statusCode, 404);
  });

  test('the audit row is written in the change’s transaction: a change that fails leaves none', async () => {
    const before = (await auditRows()).length;
    await assert.rejects(
      db()
        .transaction()
        .execute(async (trx) => {
          await recordAudit(trx, {
            actor: OPERATOR,
            action: 'test.rollback',
            targetType: 'account',
            targetId: 1,
            at: clock.now(),
          });
          throw new Error('the change failed');
        }),
      /the change failed/,
    );
    assert.equal((await auditRows()).length, before);
    // A refused service change (a wallet credit over the cap, a role a member already has) writes none either.
    const customer = await signedInBrowser(t, freshIp());
    assert.equal((await admin('wallet', 'credit', customer.account.email, '99999999', '--note', 'typo')).exitCode, 1);
    assert.equal((await admin('staff', 'role', billing.email, 'billing')).exitCode, 1);
    assert.equal((await auditRows()).length, before);
  });

  test('audit_log refuses UPDATE, DELETE and TRUNCATE', async () => {
    const customer = await signedInBrowser(t, freshIp());
    assert.equal((await admin('accounts', 'suspend', customer.account.email, '--reason', 'audit')).exitCode, 0);
    const rows = await auditRows();
    assert.ok(rows.length > 0);
    await assert.rejects(sql`update audit_log set reason = 'rewritten'`.execute(db()), /append-only/);
    await assert.rejects(sql`delete from audit_log`.execute(db()), /append-only/);
    await assert.rejects(sql`truncate audit_log`.execute(db()), /append-only/);
    assert.deepEqual(await auditRows(), rows);
  });

  test('the staff CLI’s money and state commands are audited as the operator', async () => {
    const customer = await signedInBrowser(t, freshIp());
    const email = customer.account.email;
    const accountId = String(customer.account.id);
    const approveId = await reportDeposit(customer.browser, '100.00');
    const rejectId = await reportDeposit(customer.browser, '200.00');
    const steps: [string[], string, string][] = [
      [['deposits', 'approve', String(approveId)], 'deposit.approve', String(approveId)],
      [['deposits', 'reject', String(rejectId), '--reason', 'not received'], 'deposit.reject', String(rejectId)],
      [['wallet', 'credit', email, '50', '--note', 'goodwill'], 'wallet.credit', accountId],
      [['wallet', 'refund', email, '20', '--note', 'UTR 123456'], 'wallet.refund', accountId],
      [['accounts', 'suspend', email, '--reason', 'abuse report'], 'account.suspend', accountId],
      [['accounts', 'unsuspend', email], 'account.unsuspend', accountId],
      [['accounts', '2fa-reset', email], 'account.two_factor_reset', accountId],
    ];
    for (const [argv, action, target] of steps) {
      const result = await admin(...argv);
      assert.equal(result.exitCode, 0, `${argv.join(' ')}: ${result.stderr}`);
      const rows = (await auditRows(action)).filter((r) => r.target_id === target);
      const row = rows.at(-1);
      assert.ok(row, `${action} audited`);
      assert.equal(row.actor, 'operator');
      assert.equal(row.staff_id, null);
      assert.equal(row.role, null);
    }
    const credit = (await auditRows('wallet.credit')).at(-1) as AuditRow;
    assert.deepEqual(credit.before, { balance: '100.00' });
    assert.equal((credit.after as { balance: string }).balance, '150.00');
    assert.equal(credit.reason, 'goodwill (staff:audit-test)');
    const rejected = (await auditRows('deposit.reject')).at(-1) as AuditRow;
    assert.equal(rejected.reason, 'not received');
    // The customer reads the refund in their activity log.
    const refund = await db()
      .selectFrom('account_activity')
      .selectAll()
      .where('account_id', '=', customer.account.id)
      .where('type', '=', 'staff_wallet_refunded')
      .executeTakeFirstOrThrow();
    assert.equal(refund.staff_name, 'operator');
  });

  test('the staff CLI’s catalog commands are audited as the operator: plans add, disable and enable', async () => {
    const label = 'vps-audit-test';
    const location = await admin('locations', 'add', 'aud1', '--name', 'Audit 1', '--city', 'Pune');
    assert.equal(location.exitCode, 0, location.stderr);
    const added = await admin(
      ...['plans', 'add', label, '--name', 'Audit Test VPS', '--type', 'vps', '--price', '499'],
      ...['--specs', '{"vcpu":1,"ram_mb":1024,"disk_gb":25,"bandwidth_tb":1}', '--regions', 'aud1', '--json'],
    );
    assert.equal(added.exitCode, 0, added.stderr);
    const planId = String((JSON.parse(added.stdout) as { id: number }).id);
    const add = (await auditRows('plan.add')).filter((r) => r.target_id === planId);
    assert.equal(add.length, 1);
    assert.equal(add[0]?.actor, 'operator');
    assert.deepEqual(add[0]?.after, {
      label,
      name: 'Audit Test VPS',
      type: 'vps',
      price_paise: '49900',
      regions: ['aud1'],
    });
    assert.equal((await admin('plans', 'disable', label)).exitCode, 0);
    assert.equal((await admin('plans', 'disable', label)).exitCode, 0); // no change: no second row
    assert.equal((await admin('plans', 'enable', label)).exitCode, 0);
    const disabled = (await auditRows('plan.disable')).filter((r) => r.target_id === planId);
    assert.equal(disabled.length, 1);
    assert.deepEqual([disabled[0]?.before, disabled[0]?.after], [{ active: true }, { active: false }]);
    const enabled = (await auditRows('plan.enable')).filter((r) => r.target_id === planId);
    assert.equal(enabled.length, 1);
    assert.equal(enabled[0]?.actor, 'operator');
    // A plan that does not exist: refused, nothing written.
    assert.equal((await admin('plans', 'disable', 'no-such-plan')).exitCode, 1);
  });

  test('staff changes from the CLI and the console are audited; GET /audit pages and filters (admin)', async () => {
    const added = await admin('staff', 'add', 'newbie@staff.example.in', '--role', 'support', '--json');
    assert.equal(added.exitCode, 0, added.stderr);
    const newbie = JSON.parse(added.stdout).id as number;
    const viaConsole = await adminStaff.browser.post('/staff', {
      action: 'role',
      id: newbie,
      role: 'billing',
      reason: 'covers the deposits queue',
    });
    assert.equal(viaConsole.statusCode, 200, viaConsole.body);
    assert.equal((await adminStaff.browser.post('/staff', { action: 'disable', id: newbie })).statusCode, 200);

    const page = await adminStaff.browser.get(`/audit?target_type=staff&target_id=${newbie}&limit=2`);
    assert.equal(page.statusCode, 200, page.body);
    const entries = page.json().entries as {
      action: string;
      actor: string;
      role: string | null;
      reason: string | null;
    }[];
    assert.deepEqual(
      entries.map((e) => [e.action, e.actor]),
      [
        ['staff.disable', `staff:${adminStaff.id}`],
        ['staff.role', `staff:${adminStaff.id}`],
      ],
    );
    assert.equal(entries[1]?.reason, 'covers the deposits queue');
    const next = await adminStaff.browser.get(
      `/audit?target_type=staff&target_id=${newbie}&limit=2&before=${page.json().next_before}`,
    );
    const rest = next.json().entries as { action: string; actor: string; role: string | null }[];
    assert.deepEqual(
      rest.map((e) => [e.action, e.actor, e.role]),
      [['staff.add', 'operator', null]],
    );
    assert.equal(next.json().next_before, null);
    const bad = await adminStaff.browser.get('/audit?limit=0');
    assert.equal(bad.statusCode, 422);
    assert.equal(bad.json().code, 'validation_failed');
    // No secret ever reaches the log.
    const all = JSON.stringify(await auditRows());
    assert.doesNotMatch(all, /password_hash|totp_secret|\$argon2/);
  });
});

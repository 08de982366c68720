// The staff console's billing and admin routes (CONTRACT §14, issue 38), through the HTTP surface
// against a real database and the Razorpay emulator: invoices searched, shown and downloaded as
// PDF, credited from the console (a credit note, the money back in the wallet, the audit row; more
// than is left refused with nothing written); an online deposit refunded through the gateway; a
// bank statement previewed (nothing changes) and applied (each approval audited as the member's,
// the run once more); locations, OS templates and IPv4 ranges added, each audited; the settings in
// effect without a secret's value. The role battery of every row is server/test/staff-roles.test.ts.

import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { type RazorpayEmulator, startRazorpayEmulator } from '../../emulators/src/razorpay/index.ts';
import { runAdmin } from '../src/admin/run.ts';
import { VARIABLES } from '../src/config.ts';
import { SHOWN_VARIABLES } from '../src/config-effective.ts';
import { seedDemoCatalog } from '../src/core/catalog/demo-seed.ts';
import type { AuditRow } from '../src/db/tables.ts';
import type { Browser } from './support/browser.ts';
import { createAccount, freshIp, signedInBrowser } from './support/factories.ts';
import { createTestApp, ManualClock, type TestApp } from './support/harness.ts';
import { type SignedInStaff, signedInStaff } from './support/staff.ts';
import { receivedPng } from './support/uploads.ts';

let t: TestApp;
let emu: RazorpayEmulator;
const clock = new ManualClock();
let billing: SignedInStaff;
let admin: SignedInStaff;

before(async () => {
  emu = await startRazorpayEmulator();
  t = await createTestApp({
    overrides: { clock: clock.now },
    env: {
      RAZORPAY_KEY_ID: emu.keyId,
      RAZORPAY_KEY_SECRET: emu.keySecret,
      RAZORPAY_WEBHOOK_SECRET: emu.webhookSecret,
      RAZORPAY_API_URL: emu.url,
    },
  });
  await seedDemoCatalog(t.deps.database.db);
  // Orders take their money (and get their invoice) and wait for a worker that never comes.
  await t.deps.nodes.add({
    name: 'pve-billing-admin',
    kind: 'proxmox',
    locationCode: 'mum1',
    endpoint: 'http://127.0.0.1:9',
    credentials: { token_id: 'a@pve!b', token_secret: 'x' },
    capacity: 500,
  });
  billing = await signedInStaff(t, clock, 'billing', freshIp());
  admin = await signedInStaff(t, clock, 'admin', freshIp());
});
after(async () => {
  await t?.close();
  await emu?.stop();
});

const db = () => t.deps.database.db;
const cli = (...argv: string[]) => runAdmin(argv, async () => t.deps, 'staff:billing-admin-test');

async function auditRows(action: string, targetId?: number | string): Promise<AuditRow[]> {
  let query = db().selectFrom('audit_log').selectAll().where('action', '=', action).orderBy('id');
  if (targetId !== undefined) query = query.where('target_id', '=', String(targetId));
  return query.execute();
}

/** A customer with ₹1000 who ordered a plan: its tax invoice is issued. */
async function invoicedCustomer(label = 'vps-2c-4g') {
  const c = await signedInBrowser(t, freshIp());
  await t.deps.wallet.credit(c.account.id, '1000', 'test float');
  const plan = await db().selectFrom('plans').select('id').where('label', '=', label).executeTakeFirstOrThrow();
  const res = await c.browser.post(
    '/api/v1/client/orders/',
    {
      plan_id: plan.id,
      config: { hostname: `sba${c.account.id}.example.in`, os: 'debian-12', region: 'mum1' },
      idempotency_key: `sba-${c.account.id}`,
    },
    { csrf: true },
  );
  assert.equal(res.statusCode, 201, res.body);
  const invoice = await db()
    .selectFrom('invoices')
    .selectAll()
    .where('account_id', '=', c.account.id)
    .where('kind', '=', 'invoice')
    .executeTakeFirstOrThrow();
  return { ...c, invoice };
}

describe('invoices and credit notes (billing)', () => {
  test('search by number, e-mail and id; one in full; its PDF', async () => {
    const { account, invoice } = await invoicedCustomer();
    const byNumber = await billing.browser.get(`/invoices?q=${encodeURIComponent(invoice.number.toLowerCase())}`);
    assert.equal(byNumber.statusCode, 200, byNumber.body);
    assert.deepEqual(
      byNumber.json().invoices.map((i: { id: number }) => i.id),
      [invoice.id],
    );
    const row = byNumber.json().invoices[0];
    assert.equal(row.account.email, account.email);
    assert.equal(row.total, '799.00');
    assert.equal(row.credited, '0.00');
    assert.equal(row.creditable, '799.00');
    const byEmail = (await billing.browser.get(`/invoices?q=${encodeURIComponent(account.email)}`)).json();
    assert.deepEqual(
      byEmail.invoices.map((i: { id: number }) => i.id),
      [invoice.id],
    );
    assert.equal((await billing.browser.get(`/invoices?q=${invoice.id}`)).json().invoices[0].id, invoice.id);
    const page = (await billing.browser.get('/invoices?limit=1&kind=invoice')).json();
    assert.equal(page.invoices.length, 1);
    assert.equal(page.next_before === null || /^\d+$/.test(page.next_before), true);

    const detail = await billing.browser.get(`/invoices/${invoice.id}`);
    assert.equal(detail.statusCode, 200, detail.body);
    assert.equal(detail.json().invoice.number, invoice.number);
    assert.equal(detail.json().invoice.lines.length, 1);
    assert.deepEqual(detail.json().credit_notes, []);
    assert.equal(detail.json().pdf_url, `/api/v1/staff/invoices/${invoice.id}/pdf`);

    const pdf = await billing.browser.get(detail.json().pdf_url);
    assert.equal(pdf.statusCode, 200);
    assert.equal(pdf.headers['content-type'], 'application/pdf');
    assert.match(String(pdf.headers['content-disposition']), /attachment; filename="HP-\d{4}-\d{6}\.pdf"/);
    assert.equal(pdf.rawPayload.subarray(0, 5).toString(), '%PDF-');

    const missing = await billing.browser.get('/invoices/987654');
    assert.equal(missing.statusCode, 404);
    assert.equal(missing.json().success, false);
    assert.equal((await billing.browser.get('/invoices/987654/pdf')).statusCode, 404);
    const bad = await billing.browser.get('/invoices?kind=receipt');
    assert.equal(bad.statusCode, 422);
    assert.equal(bad.json().code, 'validation_failed');
  });

  test('a credit note: the money back in the wallet, the audit row, the activity; never more than is left', async () => {
    const { browser, account, invoice } = await invoicedCustomer();
    const noReason = await billing.browser.post('/invoices', { action: 'credit', id: invoice.id, amount_paise: 100 });
    assert.equal(noReason.statusCode, 422);
    assert.ok(noReason.json().errors.reason);

    const part = await billing.browser.post('/invoices', {
      action: 'credit',
      id: invoice.id,
      amount_paise: 10_001,
      reason: 'goodwill for the outage',
    });
    assert.equal(part.statusCode, 200, part.body);
    const body = part.json();
    assert.equal(body.credit_note.kind, 'credit_note');
    assert.equal(body.credit_note.total, '100.01');
    assert.equal(body.credit_note.original_number, invoice.number);
    assert.equal(body.invoice.credited, '100.01');
    assert.equal(body.invoice.creditable, '698.99');
    assert.equal(body.balance, '301.01', '1000 - 799 + 100.01');

    const [row] = await auditRows('invoice.credit', invoice.id);
    assert.ok(row);
    assert.equal(row.actor, `staff:${billing.id}`);
    assert.equal(row.role, 'billing');
    assert.equal(row.ip, billing.browser.ip);
    assert.equal(row.reason, 'goodwill for the outage');
    assert.deepEqual(row.before, { number: invoice.number, credited: '0.00' });
    assert.deepEqual(row.after, {
      credit_note: body.credit_note.number,
      amount: '100.01',
      credited: '100.01',
      transaction: body.transaction,
    });
    const wallet = (await browser.get('/api/v1/client/wallet/')).json();
    assert.equal(wallet.transactions[0].kind, 'refund');
    assert.equal(wallet.transactions[0].amount, '100.01');
    const activity = await db()
      .selectFrom('account_activity')
      .selectAll()
      .where('account_id', '=', account.id)
      .where('type', '=', 'staff_invoice_credited')
      .executeTakeFirstOrThrow();
    assert.equal(activity.staff_name, 'Hostplane staff');

    // More than is left: refused beside its field, nothing written.
    const audits = (await auditRows('invoice.credit')).length;
    const over = await billing.browser.post('/invoices', {
      action: 'credit',
      id: invoice.id,
      amount_paise: 69_900,
      reason: 'too much',
    });
    assert.equal(over.statusCode, 422, over.body);
    assert.match(over.json().errors.amount_paise, /at most 698\.99/);
    assert.equal((await auditRows('invoice.credit')).length, audits);
    assert.equal((await t.deps.wallet.balance(account.id)).toString(), '30101');

    const detail = (await billing.browser.get(`/invoices/${invoice.id}`)).json();
    assert.equal(detail.credit_notes.length, 1);
    const onNote = await billing.browser.post('/invoices', {
      action: 'credit',
      id: detail.credit_notes[0].id,
      reason: 'credit the credit note',
    });
    assert.equal(onNote.statusCode, 409);

    // The rest, without an amount; then nothing is left.
    const rest = await billing.browser.post('/invoices', { action: 'credit', id: invoice.id, reason: 'cancelled' });
    assert.equal(rest.statusCode, 200, rest.body);
    assert.equal(rest.json().credit_note.total, '698.99');
    assert.equal(rest.json().invoice.creditable, '0.00');
    const again = await billing.browser.post('/invoices', { action: 'credit', id: invoice.id, reason: 'once more' });
    assert.equal(again.statusCode, 409);
    const missing = await billing.browser.post('/invoices', { action: 'credit', id: 987654, reason: 'no such' });
    assert.equal(missing.statusCode, 404);
  });

  test('the CLI’s credit note is audited as the operator', async () => {
    const { invoice } = await invoicedCustomer('vps-1c-1g');
    const out = await cli('invoices', 'credit', invoice.number, '--amount', '10', '--reason', 'from the shell');
    assert.equal(out.exitCode, 0, out.stderr);
    const [row] = await auditRows('invoice.credit', invoice.id);
    assert.equal(row?.actor, 'operator');
    assert.equal(row?.reason, 'from the shell');
  });
});

describe('deposit refunds (billing)', () => {
  /** A client whose online deposit of `amount` is paid and approved. */
  async function paidDeposit(browser: Browser, amount: string) {
    const started = await browser.post(
      '/api/v1/client/wallet/deposit/',
      { method: 'razorpay', amount },
      { csrf: true },
    );
    assert.equal(started.statusCode, 201, started.body);
    const { deposit, checkout } = started.json();
    const paid = emu.pay(checkout.order_id);
    const verified = await browser.post(
      '/api/v1/client/wallet/deposit/',
      {
        action: 'razorpay_verify',
        razorpay_order_id: paid.razorpay_order_id,
        razorpay_payment_id: paid.razorpay_payment_id,
        razorpay_signature: paid.razorpay_signature,
      },
      { csrf: true },
    );
    assert.equal(verified.json().deposit.status, 'approved', verified.body);
    return deposit as { id: number; public_id: string };
  }

  test('an online deposit back through Razorpay: the wallet debited, recorded, audited; once only', async () => {
    const { browser, account } = await signedInBrowser(t, freshIp());
    const deposit = await paidDeposit(browser, '500');
    const listed = (await billing.browser.get('/deposits?status=approved&method=razorpay')).json();
    const mine = listed.deposits.find((d: { id: number }) => d.id === deposit.id);
    assert.equal(mine.method, 'razorpay');
    assert.equal(mine.refund, null);
    assert.ok(listed.deposits.every((d: { method: string }) => d.method === 'razorpay'));

    const noReason = await billing.browser.post('/deposits', { action: 'refund', id: deposit.id });
    assert.equal(noReason.statusCode, 422);
    assert.ok(noReason.json().errors.reason);
    const tooSmall = await billing.browser.post('/deposits', {
      action: 'refund',
      id: deposit.id,
      amount_paise: 50,
      reason: 'half a rupee',
    });
    assert.equal(tooSmall.statusCode, 422);
    assert.ok(tooSmall.json().errors.amount_paise, tooSmall.body);

    const res = await billing.browser.post('/deposits', {
      action: 'refund',
      id: deposit.id,
      amount_paise: 20_000,
      reason: 'customer asked',
    });
    assert.equal(res.statusCode, 200, res.body);
    assert.equal(res.json().deposit.refund.amount, '200.00');
    assert.equal(res.json().deposit.refund.reason, 'customer asked');
    assert.equal(res.json().deposit.refund.by, `staff:${billing.id}`);
    assert.equal(String(await t.deps.wallet.balance(account.id)), '30000');
    const [row] = await auditRows('deposit.refund', deposit.id);
    assert.ok(row);
    assert.equal(row.actor, `staff:${billing.id}`);
    assert.equal(row.reason, 'customer asked');
    assert.deepEqual(row.before, { status: 'approved', amount: '500.00', refunded: false });
    assert.equal((row.after as { refund_amount: string }).refund_amount, '200.00');

    const twice = await billing.browser.post('/deposits', { action: 'refund', id: deposit.id, reason: 'again' });
    assert.equal(twice.statusCode, 409);
    assert.equal((await auditRows('deposit.refund', deposit.id)).length, 1);
  });

  test('a manual deposit is not refunded through the gateway', async () => {
    const { account } = await createAccount(t);
    const manual = await t.deps.deposits.submit(account.id, {
      amount: '100',
      txnRef: `61${account.id}00000077`,
      upload: await receivedPng(t.dataDir),
    });
    const res = await billing.browser.post('/deposits', { action: 'refund', id: manual.id, reason: 'paid by UPI' });
    assert.equal(res.statusCode, 409, res.body);
    assert.equal(res.json().success, false);
  });
});

describe('statement reconciliation upload (billing)', () => {
  const today = new Date(Date.now() + 330 * 60_000).toISOString().slice(0, 10);

  test('preview changes nothing; apply approves, audited per deposit and once for the run; again: nothing', async () => {
    const { account } = await createAccount(t);
    const ref = `6199${String(account.id).padStart(8, '0')}`;
    const pending = await t.deps.deposits.submit(account.id, {
      amount: '499.00',
      txnRef: ref,
      upload: await receivedPng(t.dataDir),
    });
    const statement = [
      'Transaction Date,UTR,Amount,Payer VPA,Remarks,Status',
      `${today} 10:01:00,${ref},499.00,asha@okhdfc,Hostplane wallet,SUCCESS`,
      `${today} 10:05:00,699999999999,12.00,nobody@ybl,wallet,SUCCESS`,
      `${today} 10:09:00,${ref}9,50.00,kiran@paytm,wallet,FAILED`,
      '',
    ].join('\n');
    const body = { file_name: 'upi-settlement.csv', statement };

    const preview = await billing.browser.post('/deposits/reconcile', { action: 'preview', ...body });
    assert.equal(preview.statusCode, 200, preview.body);
    const p = preview.json();
    assert.equal(p.dry_run, true);
    assert.equal(p.layout, 'upi');
    assert.deepEqual(
      p.lines.map((l: { reference: string; outcome: string }) => [l.reference, l.outcome]),
      [
        [ref, 'would_approve'],
        ['699999999999', 'unmatched'],
      ],
    );
    assert.equal(p.summary.skipped, 1);
    assert.match(p.reviewer, new RegExp(`^reconciliation:upi-settlement\\.csv@[0-9a-f]{8} by staff:${billing.id}$`));
    assert.equal((await t.deps.deposits.get(pending.id)).status, 'pending');
    assert.equal((await auditRows('deposit.approve', pending.id)).length, 0);
    assert.equal((await auditRows('deposit.reconcile')).length, 0);

    const applied = await billing.browser.post('/deposits/reconcile', {
      action: 'apply',
      ...body,
      reason: 'settlement of the day',
    });
    assert.equal(applied.statusCode, 200, applied.body);
    assert.equal(applied.json().summary.approved, 1);
    assert.equal(applied.json().lines[0].outcome, 'approved');
    const deposit = await t.deps.deposits.get(pending.id);
    assert.equal(deposit.status, 'approved');
    assert.equal(deposit.reviewed_by, applied.json().reviewer);
    assert.equal(String(await t.deps.wallet.balance(account.id)), '49900');
    const [approval] = await auditRows('deposit.approve', pending.id);
    assert.equal(approval?.actor, `staff:${billing.id}`);
    assert.equal(approval?.reason, `statement line 2: ${applied.json().reviewer}`);
    const [run] = await auditRows('deposit.reconcile');
    assert.equal(run?.actor, `staff:${billing.id}`);
    assert.equal(run?.target_type, 'statement');
    assert.match(run?.target_id ?? '', /^upi-settlement\.csv@[0-9a-f]{8}$/);
    assert.equal(run?.reason, 'settlement of the day');
    assert.equal((run?.after as { approved: number }).approved, 1);
    // The customer reads the platform's confirmation, as from the CLI.
    const activity = await db()
      .selectFrom('account_activity')
      .selectAll()
      .where('account_id', '=', account.id)
      .where('type', '=', 'deposit_approved')
      .executeTakeFirstOrThrow();
    assert.equal(activity.actor, 'system');

    const again = await billing.browser.post('/deposits/reconcile', { action: 'apply', ...body });
    assert.equal(again.json().lines[0].outcome, 'already_approved');
    assert.equal((await auditRows('deposit.approve', pending.id)).length, 1);
  });

  test('a file that is not a statement is 400; an empty one and a bad layout are 422', async () => {
    const notCsv = await billing.browser.post('/deposits/reconcile', {
      action: 'preview',
      file_name: 'notes.txt',
      statement: 'hello,world\n1,2\n',
    });
    assert.equal(notCsv.statusCode, 400, notCsv.body);
    assert.equal(notCsv.json().success, false);
    assert.match(notCsv.json().message, /header row/);
    const empty = await billing.browser.post('/deposits/reconcile', {
      action: 'preview',
      file_name: 'e.csv',
      statement: '  \n',
    });
    assert.equal(empty.statusCode, 422);
    assert.ok(empty.json().errors.statement);
    const layout = await billing.browser.post('/deposits/reconcile', {
      action: 'preview',
      file_name: 'e.csv',
      statement: 'a,b\n',
      layout: 'swift',
    });
    assert.equal(layout.statusCode, 422);
  });
});

describe('locations, OS templates, IPv4 ranges (admin)', () => {
  test('a location added, audited; its code once only', async () => {
    const list = (await admin.browser.get('/locations')).json();
    const mum1 = list.locations.find((l: { code: string }) => l.code === 'mum1');
    assert.ok(mum1.ipv4_free > 0, JSON.stringify(mum1));
    assert.equal(typeof mum1.slots.proxmox, 'number');
    const bad = await admin.browser.post('/locations', { action: 'add', code: 'X', name: '', city: 'c' });
    assert.equal(bad.statusCode, 422);
    assert.deepEqual(Object.keys(bad.json().errors).sort(), ['city', 'code', 'name']);
    const added = await admin.browser.post('/locations', {
      action: 'add',
      code: 'blr-test',
      name: 'Bengaluru test',
      city: 'Bengaluru',
      reason: 'new rack',
    });
    assert.equal(added.statusCode, 200, added.body);
    assert.equal(added.json().location.code, 'blr-test');
    assert.equal(added.json().location.ipv4_free, 0);
    const [row] = await auditRows('location.add', added.json().location.id);
    assert.equal(row?.actor, `staff:${admin.id}`);
    assert.equal(row?.reason, 'new rack');
    assert.deepEqual(row?.after, { location: 'blr-test', name: 'Bengaluru test', city: 'Bengaluru', country: 'IN' });
    const twice = await admin.browser.post('/locations', {
      action: 'add',
      code: 'blr-test',
      name: 'Again',
      city: 'Bengaluru',
    });
    assert.equal(twice.statusCode, 422);
    assert.equal(twice.json().errors.code, 'is already used');
    assert.equal((await auditRows('location.add')).length, 1);
  });

  test('an OS template added, its install image set and cleared, each audited', async () => {
    const before = (await admin.browser.get('/os')).json().os;
    assert.ok(before.some((o: { slug: string }) => o.slug === 'debian-12'));
    const missing = await admin.browser.post('/os', { action: 'add', slug: 'alma-9' });
    assert.equal(missing.statusCode, 422);
    assert.deepEqual(Object.keys(missing.json().errors).sort(), ['family', 'name', 'template_vmid', 'version']);
    const added = await admin.browser.post('/os', {
      action: 'add',
      slug: 'alma-9',
      name: 'AlmaLinux 9',
      family: 'alma',
      version: '9',
      template_vmid: 9009,
      reason: 'customers asked',
    });
    assert.equal(added.statusCode, 200, added.body);
    const os = added.json().os;
    assert.equal(os.image_url, null);
    assert.equal(os.min_disk_gb, 10);
    const [row] = await auditRows('os.add', os.id);
    assert.equal((row?.after as { slug: string }).slug, 'alma-9');
    assert.equal(row?.reason, 'customers asked');

    const url = 'https://images.example.in/alma-9.iso';
    const set = await admin.browser.post('/os', { action: 'image', slug: 'alma-9', image_url: url });
    assert.equal(set.statusCode, 200, set.body);
    assert.equal(set.json().os.image_url, url);
    const badUrl = await admin.browser.post('/os', { action: 'image', slug: 'alma-9', image_url: 'ftp://x/y.iso' });
    assert.equal(badUrl.statusCode, 422);
    assert.ok(badUrl.json().errors.image_url);
    const blank = await admin.browser.post('/os', { action: 'image', slug: 'alma-9', image_url: ' ' });
    assert.equal(blank.statusCode, 422, 'a blank URL is not a way to clear it');
    const cleared = await admin.browser.post('/os', { action: 'image', slug: 'alma-9', image_url: null });
    assert.equal(cleared.json().os.image_url, null);
    const images = await auditRows('os.image', os.id);
    assert.deepEqual(
      images.map((r) => [r.before, r.after]),
      [
        [{ image_url: null }, { image_url: url }],
        [{ image_url: url }, { image_url: null }],
      ],
    );
    const unknown = await admin.browser.post('/os', { action: 'image', slug: 'no-such-os', image_url: null });
    assert.equal(unknown.statusCode, 404);
  });

  test('an OS template retired and unretired, a location closed and reopened, each audited with the reason', async () => {
    const retired = await admin.browser.post('/os', { action: 'retire', slug: 'rocky-9', reason: 'end of life' });
    assert.equal(retired.statusCode, 200, retired.body);
    assert.equal(retired.json().os.active, false);
    assert.match(retired.json().message, /retired/);
    const [row] = await auditRows('os.retire', retired.json().os.id);
    assert.equal(row?.actor, `staff:${admin.id}`);
    assert.equal(row?.reason, 'end of life');
    assert.deepEqual(
      [row?.before, row?.after],
      [
        { slug: 'rocky-9', active: true },
        { slug: 'rocky-9', active: false },
      ],
    );
    assert.equal(
      (await admin.browser.get('/os')).json().os.find((o: { slug: string }) => o.slug === 'rocky-9').active,
      false,
    );
    const back = await admin.browser.post('/os', { action: 'unretire', slug: 'rocky-9' });
    assert.equal(back.json().os.active, true);
    assert.equal((await auditRows('os.unretire', back.json().os.id)).length, 1);
    assert.equal((await admin.browser.post('/os', { action: 'retire', slug: 'no-such-os' })).statusCode, 404);

    const closed = await admin.browser.post('/locations', { action: 'close', code: 'del1', reason: 'power work' });
    assert.equal(closed.statusCode, 200, closed.body);
    assert.equal(closed.json().location.active, false);
    const [close] = await auditRows('location.close', closed.json().location.id);
    assert.equal(close?.reason, 'power work');
    assert.deepEqual(close?.after, { location: 'del1', active: false });
    const opened = await admin.browser.post('/locations', { action: 'open', code: 'del1' });
    assert.equal(opened.json().location.active, true);
    assert.equal((await auditRows('location.open', closed.json().location.id)).length, 1);
    const unknown = await admin.browser.post('/locations', { action: 'close', code: 'nowhere' });
    assert.equal(unknown.statusCode, 404);
    assert.match(unknown.json().message, /No location "nowhere"/);
  });

  test('an IPv4 range added to a location, audited; one overlapping another location adds nothing', async () => {
    await admin.browser.post('/locations', { action: 'add', code: 'hyd-test', name: 'Hyderabad', city: 'Hyderabad' });
    const res = await admin.browser.post('/ip-ranges', {
      action: 'add',
      location: 'hyd-test',
      cidr: '100.64.10.0/29',
      reason: 'new transit',
    });
    assert.equal(res.statusCode, 200, res.body);
    assert.deepEqual(res.json().range, {
      location: 'hyd-test',
      cidr: '100.64.10.0/29',
      gateway: '100.64.10.1',
      added: 5,
      skipped: 0,
    });
    const location = await t.deps.catalog.location('hyd-test');
    const [row] = await auditRows('ipv4.add_range', location.id);
    assert.equal(row?.reason, 'new transit');
    assert.equal((row?.after as { added: number }).added, 5);
    const ranges = (await admin.browser.get('/ip-ranges')).json().ranges;
    assert.deepEqual(
      ranges.find((r: { location: string }) => r.location === 'hyd-test'),
      { location: 'hyd-test', cidr: '100.64.10.0/29', gateway: '100.64.10.1', free: 5, allocated: 0, reserved: 0 },
    );

    const overlap = await admin.browser.post('/ip-ranges', {
      action: 'add',
      location: 'hyd-test',
      cidr: '198.51.100.0/29',
    });
    assert.equal(overlap.statusCode, 409, overlap.body);
    assert.deepEqual(overlap.json().details, { owners: { blr1: 5 } });
    assert.equal((await auditRows('ipv4.add_range')).length, 1);
    const unknown = await admin.browser.post('/ip-ranges', { action: 'add', location: 'nowhere', cidr: '10.9.0.0/29' });
    assert.equal(unknown.statusCode, 404);
    const bad = await admin.browser.post('/ip-ranges', { action: 'add', location: 'hyd-test', cidr: '10.0.0.0/8' });
    assert.equal(bad.statusCode, 422);
    assert.ok(bad.json().errors.cidr);
  });
});

describe('settings (admin)', () => {
  test('every variable with its value in effect; a secret is only "set"', async () => {
    const res = await admin.browser.get('/settings');
    assert.equal(res.statusCode, 200, res.body);
    const settings = res.json().settings as { name: string; value: string; secret: boolean }[];
    assert.deepEqual(
      settings.map((s) => s.name),
      VARIABLES.map((v) => v.name),
    );
    assert.deepEqual([...SHOWN_VARIABLES].sort(), VARIABLES.map((v) => v.name).sort(), 'every variable is read');
    const of = (name: string) => settings.find((s) => s.name === name);
    assert.deepEqual(of('RAZORPAY_KEY_SECRET'), { ...of('RAZORPAY_KEY_SECRET'), value: 'set', secret: true });
    assert.equal(of('RAZORPAY_WEBHOOK_SECRET')?.value, 'set');
    assert.equal(of('RAZORPAY_KEY_ID')?.value, emu.keyId);
    assert.equal(of('SECRET_KEY')?.secret, true);
    assert.equal(of('GRACE_DAYS')?.value, String(t.deps.config.graceDays));
    assert.ok(!res.body.includes(emu.keySecret), 'the key secret is not in the answer');
    assert.ok(!res.body.includes(emu.webhookSecret), 'the webhook secret is not in the answer');
    assert.ok(!res.body.includes(t.deps.secretKey.toString('base64')), 'SECRET_KEY is not in the answer');
  });
});

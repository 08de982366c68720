// Staff refund an online deposit back through Razorpay (issue 35, CONTRACT §12): `deposits refund
// ID --reason [--amount]` against the Razorpay emulator. The gateway refunds and the wallet is
// debited with a `withdrawal` row together; more than the balance is refused before the gateway is
// asked (a balance is never negative); a refunded deposit is refused again; a gateway refusal or
// failure leaves the wallet as it was; a refund whose answer was lost is found by its receipt and
// recorded once on the next run; the refund.processed webhook and a replayed payment.captured
// change nothing. Runs on PostgreSQL too when TEST_DATABASE_URL is set.

import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import { after, before, describe, test } from 'node:test';
import { type RazorpayEmulator, startRazorpayEmulator } from '../../emulators/src/razorpay/index.ts';
import { runAdmin } from '../src/admin/run.ts';
import { seedDemoCatalog } from '../src/core/catalog/demo-seed.ts';
import type { Browser } from './support/browser.ts';
import { freshIp, signedInBrowser } from './support/factories.ts';
import { createTestApp, type TestApp } from './support/harness.ts';

const DEPOSIT = '/api/v1/client/wallet/deposit/';
const REFUND_CALL = 'POST /v1/payments/:/refund';

interface Held {
  event: string;
  body: string;
  signature: string;
}

let t: TestApp;
let emu: RazorpayEmulator;
let mailbox: Server;
const held: Held[] = [];

before(async () => {
  // The emulator's webhooks are kept here and handed to the app when a test says.
  mailbox = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = Buffer.concat(chunks).toString('utf8');
      held.push({ event: JSON.parse(body).event, body, signature: String(req.headers['x-razorpay-signature']) });
      res.writeHead(200).end('ok');
    });
  });
  await new Promise<void>((resolve) => mailbox.listen(0, '127.0.0.1', resolve));
  const address = mailbox.address();
  const port = typeof address === 'object' && address ? address.port : 0;
  emu = await startRazorpayEmulator({ webhookUrl: `http://127.0.0.1:${port}/hook` });
  t = await createTestApp({
    env: {
      RAZORPAY_KEY_ID: emu.keyId,
      RAZORPAY_KEY_SECRET: emu.keySecret,
      RAZORPAY_WEBHOOK_SECRET: emu.webhookSecret,
      RAZORPAY_API_URL: emu.url,
    },
  });
  await seedDemoCatalog(t.deps.database.db);
  // Orders take their money and wait for a worker that never comes: enough to spend a balance.
  await t.deps.nodes.add({
    name: 'pve-mum1',
    kind: 'proxmox',
    locationCode: 'mum1',
    endpoint: 'http://127.0.0.1:9',
    credentials: { token_id: 'a@pve!b', token_secret: 'x' },
    capacity: 500,
  });
});
after(async () => {
  await t?.close();
  await emu?.stop();
  await new Promise<void>((resolve) => mailbox?.close(() => resolve()));
});

const admin = (...argv: string[]) => runAdmin(argv, async () => t.deps, 'staff:arjun');
async function adminJson(...argv: string[]) {
  const result = await admin(...argv, '--json');
  assert.equal(result.exitCode, 0, result.stderr);
  return JSON.parse(result.stdout);
}

/** A client whose online deposit of `amount` is paid and approved. */
async function paidDeposit(amount: string) {
  const { browser, account } = await signedInBrowser(t, freshIp());
  const started = await browser.post(DEPOSIT, { method: 'razorpay', amount }, { csrf: true });
  assert.equal(started.statusCode, 201, started.body);
  const { deposit, checkout } = started.json();
  const paid = emu.pay(checkout.order_id);
  const verified = await browser.post(
    DEPOSIT,
    {
      action: 'razorpay_verify',
      razorpay_order_id: paid.razorpay_order_id,
      razorpay_payment_id: paid.razorpay_payment_id,
      razorpay_signature: paid.razorpay_signature,
    },
    { csrf: true },
  );
  assert.equal(verified.json().deposit.status, 'approved', verified.body);
  return {
    browser,
    account,
    deposit: deposit as { id: number; public_id: string },
    paymentId: paid.razorpay_payment_id,
  };
}

async function ledger(browser: Browser) {
  const body = (await browser.get('/api/v1/client/wallet/')).json();
  return {
    balance: body.wallet.balance as string,
    rows: body.transactions as Array<{ kind: string; amount: string; note: string; reference: unknown }>,
  };
}

const refundCalls = () => emu.calls.get(REFUND_CALL) ?? 0;
const payment = (id: string) => emu.state.payments.get(id);

function deliver(h: Held) {
  return t.inject({
    method: 'POST',
    url: '/api/v1/webhooks/razorpay',
    headers: { 'content-type': 'application/json', 'x-razorpay-signature': h.signature },
    payload: h.body,
  });
}

/** The events raised about a payment so far, oldest first. */
async function eventsOf(paymentId: string): Promise<Held[]> {
  await emu.webhooksIdle();
  return held.filter((h) => JSON.parse(h.body).payload?.payment?.entity?.id === paymentId);
}

describe('deposits refund', () => {
  test('the whole deposit: refunded at the gateway, a withdrawal row, recorded on the deposit; webhooks change nothing', async () => {
    const { browser, deposit, paymentId } = await paidDeposit('500');
    const out = await adminJson('deposits', 'refund', String(deposit.id), '--reason', 'Customer asked to close');
    assert.equal(out.balance, '0.00');
    assert.match(out.gateway_refund.id, /^rfnd_[A-Za-z0-9]{14}$/);
    assert.equal(out.gateway_refund.amount, '500.00');
    assert.deepEqual(
      { ...out.refund, at: undefined },
      {
        id: out.gateway_refund.id,
        amount: '500.00',
        reason: 'Customer asked to close',
        by: 'staff:arjun',
        at: undefined,
      },
    );
    assert.equal(payment(paymentId)?.status, 'refunded');
    assert.equal(payment(paymentId)?.amount_refunded, 50000);
    const refund = emu.state.refunds.get(out.gateway_refund.id);
    assert.equal(refund?.receipt, deposit.public_id);

    const { balance, rows } = await ledger(browser);
    assert.equal(balance, '0.00');
    assert.equal(rows[0]?.kind, 'withdrawal');
    assert.equal(rows[0]?.amount, '-500.00');
    assert.deepEqual(rows[0]?.reference, { type: 'deposit', id: deposit.id });
    assert.match(rows[0]?.note ?? '', /Customer asked to close \(staff:arjun\)/);
    const filtered = (await browser.get('/api/v1/client/wallet/?kind=withdrawal')).json();
    assert.equal(filtered.transactions.length, 1);
    const told = (await browser.get('/api/v1/client/notifications/')).json().notifications;
    assert.ok(told.some((x: { kind: string }) => x.kind === 'deposit_refunded'));
    const shown = await adminJson('deposits', 'show', String(deposit.id));
    assert.equal(shown.refund.id, out.gateway_refund.id);

    // refund.processed, and the capture's events again, as Razorpay may deliver them late or twice.
    const events = await eventsOf(paymentId);
    assert.ok(events.some((e) => e.event === 'refund.processed'));
    for (const e of [...events, ...events]) {
      const res = await deliver(e);
      assert.equal(res.statusCode, 200, res.body);
      if (e.event === 'refund.processed') assert.equal(res.json().handled, 'refund_recorded');
    }
    assert.deepEqual(await ledger(browser), { balance, rows }, 'not a paisa moved');
  });

  test('a second refund of the same deposit is refused, and the gateway is not asked', async () => {
    const { browser, deposit } = await paidDeposit('300');
    await adminJson('deposits', 'refund', String(deposit.id), '--amount', '100', '--reason', 'Part back');
    const calls = refundCalls();
    const again = await admin('deposits', 'refund', String(deposit.id), '--amount', '100', '--reason', 'More');
    assert.equal(again.exitCode, 1);
    assert.match(again.stderr, /refunded already: ₹100\.00/);
    assert.equal(refundCalls(), calls);
    assert.equal((await ledger(browser)).balance, '200.00');
  });

  test('more than the balance is refused (never negative) before the gateway is asked; what the balance covers works', async () => {
    const { browser, deposit, paymentId } = await paidDeposit('1000');
    const plan = await t.deps.database.db
      .selectFrom('plans')
      .select('id')
      .where('label', '=', 'vps-2c-4g')
      .executeTakeFirstOrThrow();
    const placed = await browser.post(
      '/api/v1/client/orders/',
      { plan_id: plan.id, config: { server_name: 'refund-spend', region: 'mum1' }, idempotency_key: 'refund-spend' },
      { csrf: true },
    );
    assert.equal(placed.statusCode, 201, placed.body);
    assert.equal((await ledger(browser)).balance, '201.00');
    const calls = refundCalls();
    const refused = await admin('deposits', 'refund', String(deposit.id), '--reason', 'Full refund');
    assert.equal(refused.exitCode, 1);
    assert.match(refused.stderr, /holds ₹201\.00, less than the ₹1000\.00 to refund/);
    assert.match(refused.stderr, /never negative/);
    assert.equal(refundCalls(), calls, 'the gateway was not asked');
    assert.equal(payment(paymentId)?.amount_refunded, 0);
    const over = await admin('deposits', 'refund', String(deposit.id), '--amount', '1000.01', '--reason', 'x-x-x');
    assert.equal(over.exitCode, 1);
    assert.match(over.stderr, /at most 1000\.00/);

    const out = await adminJson('deposits', 'refund', String(deposit.id), '--amount', '201', '--reason', 'The rest');
    assert.equal(out.balance, '0.00');
    assert.equal(payment(paymentId)?.amount_refunded, 20100);
    assert.equal(payment(paymentId)?.refund_status, 'partial');
  });

  test('the gateway refusing (more than it captured: 400) or failing (5xx) leaves the wallet as it was', async () => {
    const { browser, deposit, paymentId } = await paidDeposit('400');
    const before = await ledger(browser);
    // Someone refunded ₹150 from Razorpay's dashboard: ₹250 is left to refund at the gateway.
    const auth = `Basic ${Buffer.from(`${emu.keyId}:${emu.keySecret}`).toString('base64')}`;
    const outside = await fetch(`${emu.url}/v1/payments/${paymentId}/refund`, {
      method: 'POST',
      headers: { authorization: auth, 'content-type': 'application/json' },
      body: JSON.stringify({ amount: 15000 }),
    });
    assert.equal(outside.status, 200);
    const refused = await admin('deposits', 'refund', String(deposit.id), '--reason', 'Full refund');
    assert.equal(refused.exitCode, 1);
    assert.match(
      refused.stderr,
      /Razorpay refused the refund: The refund amount provided is greater than amount captured/,
    );
    assert.deepEqual(await ledger(browser), before);

    await emu.setFaults({ errorNext: 1 });
    const down = await admin('deposits', 'refund', String(deposit.id), '--amount', '100', '--reason', 'Partial');
    assert.equal(down.exitCode, 1);
    assert.match(down.stderr, /could not be reached/);
    assert.deepEqual(await ledger(browser), before);
    const row = await t.deps.database.db
      .selectFrom('deposits')
      .selectAll()
      .where('id', '=', deposit.id)
      .executeTakeFirstOrThrow();
    assert.equal(row.refund_gateway_id, null);
    assert.equal(payment(paymentId)?.amount_refunded, 15000, 'only the dashboard refund');

    // The dashboard refund's webhook: logged for staff, never debited.
    const processed = (await eventsOf(paymentId)).filter((e) => e.event === 'refund.processed');
    assert.equal(processed.length, 1);
    const res = await deliver(processed[0] as Held);
    assert.equal(res.json().handled, 'refund_unrecorded');
    assert.deepEqual(await ledger(browser), before);
  });

  test('a refund whose answer was lost is found by its receipt on the next run and recorded once', async () => {
    const { browser, deposit, paymentId } = await paidDeposit('250');
    await emu.setFaults({ loseNext: REFUND_CALL });
    const lost = await admin('deposits', 'refund', String(deposit.id), '--reason', 'Duplicate payment');
    assert.equal(lost.exitCode, 1);
    assert.match(lost.stderr, /run the refund again/i);
    assert.equal((await ledger(browser)).balance, '250.00', 'nothing recorded yet');
    assert.equal(payment(paymentId)?.amount_refunded, 25000, 'the gateway did refund');
    const calls = refundCalls();
    const again = await adminJson('deposits', 'refund', String(deposit.id), '--reason', 'Duplicate payment');
    assert.equal(refundCalls(), calls, 'no second refund was asked for');
    assert.equal(again.balance, '0.00');
    assert.equal(emu.state.refundsOf(paymentId).length, 1);
    assert.equal(again.gateway_refund.id, emu.state.refundsOf(paymentId)[0]?.id);
  });

  test('only an approved online deposit is refunded; a bad id or amount is refused', async () => {
    const { browser } = await signedInBrowser(t, freshIp());
    const started = await browser.post(DEPOSIT, { method: 'razorpay', amount: '90' }, { csrf: true });
    const pending = started.json().deposit;
    const notPaid = await admin('deposits', 'refund', String(pending.id), '--reason', 'Not paid');
    assert.equal(notPaid.exitCode, 1);
    assert.match(notPaid.stderr, /is pending: only an approved/);
    assert.equal((await admin('deposits', 'refund', '999999', '--reason', 'Nothing')).exitCode, 1);
    assert.equal((await admin('deposits', 'refund', String(pending.id))).exitCode, 2, '--reason is required');
    const { deposit } = await paidDeposit('90');
    const tiny = await admin('deposits', 'refund', String(deposit.id), '--amount', '0.50', '--reason', 'Tiny');
    assert.equal(tiny.exitCode, 1);
    assert.match(tiny.stderr, /at least 1\.00/);
  });
});

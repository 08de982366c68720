// Credit notes (issue 35, CONTRACT §12): a provisioning that fails for good refunds the order
// through a credit note against its invoice (the refund row references the note); staff credit an
// invoice in part and in full from the CLI (`invoices credit`), never more than is left; the notes
// run in their own gapless series HPC/<fy>/000001…, apart from the invoices'; both surfaces show
// them (kind, original_number, reason); and the proportional tax split adds up to the paisa over
// random amounts. Through the HTTP surfaces and the staff CLI, against the Proxmox emulator.
// Runs on PostgreSQL too when TEST_DATABASE_URL is set.

import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { runAdmin } from '../src/admin/run.ts';
import { creditSplit, type Heads, NO_HEADS } from '../src/core/billing/credit-notes.ts';
import { financialYear, gstinCheckCharacter, taxSplit } from '../src/core/billing/gst.ts';
import type { Browser } from './support/browser.ts';
import { freshIp, signedInBrowser } from './support/factories.ts';
import { apiClient } from './support/rest.ts';
import { createUpstreamApp, type UpstreamApp, waitFor } from './support/upstreams.ts';

let u: UpstreamApp;
before(async () => {
  u = await createUpstreamApp({ retryLimit: 2 });
});
after(() => u.close());

const INVOICES = '/api/v1/client/invoices/';
const admin = (...argv: string[]) => runAdmin(argv, async () => u.t.deps, 'staff:meera');
async function adminJson(...argv: string[]) {
  const result = await admin(...argv, '--json');
  assert.equal(result.exitCode, 0, result.stderr);
  return JSON.parse(result.stdout);
}

let n = 0;
async function customer(rupees = '1000') {
  const c = await signedInBrowser(u.t, freshIp());
  await u.t.deps.wallet.credit(c.account.id, rupees, 'test float');
  return c;
}

async function order(browser: Browser, label = 'vps-1c-1g', region = 'mum1') {
  n++;
  const plan = await u.t.deps.database.db
    .selectFrom('plans')
    .select('id')
    .where('label', '=', label)
    .executeTakeFirstOrThrow();
  const res = await browser.post(
    '/api/v1/client/orders/',
    {
      plan_id: plan.id,
      config: { hostname: `cn${n}.example.in`, os: 'debian-12', region },
      idempotency_key: `cn-${n}-${Date.now()}`,
    },
    { csrf: true },
  );
  assert.equal(res.statusCode, 201, res.body);
  return res.json() as { service: { id: number }; order: { id: number } };
}

type Doc = Record<string, unknown> & { id: number; number: string; kind: string; total: string };
async function documents(browser: Browser): Promise<Doc[]> {
  const res = await browser.get(INVOICES);
  assert.equal(res.statusCode, 200, res.body);
  return res.json().invoices;
}
async function detail(browser: Browser, id: number) {
  const res = await browser.get(`${INVOICES}?id=${id}`);
  assert.equal(res.statusCode, 200, res.body);
  return res.json().invoice;
}
const invoiceOf = async (browser: Browser) => (await documents(browser)).find((d) => d.kind === 'invoice') as Doc;

const paise = (rupees: string) => BigInt(rupees.replace('.', ''));
/** taxable + cgst + sgst + igst of a document as the API shows it, in paise. */
const headsSum = (d: { taxable_value: string; tax: { cgst: string; sgst: string; igst: string } }) =>
  paise(d.taxable_value) + paise(d.tax.cgst) + paise(d.tax.sgst) + paise(d.tax.igst);

async function wallet(browser: Browser) {
  return (await browser.get('/api/v1/client/wallet/')).json();
}

const FY = financialYear(new Date());

describe('a failed provisioning is refunded through a credit note', () => {
  test('the note credits the whole invoice, names it, and the refund row references the note', async () => {
    const { browser } = await customer('1000');
    await u.pve.setFaults({ errorRate: 1 });
    const placed = await order(browser);
    const failed = await waitFor('the service to fail', async () => {
      const s = (await browser.get(`/api/v1/client/services/?id=${placed.service.id}`)).json().service;
      return s.status === 'failed' ? s : null;
    });
    await u.pve.setFaults({ errorRate: 0 });
    assert.equal(failed.status, 'failed');

    const docs = await documents(browser);
    assert.deepEqual(
      docs.map((d) => d.kind),
      ['credit_note', 'invoice'],
      'the list shows both kinds, newest first',
    );
    const [note, invoice] = docs as [Doc, Doc];
    assert.match(note.number, new RegExp(`^HPC/${FY}/\\d{6}$`));
    assert.equal(note.original_number, invoice.number);
    assert.equal(note.reason, 'Provisioning failed');
    assert.equal(invoice.original_number, null);
    assert.equal(invoice.reason, null);
    assert.equal(note.total, '299.00');
    const full = await detail(browser, note.id);
    assert.equal(full.original_invoice_id, invoice.id);
    assert.equal(full.original_issued_at, invoice.issued_at);
    assert.equal(full.order_id, placed.order.id);
    assert.deepEqual(full.tax, invoice.tax, 'the whole invoice: the same heads');
    assert.equal(full.taxable_value, invoice.taxable_value);
    assert.equal(headsSum(full), 29900n);
    assert.deepEqual(full.buyer, (await detail(browser, invoice.id)).buyer, 'the buyer copied from the invoice');
    assert.match(full.lines[0].description, new RegExp(`invoice ${invoice.number.replaceAll('/', '\\/')}`));

    const w = await wallet(browser);
    assert.equal(w.wallet.balance, '1000.00');
    const refund = w.transactions[0];
    assert.equal(refund.kind, 'refund');
    assert.equal(refund.amount, '299.00');
    assert.deepEqual(refund.reference, { type: 'credit_note', id: note.id });
    const ord = (await browser.get(`/api/v1/client/orders/?id=${placed.order.id}`)).json().order;
    assert.equal(ord.status, 'refunded');
  });
});

describe('staff credit an invoice from the CLI', () => {
  test('in part, then the rest: the notes add up to the invoice head by head, the money back each time', async () => {
    const { browser, account } = await customer('1000');
    await order(browser, 'vps-2c-4g');
    const invoice = await invoiceOf(browser);
    assert.equal(invoice.total, '799.00');

    const part = await adminJson('invoices', 'credit', invoice.number, '--amount', '100.01', '--reason', 'Goodwill');
    assert.equal(part.credit_note.total, '100.01');
    assert.equal(part.credit_note.kind, 'credit_note');
    assert.equal(part.credit_note.original_number, invoice.number);
    assert.equal(part.balance, '301.01', '1000 - 799 + 100.01');
    const rest = await adminJson('invoices', 'credit', String(invoice.id), '--reason', 'Cancelled by request');
    assert.equal(rest.credit_note.total, '698.99', 'without --amount: all that is left');
    assert.equal(rest.balance, '1000.00');

    const notes = (await documents(browser)).filter((d) => d.kind === 'credit_note');
    assert.equal(notes.length, 2);
    for (const note of notes) {
      const d = await detail(browser, note.id);
      assert.equal(headsSum(d), paise(d.total), `${d.number}: taxable + tax = the credited total`);
      assert.equal(d.original_number, invoice.number);
    }
    const sum = (pick: (d: Doc) => string) => notes.reduce((a, d) => a + paise(pick(d)), 0n);
    const inv = invoice as Doc & { taxable_value: string; tax: Record<string, string> };
    assert.equal(
      sum((d) => d.taxable_value as string),
      paise(inv.taxable_value),
    );
    for (const head of ['cgst', 'sgst', 'igst'] as const) {
      assert.equal(
        sum((d) => (d.tax as Record<string, string>)[head] as string),
        paise(inv.tax[head] as string),
        head,
      );
    }
    const w = await wallet(browser);
    const refunds = w.transactions.filter((x: { kind: string }) => x.kind === 'refund');
    assert.deepEqual(
      refunds.map((x: { amount: string; reference: { type: string } }) => [x.amount, x.reference.type]),
      [
        ['698.99', 'credit_note'],
        ['100.01', 'credit_note'],
      ],
    );
    assert.match(refunds[1].note, /Goodwill \(staff:meera\)/);
    const told = (await browser.get('/api/v1/client/notifications/')).json().notifications;
    assert.ok(told.some((x: { kind: string; body: string }) => x.kind === 'credit_note' && /Goodwill/.test(x.body)));

    const again = await admin('invoices', 'credit', invoice.number, '--reason', 'once more');
    assert.equal(again.exitCode, 1);
    assert.match(again.stderr, /fully credited already/);
    assert.equal((await wallet(browser)).wallet.balance, '1000.00');
    assert.ok(account);
  });

  test('more than is left is refused and changes nothing; so is crediting a credit note', async () => {
    const { browser } = await customer('1000');
    await order(browser, 'vps-1c-1g');
    const invoice = await invoiceOf(browser);
    const over = await admin('invoices', 'credit', invoice.number, '--amount', '299.01', '--reason', 'Too much');
    assert.equal(over.exitCode, 1);
    assert.match(over.stderr, /at most 299\.00/);
    await adminJson('invoices', 'credit', invoice.number, '--amount', '200', '--reason', 'Downtime');
    const still = await admin('invoices', 'credit', invoice.number, '--amount', '99.01', '--reason', 'Too much');
    assert.equal(still.exitCode, 1);
    assert.match(still.stderr, /at most 99\.00/);
    const note = (await documents(browser)).find((d) => d.kind === 'credit_note') as Doc;
    const onNote = await admin('invoices', 'credit', note.number, '--reason', 'Nested');
    assert.equal(onNote.exitCode, 1);
    assert.match(onNote.stderr, /is a credit note/);
    assert.equal((await admin('invoices', 'credit', invoice.number, '--amount', '5')).exitCode, 2, '--reason required');
    assert.equal((await admin('invoices', 'credit', 'HP/0000/999999', '--reason', 'nothing')).exitCode, 1);
    assert.equal((await documents(browser)).filter((d) => d.kind === 'credit_note').length, 1);
    assert.equal((await wallet(browser)).wallet.balance, '901.00', '1000 - 299 + 200');
  });

  test('an inter-state B2B invoice: the note is all IGST, B2B, with the buyer and place of supply copied', async () => {
    const { browser, account } = await customer('2000');
    const first14 = '29AAGCB7383J1Z';
    const profile = await browser.post(
      '/api/v1/client/account/billing-profile/',
      {
        legal_name: 'Kaveri Systems Pvt Ltd',
        address_line1: '4, Residency Road',
        city: 'Bengaluru',
        state_code: '29',
        pincode: '560025',
        gstin: first14 + gstinCheckCharacter(first14),
      },
      { csrf: true },
    );
    assert.equal(profile.statusCode, 200, profile.body);
    await order(browser, 'vps-4c-8g', 'blr1');
    const invoice = await detail(browser, (await invoiceOf(browser)).id);
    const out = await adminJson('invoices', 'credit', invoice.number, '--amount', '500', '--reason', 'SLA credit');
    const note = await detail(browser, out.credit_note.id);
    assert.equal(note.b2b, true);
    assert.equal(note.place_of_supply, '29');
    assert.equal(note.tax.cgst, '0.00');
    assert.equal(note.tax.sgst, '0.00');
    assert.equal(paise(note.taxable_value) + paise(note.tax.igst), 50000n);
    assert.equal(note.taxable_value, '423.73', '500 / 1.18, to the paisa');
    assert.deepEqual(note.buyer, invoice.buyer);
    assert.deepEqual(note.seller, invoice.seller);
    assert.equal(note.lines[0].sac, '998315');

    // The token surface: the order carries its credit notes.
    const api = await apiClient(u.t, ['billing.read'], '0', account.id);
    const listed = (await api.call('GET', '/api/v1/invoices')).json().invoices;
    const row = listed.find((o: { number: string | null }) => o.number === invoice.number);
    assert.equal(row.credit_notes.length, 1);
    assert.deepEqual(
      { ...row.credit_notes[0], issued_at: undefined },
      {
        number: note.number,
        kind: 'credit_note',
        original_number: invoice.number,
        reason: 'SLA credit',
        issued_at: undefined,
        taxable_value: note.taxable_value,
        tax: note.tax,
        total: '500.00',
      },
    );
  });
});

describe('numbering', () => {
  test('credit notes run HPC/<fy>/000001… with no gap, apart from the invoices HP/<fy>/000001…', async () => {
    const rows = await u.t.deps.database.db
      .selectFrom('invoices')
      .select(['number', 'kind', 'serial', 'fy'])
      .orderBy('id')
      .execute();
    const serials = (kind: string) =>
      rows
        .filter((r) => r.kind === kind)
        .map((r) => r.serial)
        .sort((a, b) => a - b);
    const notes = serials('credit_note');
    const invoices = serials('invoice');
    assert.ok(notes.length >= 5 && invoices.length >= 4);
    assert.deepEqual(
      notes,
      notes.map((_, i) => i + 1),
      'the refused credits took no number',
    );
    assert.deepEqual(
      invoices,
      invoices.map((_, i) => i + 1),
    );
    for (const r of rows) {
      const series = r.kind === 'invoice' ? 'HP' : 'HPC';
      assert.equal(r.number, `${series}/${r.fy}/${String(r.serial).padStart(6, '0')}`);
      assert.ok(r.number.length <= 16);
    }
  });
});

/** A small deterministic generator (mulberry32), so a failure can be replayed. */
function random(seed: number): () => number {
  let a = seed;
  return () => {
    a = (a + 0x6d2b79f5) | 0;
    let x = Math.imul(a ^ (a >>> 15), 1 | a);
    x = (x + Math.imul(x ^ (x >>> 7), 61 | x)) ^ x;
    return ((x ^ (x >>> 14)) >>> 0) / 4294967296;
  };
}

describe('the proportional split (property)', () => {
  test('over random invoices and random partial credits: exact sums, no negative head, in proportion', () => {
    const next = random(20260615);
    const plus = (a: Heads, b: Heads): Heads => ({
      taxable: a.taxable + b.taxable,
      cgst: a.cgst + b.cgst,
      sgst: a.sgst + b.sgst,
      igst: a.igst + b.igst,
      total: a.total + b.total,
    });
    for (let round = 0; round < 400; round++) {
      const price = 1n + BigInt(Math.floor(next() * (round % 3 === 0 ? 200 : 20_000_000)));
      const intra = next() < 0.5;
      const split = taxSplit({
        amountPaise: price,
        pricesIncludeGst: true,
        sellerState: '27',
        placeOfSupply: intra ? '27' : '29',
      });
      const original: Heads = {
        taxable: split.taxablePaise,
        cgst: split.cgstPaise,
        sgst: split.sgstPaise,
        igst: split.igstPaise,
        total: split.totalPaise,
      };
      let credited = NO_HEADS;
      while (credited.total < original.total) {
        const left = original.total - credited.total;
        const amount = next() < 0.3 ? left : 1n + BigInt(Math.floor(next() * Number(left)));
        const note = creditSplit(original, credited, amount);
        const context = `price ${price}, credited ${credited.total}, amount ${amount}`;
        assert.equal(note.total, amount, context);
        assert.equal(note.taxable + note.cgst + note.sgst + note.igst, amount, context);
        for (const head of ['taxable', 'cgst', 'sgst', 'igst'] as const)
          assert.ok(note[head] >= 0n, `${head} ${context}`);
        if (!intra) assert.equal(note.cgst + note.sgst, 0n, context);
        else assert.equal(note.igst, 0n, context);
        // Within a paisa of its share: |taxable × total − amount × original taxable| ≤ total.
        const drift = note.taxable * original.total - amount * original.taxable;
        assert.ok(drift <= original.total && -drift <= original.total, `taxable out of proportion: ${context}`);
        credited = plus(credited, note);
      }
      assert.deepEqual(credited, original, `price ${price}: fully credited, the notes add up to the invoice`);
      assert.throws(() => creditSplit(original, credited, 1n), RangeError);
    }
  });
});

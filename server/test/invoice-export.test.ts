// The month's GSTR-1 export (issue 35, CONTRACT §12): `invoices export --month YYYY-MM [--format
// gstr1-csv|json] [--out FILE]` over a month of real orders — B2B intra- and inter-state, B2C
// within the state, B2C to another state (small: B2C others; above ₹1,00,000: B2C large), an
// intra-state B2C sale above ₹1,00,000 (still B2C others), credit notes to a registered buyer
// (CDNR), against a B2C large invoice (CDNUR) and against a B2C-others invoice (netted there) —
// and the next month's documents kept out. Totals add up, the HSN/SAC summary nets the credit
// notes, and the reconciliation with the ledger holds; a charge without an invoice breaks it.
// Runs on PostgreSQL too when TEST_DATABASE_URL is set.

import assert from 'node:assert/strict';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { runAdmin } from '../src/admin/run.ts';
import { gstinCheckCharacter } from '../src/core/billing/gst.ts';
import { GSTR1_COLUMNS } from '../src/core/billing/gstr1-csv.ts';
import { seedDemoCatalog } from '../src/core/catalog/demo-seed.ts';
import { post } from '../src/core/wallet/ledger.ts';
import type { Browser } from './support/browser.ts';
import { freshIp, signedInBrowser } from './support/factories.ts';
import { createTestApp, ManualClock, type TestApp } from './support/harness.ts';

// 15 June 2026, 11:30 IST, whatever day the suite runs on.
const clock = new ManualClock();
clock.offsetMs = Date.parse('2026-06-15T06:00:00Z') - Date.now();

let t: TestApp;
let dir: string;
before(async () => {
  t = await createTestApp({ overrides: { clock: clock.now } });
  await seedDemoCatalog(t.deps.database.db);
  await t.deps.nodes.add({
    name: 'pve-mum1',
    kind: 'proxmox',
    locationCode: 'mum1',
    endpoint: 'http://127.0.0.1:9',
    credentials: { token_id: 'a@pve!b', token_secret: 'x' },
    capacity: 500,
  });
  dir = await mkdtemp(join(tmpdir(), 'hp-export-'));
});
after(async () => {
  await t.close();
  await rm(dir, { recursive: true, force: true });
});

const admin = (...argv: string[]) => runAdmin(argv, async () => t.deps, 'staff:kavya');
async function adminJson(...argv: string[]) {
  const result = await admin(...argv, '--json');
  assert.equal(result.exitCode, 0, result.stderr);
  return JSON.parse(result.stdout);
}

const gstin = (state: string) => {
  const first14 = `${state}AAPFU0939F1Z`;
  return first14 + gstinCheckCharacter(first14);
};
const PINS: Record<string, string> = { '27': '411001', '29': '560001', '07': '110001' };

let n = 0;
/** A funded client, with a billing profile of `state` (with a GSTIN when `registered`) or none. */
async function customer(state: string | null, registered = false, name = 'Asha Traders, LLP') {
  const c = await signedInBrowser(t, freshIp());
  await t.deps.wallet.credit(c.account.id, '400000', 'test float');
  if (state !== null) {
    const res = await c.browser.post(
      '/api/v1/client/account/billing-profile/',
      {
        legal_name: name,
        address_line1: '12, MG Road',
        city: 'Somewhere',
        state_code: state,
        pincode: PINS[state],
        gstin: registered ? gstin(state) : null,
      },
      { csrf: true },
    );
    assert.equal(res.statusCode, 200, res.body);
  }
  return c;
}

type Doc = {
  id: number;
  number: string;
  issued_at: string;
  taxable_value: string;
  tax: { cgst: string; sgst: string; igst: string };
  total: string;
};

async function buy(browser: Browser, label: string): Promise<Doc> {
  n++;
  const plan = await t.deps.database.db
    .selectFrom('plans')
    .select('id')
    .where('label', '=', label)
    .executeTakeFirstOrThrow();
  const res = await browser.post(
    '/api/v1/client/orders/',
    { plan_id: plan.id, config: { server_name: `exp${n}`, region: 'mum1' }, idempotency_key: `exp-${n}` },
    { csrf: true },
  );
  assert.equal(res.statusCode, 201, res.body);
  const list = (await browser.get('/api/v1/client/invoices/')).json().invoices;
  return list.find((i: { order_id: number }) => i.order_id === res.json().order.id);
}

async function credit(invoice: Doc, reason: string, amount?: string): Promise<Doc> {
  const out = await adminJson(
    'invoices',
    'credit',
    invoice.number,
    '--reason',
    reason,
    ...(amount ? ['--amount', amount] : []),
  );
  return { ...out.credit_note, tax: out.credit_note.tax };
}

const p = (rupees: string) => BigInt(Math.round(Number(rupees) * 100));
const r = (paise: bigint) =>
  `${paise < 0n ? '-' : ''}${(paise < 0n ? -paise : paise) / 100n}.${String((paise < 0n ? -paise : paise) % 100n).padStart(2, '0')}`;

let docs: Record<string, Doc> = {};

describe('invoices export', () => {
  test('a month of B2B, B2C within and across states, B2C large, and credit notes: every section', async () => {
    const big = await adminJson(
      ...['plans', 'add', 'vps-dedicated', '--name', 'Dedicated VPS', '--type', 'vps', '--price', '150000'],
      ...['--specs', '{"vcpu":32,"ram_mb":131072,"disk_gb":2000,"bandwidth_tb":20}', '--regions', 'mum1'],
    );
    assert.equal(big.price, '150000.00');
    const b2bIntra = await customer('27', true);
    const b2bInter = await customer('29', true, 'Kaveri Systems');
    const b2cHome = await customer(null);
    const b2cAway = await customer('29');
    const b2cLarge = await customer('07');
    const b2cHomeLarge = await customer('27');
    docs = {
      b2bIntra: await buy(b2bIntra.browser, 'vps-2c-4g'),
      b2bInter: await buy(b2bInter.browser, 'vps-2c-4g'),
      b2cHome: await buy(b2cHome.browser, 'vps-2c-4g'),
      b2cAway: await buy(b2cAway.browser, 'vps-2c-4g'),
      b2cLarge: await buy(b2cLarge.browser, 'vps-dedicated'),
      b2cHomeLarge: await buy(b2cHomeLarge.browser, 'vps-dedicated'),
    };
    docs.cdnr = await credit(docs.b2bIntra as Doc, 'Goodwill', '100');
    docs.cdnur = await credit(docs.b2cLarge as Doc, 'Cancelled within a day');
    docs.b2csNote = await credit(docs.b2cHome as Doc, 'Downtime', '99');

    const out = await adminJson('invoices', 'export', '--month', '2026-06');
    assert.equal(out.month, '2026-06');
    assert.deepEqual(out.period, {
      from: '2026-05-31T18:30:00.000+00:00',
      to: '2026-06-30T18:30:00.000+00:00',
      timezone: 'Asia/Kolkata',
    });
    assert.equal(out.b2cl_threshold, '100000.00');
    const d = docs as Record<string, Doc>;

    assert.deepEqual(out.b2b, [
      {
        gstin: gstin('27'),
        name: 'Asha Traders, LLP',
        number: d.b2bIntra?.number,
        date: '2026-06-15',
        value: '799.00',
        place_of_supply: '27-Maharashtra',
        rate: '18.00',
        taxable: '677.12',
        igst: '0.00',
        cgst: '60.94',
        sgst: '60.94',
      },
      {
        gstin: gstin('29'),
        name: 'Kaveri Systems',
        number: d.b2bInter?.number,
        date: '2026-06-15',
        value: '799.00',
        place_of_supply: '29-Karnataka',
        rate: '18.00',
        taxable: '677.12',
        igst: '121.88',
        cgst: '0.00',
        sgst: '0.00',
      },
    ]);
    assert.deepEqual(out.b2cl, [
      {
        number: d.b2cLarge?.number,
        date: '2026-06-15',
        value: '150000.00',
        place_of_supply: '07-Delhi',
        rate: '18.00',
        taxable: '127118.64',
        igst: '22881.36',
      },
    ]);
    // B2C others: within Maharashtra the small and the large sale, less the note; Karnataka's small one.
    const home = [d.b2cHome, d.b2cHomeLarge].map((x) => x as Doc);
    const note = d.b2csNote as Doc;
    const net = (pick: (x: Doc) => string) => r(home.reduce((a, x) => a + p(pick(x)), 0n) - p(pick(note)));
    assert.deepEqual(out.b2cs, [
      {
        place_of_supply: '27-Maharashtra',
        rate: '18.00',
        supply: 'intra-state',
        taxable: net((x) => x.taxable_value),
        igst: '0.00',
        cgst: net((x) => x.tax.cgst),
        sgst: net((x) => x.tax.sgst),
      },
      {
        place_of_supply: '29-Karnataka',
        rate: '18.00',
        supply: 'inter-state',
        taxable: '677.12',
        igst: '121.88',
        cgst: '0.00',
        sgst: '0.00',
      },
    ]);
    assert.equal(out.cdnr.length, 1);
    assert.deepEqual(out.cdnr[0], {
      gstin: gstin('27'),
      name: 'Asha Traders, LLP',
      number: d.cdnr?.number,
      date: '2026-06-15',
      note_type: 'C',
      original_number: d.b2bIntra?.number,
      original_date: '2026-06-15',
      place_of_supply: '27-Maharashtra',
      value: '100.00',
      rate: '18.00',
      taxable: d.cdnr?.taxable_value,
      igst: '0.00',
      cgst: d.cdnr?.tax.cgst,
      sgst: d.cdnr?.tax.sgst,
    });
    assert.equal(d.cdnr?.number, 'HPC/2627/000001', 'the first credit note of the year');
    assert.deepEqual(out.cdnur, [
      {
        ur_type: 'B2CL',
        number: d.cdnur?.number,
        date: '2026-06-15',
        note_type: 'C',
        original_number: d.b2cLarge?.number,
        original_date: '2026-06-15',
        place_of_supply: '07-Delhi',
        value: '150000.00',
        rate: '18.00',
        taxable: '127118.64',
        igst: '22881.36',
      },
    ]);

    // HSN/SAC: B2B two sales less one note (quantity kept: a partial credit); B2C four sales less a
    // full credit (quantity back) and a partial one.
    const hsn = Object.fromEntries(out.hsn.map((h: { supply: string }) => [h.supply, h]));
    assert.equal(out.hsn.length, 2);
    assert.equal(hsn.B2B.sac, '998315');
    assert.equal(hsn.B2B.quantity, 2);
    assert.equal(hsn.B2B.value, '1498.00');
    assert.equal(hsn.B2C.quantity, 3);
    assert.equal(hsn.B2C.value, r(p('799') * 2n + p('150000') * 2n - p('150000') - p('99')));
    for (const h of out.hsn) assert.equal(p(h.taxable) + p(h.igst) + p(h.cgst) + p(h.sgst), p(h.value), h.supply);

    assert.deepEqual(
      { count: out.totals.invoices.count, value: out.totals.invoices.value },
      { count: 6, value: '303196.00' },
    );
    assert.deepEqual(
      { count: out.totals.credit_notes.count, value: out.totals.credit_notes.value },
      { count: 3, value: '150199.00' },
    );
    assert.equal(out.totals.net.value, '152997.00');
    for (const k of ['taxable', 'igst', 'cgst', 'sgst', 'value'] as const) {
      assert.equal(p(out.totals.invoices[k]) - p(out.totals.credit_notes[k]), p(out.totals.net[k]), k);
    }
    assert.deepEqual(out.reconciliation, {
      invoices_total: '303196.00',
      credit_notes_total: '150199.00',
      documents_net: '152997.00',
      ledger_charges: '303196.00',
      ledger_credit_note_refunds: '150199.00',
      ledger_net: '152997.00',
      difference: '0.00',
      reconciles: true,
    });
  });

  test('the next month (IST) has its own documents: a July invoice and a July note against a June invoice', async () => {
    // 1 July 2026, 00:10 IST (still 30 June in UTC).
    clock.offsetMs = Date.parse('2026-06-30T18:40:00Z') - Date.now();
    const c = await customer(null);
    const july = await buy(c.browser, 'vps-1c-1g');
    const late = await credit(docs.b2bInter as Doc, 'Late SLA credit', '50');
    const june = await adminJson('invoices', 'export', '--month', '2026-06');
    assert.equal(june.totals.invoices.count, 6, 'July is not in June');
    assert.equal(june.reconciliation.reconciles, true);
    const out = await adminJson('invoices', 'export', '--month', '2026-07');
    assert.equal(out.totals.invoices.count, 1);
    assert.equal(out.b2cs[0].place_of_supply, '27-Maharashtra');
    assert.equal(out.cdnr.length, 1);
    assert.equal(out.cdnr[0].number, late.number);
    assert.equal(out.cdnr[0].date, '2026-07-01');
    assert.equal(out.cdnr[0].original_date, '2026-06-15');
    assert.equal(out.cdnr[0].igst, late.tax.igst);
    assert.equal(out.reconciliation.documents_net, r(p(july.total) - p('50')));
    assert.equal(out.reconciliation.reconciles, true);
    assert.deepEqual((await adminJson('invoices', 'export', '--month', '2026-05')).totals.invoices.count, 0);
  });

  test('gstr1-csv: every section in order, a header line each; --out writes the same document to a file', async () => {
    const res = await admin('invoices', 'export', '--month', '2026-06', '--format', 'gstr1-csv');
    assert.equal(res.exitCode, 0, res.stderr);
    const blocks = res.stdout.trimEnd().split('\n\n');
    const names = ['period', 'b2b', 'b2cl', 'b2cs', 'cdnr', 'cdnur', 'hsn', 'totals', 'reconciliation'] as const;
    assert.deepEqual(
      blocks.map((b) => b.split('\n')[0]),
      names.map((s) => `# ${s}`),
    );
    for (const [i, name] of names.entries()) {
      assert.equal(blocks[i]?.split('\n')[1], GSTR1_COLUMNS[name].join(','), name);
    }
    const rows = (name: (typeof names)[number]) => (blocks[names.indexOf(name)] as string).split('\n').slice(2);
    assert.equal(rows('b2b').length, 2);
    assert.match(rows('b2b')[0] as string, /^27AAPFU0939F1Z.,"Asha Traders, LLP",HP\/2627\/\d{6},2026-06-15,799\.00,/);
    assert.equal(rows('cdnur').length, 1);
    assert.match(rows('period')[0] as string, /^2026-06,/);
    assert.equal(rows('reconciliation')[0], '303196.00,150199.00,152997.00,303196.00,150199.00,152997.00,0.00,true');

    const file = join(dir, 'june.csv');
    const written = await adminJson('invoices', 'export', '--month', '2026-06', '--format', 'gstr1-csv', '--out', file);
    assert.equal(written.out, file);
    assert.equal(written.reconciles, true);
    assert.equal(await readFile(file, 'utf8'), res.stdout);
  });

  test('a charge without its invoice breaks the reconciliation; bad options are usage errors', async () => {
    const c = await customer(null);
    await t.deps.database.db.transaction().execute((trx) =>
      post(trx, c.account.id, {
        kind: 'order',
        amountPaise: -12345n,
        note: 'a charge that issued no invoice',
        at: new Date('2026-06-20T06:00:00Z'),
      }),
    );
    const out = await adminJson('invoices', 'export', '--month', '2026-06');
    assert.equal(out.reconciliation.ledger_charges, '303319.45');
    assert.equal(out.reconciliation.difference, '-123.45');
    assert.equal(out.reconciliation.reconciles, false);
    for (const bad of [['--month', '2026-13'], ['--month', 'June'], ['--month', '2026-06', '--format', 'xlsx'], []]) {
      assert.equal((await admin('invoices', 'export', ...bad)).exitCode, 2, bad.join(' '));
    }
  });
});

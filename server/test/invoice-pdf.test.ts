// Invoice PDFs (issue 35, CONTRACT §12): an order paid through the HTTP API, its invoice fetched as
// a PDF on the session surface (?id=&format=pdf) and the token surface (/api/v1/invoices/{id}/pdf,
// the list's pdf_url), and the PDF's text read back with a real PDF text extractor (unpdf, PDF.js):
// number, date, seller, buyer, SAC, tax heads and amounts, total in ₹, the total in words; the two
// surfaces answer the same bytes; another account's invoice is 404 on both; a registered buyer's
// GSTIN is printed; within the seller's state CGST + SGST, across states IGST; a credit note names
// its invoice; an IRN shows only when there is one. The staff CLI's `invoices show|pdf` too.

import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { extractText, getDocumentProxy } from 'unpdf';
import { writeOutputFiles } from '../src/admin/outputs.ts';
import { runAdmin } from '../src/admin/run.ts';
import { gstinCheckCharacter } from '../src/core/billing/gst.ts';
import { renderInvoicePdf } from '../src/core/billing/invoice-pdf.ts';
import { seedDemoCatalog } from '../src/core/catalog/demo-seed.ts';
import type { Browser } from './support/browser.ts';
import { freshIp, signedInBrowser } from './support/factories.ts';
import { createTestApp, ManualClock, type TestApp } from './support/harness.ts';
import { apiClient } from './support/rest.ts';

// 15 June 2026, 11:30 IST: financial year 2026-27, whatever day the suite runs on.
const clock = new ManualClock();
clock.offsetMs = Date.parse('2026-06-15T06:00:00Z') - Date.now();
const FY = '2627';
const gstin = (state: string, pan = 'AAPFU0939F') => {
  const first14 = `${state}${pan}1Z`;
  return first14 + gstinCheckCharacter(first14);
};
const SELLER = {
  name: 'Hostplane Cloud Private Limited',
  address: '4th Floor, Trade Centre, Bandra Kurla Complex, Mumbai 400051',
  gstin: gstin('27', 'AAGCH1234K'),
};

let t: TestApp;
let planId: number;
before(async () => {
  t = await createTestApp({
    overrides: { clock: clock.now },
    env: { SELLER_LEGAL_NAME: SELLER.name, SELLER_ADDRESS: SELLER.address, SELLER_GSTIN: SELLER.gstin },
  });
  await seedDemoCatalog(t.deps.database.db);
  await t.deps.nodes.add({
    name: 'pve-mum1',
    kind: 'proxmox',
    locationCode: 'mum1',
    endpoint: 'http://127.0.0.1:9',
    credentials: { token_id: 'a@pve!b', token_secret: 'x' },
    capacity: 500,
  });
  const plan = await t.deps.database.db
    .selectFrom('plans')
    .select('id')
    .where('label', '=', 'vps-2c-4g')
    .executeTakeFirstOrThrow();
  planId = plan.id;
});
after(() => t.close());

const INVOICES = '/api/v1/client/invoices/';
let n = 0;

/** The text of a PDF, pages joined, as a PDF reader extracts it; lines joined by one space (text wraps). */
async function pdfText(bytes: Buffer | Uint8Array): Promise<string> {
  const pdf = await getDocumentProxy(new Uint8Array(bytes));
  const { text } = await extractText(pdf, { mergePages: true });
  return text.replace(/\s+/g, ' ');
}

/** A signed-in customer with money, optionally a billing profile, who ordered ₹799 of VPS: their invoice. */
async function customerWithInvoice(profile?: { state: string; withGstin: boolean }) {
  const signed = await signedInBrowser(t, freshIp());
  await t.deps.wallet.credit(signed.account.id, '1000', 'test float');
  if (profile) {
    const res = await signed.browser.post(
      '/api/v1/client/account/billing-profile/',
      {
        legal_name: 'Asha Traders LLP',
        address_line1: '12, MG Road',
        city: profile.state === '27' ? 'Pune' : 'Bengaluru',
        state_code: profile.state,
        pincode: profile.state === '27' ? '411001' : '560001',
        gstin: profile.withGstin ? gstin(profile.state) : null,
      },
      { csrf: true },
    );
    assert.equal(res.statusCode, 200, res.body);
  }
  const order = await signed.browser.post(
    '/api/v1/client/orders/',
    { plan_id: planId, config: { server_name: `pdf${++n}`, region: 'mum1' }, idempotency_key: `pdf-key-${n}` },
    { csrf: true },
  );
  assert.equal(order.statusCode, 201, order.body);
  const list = await signed.browser.get(INVOICES);
  assert.equal(list.statusCode, 200, list.body);
  const invoice = list.json().invoices[0] as { id: number; number: string };
  return { ...signed, invoice };
}

async function sessionPdf(browser: Browser, id: number) {
  const res = await browser.get(`${INVOICES}?id=${id}&format=pdf`);
  assert.equal(res.statusCode, 200, res.body);
  return res;
}

describe('the PDF of a tax invoice', () => {
  test('session and token surfaces answer the same PDF, with everything rule 46 asks for', async () => {
    const { browser, account, invoice } = await customerWithInvoice();
    assert.match(invoice.number, new RegExp(`^HP/${FY}/\\d{6}$`));
    const res = await sessionPdf(browser, invoice.id);
    assert.equal(res.headers['content-type'], 'application/pdf');
    const fileName = `${invoice.number.replaceAll('/', '-')}.pdf`;
    assert.equal(res.headers['content-disposition'], `attachment; filename="${fileName}"`);
    assert.equal(res.headers['cache-control'], 'private, no-store');
    assert.equal(res.rawPayload.subarray(0, 5).toString('latin1'), '%PDF-');

    const text = await pdfText(res.rawPayload);
    for (const expected of [
      'Tax invoice',
      invoice.number,
      '15 Jun 2026', // the issue date in IST
      SELLER.name,
      SELLER.address,
      SELLER.gstin,
      account.name, // no billing profile: the account's own name and e-mail
      account.email,
      'Maharashtra (27)', // place of supply: the seller's state when the buyer has none
      '998315',
      'CGST',
      'SGST',
      '9%',
      '₹60.94',
      '₹677.12',
      '₹121.88',
      '₹799.00',
      'Rupees Seven Hundred Ninety-Nine Only',
      'This is a computer-generated invoice',
    ]) {
      assert.ok(text.includes(expected), `the PDF says ${JSON.stringify(expected)}:\n${text}`);
    }
    assert.doesNotMatch(text, /IGST|IRN|Against invoice/);

    // The token surface: pdf_url in the list, answering the very same bytes.
    const api = await apiClient(t, ['billing.read'], '0', account.id);
    const listed = await api.call('GET', '/api/v1/invoices');
    assert.equal(listed.statusCode, 200, listed.body);
    const row = listed.json().invoices.find((o: { number: string | null }) => o.number === invoice.number);
    assert.equal(row.pdf_url, `${t.config.publicUrl}/api/v1/invoices/${invoice.id}/pdf`);
    const viaToken = await api.call('GET', new URL(row.pdf_url).pathname);
    assert.equal(viaToken.statusCode, 200, viaToken.body);
    assert.equal(viaToken.headers['content-type'], 'application/pdf');
    assert.equal(viaToken.headers['content-disposition'], `attachment; filename="${fileName}"`);
    assert.deepEqual(viaToken.rawPayload, res.rawPayload, 'the same PDF on both surfaces');

    // Drawn afresh (not the kept copy), it is still the same bytes: no clock or random tag in the file.
    const document = await t.deps.invoiceDocuments.ofAccount(account.id, invoice.id);
    assert.deepEqual(await renderInvoicePdf(document), res.rawPayload);
  });

  test("another account's invoice is 404 on both surfaces, like a missing one", async () => {
    const owner = await customerWithInvoice();
    const stranger = await signedInBrowser(t, freshIp());
    const session = await stranger.browser.get(`${INVOICES}?id=${owner.invoice.id}&format=pdf`);
    assert.equal(session.statusCode, 404, session.body);
    assert.equal(session.json().success, false);
    assert.equal(session.json().code, 'not_owner');
    const missing = await stranger.browser.get(`${INVOICES}?id=999999&format=pdf`);
    assert.equal(missing.statusCode, 404);
    assert.equal(missing.json().code, 'not_owner');

    const api = await apiClient(t, ['billing.read'], '0', stranger.account.id);
    const token = await api.call('GET', `/api/v1/invoices/${owner.invoice.id}/pdf`);
    assert.equal(token.statusCode, 404, token.body);
    assert.equal(token.json().ok, false);
    assert.equal(token.json().error, 'not_owner');
    assert.doesNotMatch(token.body, /Asha|HP\//);
    const noScope = await (await apiClient(t, ['read'], '0', owner.account.id)).call(
      'GET',
      `/api/v1/invoices/${owner.invoice.id}/pdf`,
    );
    assert.equal(noScope.statusCode, 403, noScope.body);
    assert.equal(noScope.json().error, 'insufficient_scope');
  });

  test('a bad format, or format=pdf without an id, is 422 in the session envelope', async () => {
    const { browser, invoice } = await customerWithInvoice();
    const bad = await browser.get(`${INVOICES}?id=${invoice.id}&format=docx`);
    assert.equal(bad.statusCode, 422, bad.body);
    assert.equal(bad.json().success, false);
    assert.ok(bad.json().errors.format, bad.body);
    const noId = await browser.get(`${INVOICES}?format=pdf`);
    assert.equal(noId.statusCode, 422, noId.body);
    assert.match(noId.json().errors.id, /required with format=pdf/);
    const json = await browser.get(`${INVOICES}?id=${invoice.id}&format=json`);
    assert.equal(json.statusCode, 200, json.body);
    assert.equal(json.json().invoice.number, invoice.number);
  });

  test('a registered buyer in Maharashtra: their GSTIN, CGST + SGST', async () => {
    const { browser, invoice } = await customerWithInvoice({ state: '27', withGstin: true });
    const text = await pdfText((await sessionPdf(browser, invoice.id)).rawPayload);
    for (const expected of ['Asha Traders LLP', '12, MG Road, Pune 411001', gstin('27'), 'CGST', 'SGST', '₹60.94']) {
      assert.ok(text.includes(expected), `the PDF says ${JSON.stringify(expected)}:\n${text}`);
    }
    assert.doesNotMatch(text, /IGST/);
  });

  test('a registered buyer in Karnataka: inter-state, IGST 18% of ₹121.88, place of supply Karnataka (29)', async () => {
    const { browser, invoice } = await customerWithInvoice({ state: '29', withGstin: true });
    const text = await pdfText((await sessionPdf(browser, invoice.id)).rawPayload);
    for (const expected of [gstin('29'), 'Karnataka (29)', 'Inter-state', 'IGST', '18%', '₹121.88', '₹799.00']) {
      assert.ok(text.includes(expected), `the PDF says ${JSON.stringify(expected)}:\n${text}`);
    }
    assert.doesNotMatch(text, /CGST|SGST/);
  });

  test('an unregistered buyer with a profile: no buyer GSTIN printed, only the seller one', async () => {
    const { browser, invoice } = await customerWithInvoice({ state: '29', withGstin: false });
    const text = await pdfText((await sessionPdf(browser, invoice.id)).rawPayload);
    assert.ok(text.includes('Asha Traders LLP'));
    assert.equal(text.match(/GSTIN/g)?.length, 1, text);
    assert.ok(text.includes(SELLER.gstin));
  });

  test('a credit note names the invoice it reduces; an IRN is printed only when there is one', async () => {
    const { account, invoice } = await customerWithInvoice();
    const document = await t.deps.invoiceDocuments.ofAccount(account.id, invoice.id);
    assert.equal(document.irn, null);
    const credit = {
      invoice: {
        ...document.invoice,
        id: document.invoice.id + 1000,
        kind: 'credit_note' as const,
        number: `HPC/${FY}/000001`,
        original_invoice_id: document.invoice.id,
      },
      original: { number: invoice.number, issued_at: document.invoice.issued_at },
      irn: null,
    };
    const text = await pdfText(await renderInvoicePdf(credit));
    for (const expected of [
      'Credit note',
      `HPC/${FY}/000001`,
      `Against invoice ${invoice.number} dated 15 Jun 2026`,
      'computer-generated credit note',
      '₹799.00',
    ]) {
      assert.ok(text.includes(expected), `the credit note says ${JSON.stringify(expected)}:\n${text}`);
    }
    assert.doesNotMatch(text, /Tax invoice/);
    const irn = 'a'.repeat(64);
    const withIrn = await pdfText(await renderInvoicePdf({ ...document, irn }));
    assert.ok(withIrn.includes(`IRN ${irn}`), withIrn);
  });
});

describe('staff CLI: invoices show | pdf', () => {
  const admin = (...argv: string[]) => runAdmin(argv, async () => t.deps, 'staff:priya');

  test('show by number or id: parties, lines and tax heads', async () => {
    const { account, invoice } = await customerWithInvoice({ state: '29', withGstin: true });
    const shown = await admin('invoices', 'show', invoice.number, '--json');
    assert.equal(shown.exitCode, 0, shown.stderr);
    const v = JSON.parse(shown.stdout);
    assert.equal(v.number, invoice.number);
    assert.equal(v.id, invoice.id);
    assert.equal(v.account.email, account.email);
    assert.equal(v.buyer.gstin, gstin('29'));
    assert.equal(v.seller.gstin, SELLER.gstin);
    assert.equal(v.place_of_supply, 'Karnataka (29)');
    assert.equal(v.supply, 'inter-state');
    assert.deepEqual(v.tax, [{ head: 'IGST', rate: '18%', amount: '121.88' }]);
    assert.equal(v.lines.length, 1);
    assert.equal(v.lines[0].sac, '998315');
    assert.equal(v.lines[0].taxable_value, '677.12');
    assert.equal(v.total, '799.00');
    assert.equal(v.amount_in_words, 'Rupees Seven Hundred Ninety-Nine Only');

    const byId = await admin('invoices', 'show', String(invoice.id));
    assert.equal(byId.exitCode, 0, byId.stderr);
    for (const expected of [
      invoice.number,
      'Asha Traders LLP',
      gstin('29'),
      '998315',
      'IGST',
      '₹799.00',
      'Lines',
      'Tax',
    ]) {
      assert.ok(byId.stdout.includes(expected), `show prints ${expected}:\n${byId.stdout}`);
    }
    // Lower case is the same number.
    assert.equal((await admin('invoices', 'show', invoice.number.toLowerCase())).exitCode, 0);
  });

  test('pdf: the file written where the CLI runs, named from the number or --out; unknown and malformed refused', async () => {
    const { invoice } = await customerWithInvoice();
    const result = await admin('invoices', 'pdf', invoice.number);
    assert.equal(result.exitCode, 0, result.stderr);
    const fileName = `${invoice.number.replaceAll('/', '-')}.pdf`;
    assert.equal(result.files?.length, 1);
    assert.equal(result.files?.[0]?.path, fileName);
    assert.match(result.stdout, new RegExp(`wrote ${fileName} \\(\\d+ bytes\\)`));

    const dir = mkdtempSync(join(tmpdir(), 'hostplane-invoice-pdf-'));
    try {
      const written = await writeOutputFiles(result, false, dir);
      assert.equal(written.exitCode, 0);
      assert.equal(written.files, undefined);
      const bytes = readFileSync(join(dir, fileName));
      assert.equal(statSync(join(dir, fileName)).mode & 0o777, 0o600);
      const text = await pdfText(bytes);
      assert.ok(text.includes(invoice.number) && text.includes('₹799.00'), text);

      const out = await admin('invoices', 'pdf', String(invoice.id), '--out', 'copy.pdf', '--json');
      assert.equal(out.exitCode, 0, out.stderr);
      assert.deepEqual(JSON.parse(out.stdout), {
        number: invoice.number,
        kind: 'invoice',
        file: 'copy.pdf',
        bytes: bytes.length,
      });
      await writeOutputFiles(out, true, dir);
      assert.deepEqual(readFileSync(join(dir, 'copy.pdf')), bytes, 'the same bytes as before');

      // A file that cannot be written fails the command, naming it.
      const blocked = await writeOutputFiles(
        await admin('invoices', 'pdf', invoice.number, '--out', 'no/such/dir/x.pdf'),
        false,
        dir,
      );
      assert.equal(blocked.exitCode, 1);
      assert.equal(blocked.stdout, '');
      assert.match(blocked.stderr, /cannot write no\/such\/dir\/x\.pdf: ENOENT/);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }

    const unknown = await admin('invoices', 'pdf', `HP/${FY}/999999`);
    assert.equal(unknown.exitCode, 1);
    assert.match(unknown.stderr, /No invoice HP\/2627\/999999/);
    assert.equal((await admin('invoices', 'show', '99999999')).exitCode, 1);
    const malformed = await admin('invoices', 'show', 'HP 2627;drop');
    assert.equal(malformed.exitCode, 2);
    assert.equal((await admin('invoices', 'pdf', invoice.number, '--out', '')).exitCode, 2);
  });
});

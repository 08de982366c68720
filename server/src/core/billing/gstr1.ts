// A month's tax documents as GSTR-1 lays them out (issue 35, CONTRACT §12; reference gst.md
// "Filing"), for staff to hand to their accountant (`npm run admin -- invoices export --month
// YYYY-MM`): B2B invoices by recipient GSTIN, B2C large (inter-state, value above ₹1,00,000), B2C
// others summarised by place of supply and rate (net of their credit notes), credit notes to
// registered (CDNR) and unregistered (CDNUR) recipients, the HSN/SAC summary, totals, and a
// reconciliation of the month's documents with the month's ledger. The month is read in India
// Standard Time. docs/INVOICES.md describes every field and the CSV layout (./gstr1-csv.ts).
// Reads only.

import { type Kysely, sql } from 'kysely';
import type { InvoicingConfig } from '../../config-invoicing.ts';
import type { DB, Invoice } from '../../db/tables.ts';
import { AppError } from '../errors.ts';
import { formatPaise } from '../money.ts';
import { isoWithOffset } from '../time.ts';
import { type Heads, headsOf, NO_HEADS } from './credit-notes.ts';
import { istDay, istMonth, stateName } from './gst.ts';
import { HOSTING_SAC } from './invoices.ts';

/**
 * B2C large: an inter-state invoice to an unregistered recipient of a value above ₹1,00,000.
 * gst.md gives no threshold; this is GSTR-1's since 1 August 2024 (CBIC notification 12/2024,
 * down from ₹2,50,000).
 */
export const B2CL_THRESHOLD_PAISE = 1_00_000_00n;

/** Amounts as the export writes them: rupees with two decimals. */
export interface Money {
  value: string;
  taxable: string;
  igst: string;
  cgst: string;
  sgst: string;
}

export interface Gstr1Export {
  month: string;
  period: { from: string; to: string; timezone: 'Asia/Kolkata' };
  seller: { gstin: string | null; legal_name: string; state_code: string };
  b2cl_threshold: string;
  b2b: Array<Record<string, string>>;
  b2cl: Array<Record<string, string>>;
  b2cs: Array<Record<string, string>>;
  cdnr: Array<Record<string, string>>;
  cdnur: Array<Record<string, string>>;
  hsn: Array<Record<string, string | number>>;
  totals: Record<'invoices' | 'credit_notes' | 'net', Money & { count: number }>;
  reconciliation: {
    invoices_total: string;
    credit_notes_total: string;
    documents_net: string;
    ledger_charges: string;
    ledger_credit_note_refunds: string;
    ledger_net: string;
    difference: string;
    reconciles: boolean;
  };
}

const add = (a: Heads, b: Heads, sign = 1n): Heads => ({
  taxable: a.taxable + sign * b.taxable,
  cgst: a.cgst + sign * b.cgst,
  sgst: a.sgst + sign * b.sgst,
  igst: a.igst + sign * b.igst,
  total: a.total + sign * b.total,
});

function money(h: Heads): Money {
  return {
    value: formatPaise(h.total),
    taxable: formatPaise(h.taxable),
    igst: formatPaise(h.igst),
    cgst: formatPaise(h.cgst),
    sgst: formatPaise(h.sgst),
  };
}

/** "27-Maharashtra", as GSTR-1 names a place of supply. */
function place(code: string): string {
  return `${code}-${stateName(code) ?? 'Unknown'}`;
}

const rate = (i: Invoice) => formatPaise(i.rate_bps);

function sellerState(i: Invoice, settings: InvoicingConfig): string {
  return i.seller.state_code ?? settings.sellerStateCode;
}

function isB2cl(i: Invoice, settings: InvoicingConfig): boolean {
  return !i.b2b && i.place_of_supply !== sellerState(i, settings) && BigInt(i.total_paise) > B2CL_THRESHOLD_PAISE;
}

function b2bRow(i: Invoice) {
  const m = money(headsOf(i));
  return {
    gstin: i.buyer.gstin ?? '',
    name: i.buyer.legal_name,
    number: i.number,
    date: istDay(i.issued_at),
    value: m.value,
    place_of_supply: place(i.place_of_supply),
    rate: rate(i),
    taxable: m.taxable,
    igst: m.igst,
    cgst: m.cgst,
    sgst: m.sgst,
  };
}

function b2clRow(i: Invoice) {
  const m = money(headsOf(i));
  return {
    number: i.number,
    date: istDay(i.issued_at),
    value: m.value,
    place_of_supply: place(i.place_of_supply),
    rate: rate(i),
    taxable: m.taxable,
    igst: m.igst,
  };
}

function noteRow(n: Invoice) {
  const m = money(headsOf(n));
  return {
    number: n.number,
    date: istDay(n.issued_at),
    note_type: 'C',
    original_number: n.original_number ?? '',
    original_date: n.original_issued_at ? istDay(n.original_issued_at) : '',
    place_of_supply: place(n.place_of_supply),
    value: m.value,
    rate: rate(n),
    taxable: m.taxable,
    igst: m.igst,
    cgst: m.cgst,
    sgst: m.sgst,
  };
}

/** Rows summed under a key, in the order keys first appear; credit notes subtract. */
class Summary<K extends Record<string, string>> {
  readonly #rows = new Map<string, { key: K; heads: Heads; quantity: number }>();
  add(key: K, heads: Heads, sign: 1n | -1n, quantity = 0): void {
    const id = JSON.stringify(key);
    const row = this.#rows.get(id) ?? { key, heads: NO_HEADS, quantity: 0 };
    this.#rows.set(id, { key, heads: add(row.heads, heads, sign), quantity: row.quantity + quantity });
  }
  rows() {
    return [...this.#rows.values()];
  }
}

interface Sorted {
  invoices: Invoice[];
  notes: Invoice[];
  originals: Map<number, Invoice>;
}

async function documentsOf(db: Kysely<DB>, from: Date, to: Date): Promise<Sorted> {
  const rows = await db
    .selectFrom('invoices')
    .selectAll()
    .where('issued_at', '>=', from)
    .where('issued_at', '<', to)
    .orderBy('fy')
    .orderBy('number')
    .execute();
  const notes = rows.filter((r) => r.kind === 'credit_note');
  const ids = [...new Set(notes.map((n) => n.original_invoice_id as number))];
  const originals =
    ids.length === 0 ? [] : await db.selectFrom('invoices').selectAll().where('id', 'in', ids).execute();
  return {
    invoices: rows.filter((r) => r.kind === 'invoice'),
    notes,
    originals: new Map(originals.map((o) => [o.id, o])),
  };
}

/** The month's charges (order, renewal) and the refunds that go with credit notes, from the ledger. */
async function ledgerOf(db: Kysely<DB>, from: Date, to: Date): Promise<{ charges: bigint; refunds: bigint }> {
  const row = await db
    .selectFrom('wallet_transactions')
    .select([
      sql<string>`coalesce(sum(case when kind in ('order', 'renewal') then -amount_paise else 0 end), 0)`.as('charges'),
      sql<string>`coalesce(sum(case when kind = 'refund' and reference_type = 'credit_note' then amount_paise else 0 end), 0)`.as(
        'refunds',
      ),
    ])
    .where('created_at', '>=', from)
    .where('created_at', '<', to)
    .executeTakeFirstOrThrow();
  return { charges: BigInt(row.charges), refunds: BigInt(row.refunds) };
}

function sections(docs: Sorted, settings: InvoicingConfig) {
  const b2cs = new Summary<{ place_of_supply: string; rate: string; supply: string }>();
  const hsn = new Summary<{ supply: string; sac: string; rate: string }>();
  const b2csKey = (i: Invoice) => ({
    place_of_supply: place(i.place_of_supply),
    rate: rate(i),
    supply: i.place_of_supply === sellerState(i, settings) ? 'intra-state' : 'inter-state',
  });
  const hsnKey = (i: Invoice) => ({
    supply: i.b2b ? 'B2B' : 'B2C',
    sac: i.lines[0]?.sac ?? HOSTING_SAC,
    rate: rate(i),
  });
  const quantity = (i: Invoice) => i.lines.reduce((n, l) => n + l.quantity, 0);
  const b2b: ReturnType<typeof b2bRow>[] = [];
  const b2cl: ReturnType<typeof b2clRow>[] = [];
  for (const i of docs.invoices) {
    if (i.b2b) b2b.push(b2bRow(i));
    else if (isB2cl(i, settings)) b2cl.push(b2clRow(i));
    else b2cs.add(b2csKey(i), headsOf(i), 1n);
    hsn.add(hsnKey(i), headsOf(i), 1n, quantity(i));
  }
  const cdnr: Array<Record<string, string>> = [];
  const cdnur: Array<Record<string, string>> = [];
  for (const n of docs.notes) {
    const original = docs.originals.get(n.original_invoice_id as number);
    if (n.b2b) cdnr.push({ gstin: n.buyer.gstin ?? '', name: n.buyer.legal_name, ...noteRow(n) });
    else if (original && isB2cl(original, settings)) {
      const { cgst: _c, sgst: _s, ...row } = noteRow(n);
      cdnur.push({ ur_type: 'B2CL', ...row });
    } else b2cs.add(b2csKey(n), headsOf(n), -1n);
    hsn.add(hsnKey(n), headsOf(n), -1n, -quantity(n));
  }
  return {
    b2b,
    b2cl,
    b2cs: b2cs.rows().map((r) => ({ ...r.key, ...withoutValue(money(r.heads)) })),
    cdnr,
    cdnur,
    hsn: hsn.rows().map((r) => ({
      supply: r.key.supply,
      sac: r.key.sac,
      description: 'Hosting and IT infrastructure provisioning services',
      uqc: 'NA',
      quantity: r.quantity,
      rate: r.key.rate,
      ...money(r.heads),
    })),
  };
}

function withoutValue(m: Money): Omit<Money, 'value'> {
  const { value: _value, ...rest } = m;
  return rest;
}

/** The GSTR-1 sections, totals and ledger reconciliation of `month` (YYYY-MM, IST). */
export async function gstr1Export(db: Kysely<DB>, settings: InvoicingConfig, month: string): Promise<Gstr1Export> {
  const window = istMonth(month);
  if (!window) throw AppError.fields({ month: 'must be YYYY-MM, e.g. 2026-06' });
  const docs = await documentsOf(db, window.from, window.to);
  const ledger = await ledgerOf(db, window.from, window.to);
  const invoiced = docs.invoices.map(headsOf).reduce((a, b) => add(a, b), NO_HEADS);
  const credited = docs.notes.map(headsOf).reduce((a, b) => add(a, b), NO_HEADS);
  const net = add(invoiced, credited, -1n);
  const ledgerNet = ledger.charges - ledger.refunds;
  return {
    month,
    period: { from: isoWithOffset(window.from), to: isoWithOffset(window.to), timezone: 'Asia/Kolkata' },
    seller: {
      gstin: settings.sellerGstin,
      legal_name: settings.sellerLegalName,
      state_code: settings.sellerStateCode,
    },
    b2cl_threshold: formatPaise(B2CL_THRESHOLD_PAISE),
    ...sections(docs, settings),
    totals: {
      invoices: { count: docs.invoices.length, ...money(invoiced) },
      credit_notes: { count: docs.notes.length, ...money(credited) },
      net: { count: docs.invoices.length + docs.notes.length, ...money(net) },
    },
    reconciliation: {
      invoices_total: formatPaise(invoiced.total),
      credit_notes_total: formatPaise(credited.total),
      documents_net: formatPaise(net.total),
      ledger_charges: formatPaise(ledger.charges),
      ledger_credit_note_refunds: formatPaise(ledger.refunds),
      ledger_net: formatPaise(ledgerNet),
      difference: formatPaise(net.total - ledgerNet),
      reconciles: net.total === ledgerNet,
    },
  };
}

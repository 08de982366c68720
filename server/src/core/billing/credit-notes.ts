// Credit notes (issue 35, CONTRACT §12, CGST Act s.34): the only way an issued invoice is reduced.
// A credit note is an `invoices` row of kind 'credit_note' in its own series, `<PREFIX>C/<FY>/<serial>`,
// numbered like invoices (invoices.ts nextSerial: gapless, a rolled-back refund gives its number
// back). It copies the original invoice's buyer, seller, place of supply and rate, names the
// original's number and date, and credits all or part of what is still un-credited on it: the
// credit notes of one invoice never add up to more than the invoice.
//
// The tax split is proportional and exact to the paisa (`creditSplit`): computed on the running
// total credited so far, so each note's taxable value is within a paisa of its share, its heads
// add up to its total exactly, and once an invoice is fully credited its notes add up to the
// invoice head by head.
//
// Money goes back with the document: `refundInvoice` issues the note and posts a `refund` ledger
// row that references it, in the caller's transaction (which has locked the wallet first). Used by
// a failed provisioning (product-kit/lifecycle.ts) and by staff (`invoices credit`, below).

import type { Kysely, Transaction } from 'kysely';
import type { InvoicingConfig } from '../../config-invoicing.ts';
import type { DB, Invoice, InvoiceLine, LedgerRow, Order } from '../../db/tables.ts';
import { byStaff, recordActivity, type Who } from '../activity/activity.ts';
import { auditAs } from '../audit/audit.ts';
import { AppError } from '../errors.ts';
import { formatPaise, parsePaise } from '../money.ts';
import { notify } from '../notifications/notification.service.ts';
import { balanceOf, lockWallet, post } from '../wallet/ledger.ts';
import { financialYear, invoiceNumber, istDay } from './gst.ts';
import { HOSTING_SAC, nextSerial } from './invoices.ts';

/** The amounts of a tax document, in paise. */
export interface Heads {
  taxable: bigint;
  cgst: bigint;
  sgst: bigint;
  igst: bigint;
  total: bigint;
}

export const NO_HEADS: Heads = Object.freeze({ taxable: 0n, cgst: 0n, sgst: 0n, igst: 0n, total: 0n });

type Amounts = Pick<Invoice, 'taxable_paise' | 'cgst_paise' | 'sgst_paise' | 'igst_paise' | 'total_paise'>;

export function headsOf(row: Amounts): Heads {
  return {
    taxable: BigInt(row.taxable_paise),
    cgst: BigInt(row.cgst_paise),
    sgst: BigInt(row.sgst_paise),
    igst: BigInt(row.igst_paise),
    total: BigInt(row.total_paise),
  };
}

/** a ÷ b rounded half up, for a ≥ 0 and b > 0. */
function halfUp(a: bigint, b: bigint): bigint {
  return (2n * a + b) / (2n * b);
}

/**
 * The heads of a credit note of `amount` paise on an invoice of `original`, after earlier credit
 * notes totalling `earlier`. Rounding: the running credited total C = earlier + amount is split
 * first — taxable = round(original taxable × C ÷ original total), half up; its tax = C − taxable;
 * each tax head = round(original head × tax ÷ original tax) (CGST and IGST; SGST takes what is left,
 * so an odd paisa lands on SGST as on the invoice) — and the note is that split minus the earlier
 * notes'. So: taxable + CGST + SGST + IGST = amount exactly; the taxable value is within a paisa of
 * amount × original taxable ÷ original total; no head is negative; and when the invoice is fully
 * credited the notes add up to it head by head. Throws a RangeError for an amount of nothing or of
 * more than is left.
 */
export function creditSplit(original: Heads, earlier: Heads, amount: bigint): Heads {
  const left = original.total - earlier.total;
  if (amount <= 0n || amount > left) throw new RangeError(`a credit of ${amount} paise on ${left} left`);
  const credited = earlier.total + amount;
  const creditedTaxable = halfUp(original.taxable * credited, original.total);
  const originalTax = original.total - original.taxable;
  const creditedTax = credited - creditedTaxable;
  const share = (head: bigint) => (originalTax === 0n ? 0n : halfUp(head * creditedTax, originalTax));
  const taxable = creditedTaxable - earlier.taxable;
  const cgst = share(original.cgst) - earlier.cgst;
  const igst = share(original.igst) - earlier.igst;
  const note = { taxable, cgst, sgst: amount - taxable - cgst - igst, igst, total: amount };
  if (note.taxable < 0n || note.cgst < 0n || note.sgst < 0n || note.igst < 0n) {
    throw new Error('credit split went negative: the earlier credit notes of this invoice were split otherwise');
  }
  return note;
}

function sum(rows: Amounts[]): Heads {
  return rows.map(headsOf).reduce(
    (a, b) => ({
      taxable: a.taxable + b.taxable,
      cgst: a.cgst + b.cgst,
      sgst: a.sgst + b.sgst,
      igst: a.igst + b.igst,
      total: a.total + b.total,
    }),
    NO_HEADS,
  );
}

/** What the credit notes of an invoice add up to so far. */
export async function creditedSoFar(db: Kysely<DB>, invoiceId: number): Promise<Heads> {
  const notes = await db
    .selectFrom('invoices')
    .select(['taxable_paise', 'cgst_paise', 'sgst_paise', 'igst_paise', 'total_paise'])
    .where('original_invoice_id', '=', invoiceId)
    .where('kind', '=', 'credit_note')
    .execute();
  return sum(notes);
}

/** What can still be credited on an invoice, in paise. */
export async function creditableLeft(db: Kysely<DB>, invoice: Invoice): Promise<bigint> {
  return BigInt(invoice.total_paise) - (await creditedSoFar(db, invoice.id)).total;
}

export interface CreditNoteInput {
  /** The invoice credited (kind 'invoice'). */
  invoice: Invoice;
  /** Paise to credit, with GST; all that is left un-credited when absent. */
  amountPaise?: bigint | number | string;
  reason: string;
  at: Date;
}

function checkedReason(reason: string): string {
  const text = reason.trim();
  if (text.length < 3 || text.length > 500) throw AppError.fields({ reason: 'say why, in 3–500 characters' });
  return text;
}

/**
 * Issue a credit note in `trx`. Locks the original invoice row, so two notes on one invoice are
 * decided one after the other and never credit more than it; refused (409 conflict) on a credit
 * note or a fully credited invoice, and (422 amount) for more than is left.
 */
export async function issueCreditNote(
  trx: Transaction<DB>,
  settings: InvoicingConfig,
  input: CreditNoteInput,
): Promise<Invoice> {
  const { invoice } = input;
  if (invoice.kind !== 'invoice') {
    throw new AppError('conflict', { message: `${invoice.number} is a credit note; credit the invoice it names.` });
  }
  const reason = checkedReason(input.reason);
  await trx.selectFrom('invoices').select('id').where('id', '=', invoice.id).forUpdate().execute();
  const original = headsOf(invoice);
  const earlier = await creditedSoFar(trx, invoice.id);
  const left = original.total - earlier.total;
  if (left <= 0n) throw new AppError('conflict', { message: `Invoice ${invoice.number} is fully credited already.` });
  const amount = input.amountPaise === undefined ? left : BigInt(input.amountPaise);
  if (amount <= 0n) throw AppError.fields({ amount: 'must be more than zero' });
  if (amount > left) {
    throw AppError.fields({
      amount: `must be at most ${formatPaise(left)}: what is left un-credited on ${invoice.number} (of ${formatPaise(original.total)})`,
    });
  }
  const heads = creditSplit(original, earlier, amount);
  const fy = financialYear(input.at);
  const series = `${settings.invoicePrefix}C`;
  const serial = await nextSerial(trx, series, fy);
  const sac = invoice.lines[0]?.sac ?? HOSTING_SAC;
  const line: InvoiceLine = {
    description: `Credit against invoice ${invoice.number} of ${istDay(invoice.issued_at)}: ${reason}`,
    sac,
    // A full credit takes the supply back; a partial one only lowers its value (docs/INVOICES.md).
    quantity: amount === BigInt(invoice.total_paise) ? (invoice.lines[0]?.quantity ?? 1) : 0,
    taxable_paise: String(heads.taxable),
    cgst_paise: String(heads.cgst),
    sgst_paise: String(heads.sgst),
    igst_paise: String(heads.igst),
    total_paise: String(heads.total),
  };
  return trx
    .insertInto('invoices')
    .values({
      number: invoiceNumber(series, fy, serial),
      kind: 'credit_note',
      account_id: invoice.account_id,
      order_id: invoice.order_id,
      original_invoice_id: invoice.id,
      issued_at: input.at,
      fy,
      serial,
      taxable_paise: heads.taxable,
      cgst_paise: heads.cgst,
      sgst_paise: heads.sgst,
      igst_paise: heads.igst,
      total_paise: heads.total,
      rate_bps: invoice.rate_bps,
      place_of_supply: invoice.place_of_supply,
      b2b: invoice.b2b,
      buyer: JSON.stringify(invoice.buyer),
      seller: JSON.stringify(invoice.seller),
      lines: JSON.stringify([line]),
      reason,
      original_number: invoice.number,
      original_issued_at: invoice.issued_at,
    })
    .returningAll()
    .executeTakeFirstOrThrow();
}

/**
 * Credit an invoice and put the money back in the wallet: the credit note and a `refund` ledger
 * row referencing it (`credit_note`, its id), dated as the note. In the caller's transaction, which
 * has locked the account's wallet (lockWallet) before anything else.
 */
export async function refundInvoice(
  trx: Transaction<DB>,
  settings: InvoicingConfig,
  input: CreditNoteInput & { note: string },
): Promise<{ creditNote: Invoice; refund: LedgerRow }> {
  const creditNote = await issueCreditNote(trx, settings, input);
  const refund = await post(trx, creditNote.account_id, {
    kind: 'refund',
    amountPaise: BigInt(creditNote.total_paise),
    referenceType: 'credit_note',
    referenceId: creditNote.id,
    note: `${input.note} (credit note ${creditNote.number})`,
    at: input.at,
  });
  return { creditNote, refund };
}

export interface CreditNoteServiceOptions {
  db: Kysely<DB>;
  invoicing: InvoicingConfig;
  clock: () => Date;
  /** Runs in the crediting transaction, after the refund (the billing cycle pays unpaid orders). */
  afterCredit?: (trx: Transaction<DB>, accountId: number) => Promise<unknown>;
}

export interface StaffCredit {
  /** The invoice: its number (`HP/2627/000042`) or its id. */
  invoice: string;
  /** Rupees, with GST; all that is left when absent. */
  amount?: unknown;
  reason: string;
  actor: string;
  /** Who did it: the customer's activity log names them; a staff `who` (byOperator, byStaffMember) audits it. */
  who?: Who;
}

/** Staff credit notes, and reading credit notes by the orders they credit. */
export function createCreditNoteService(options: CreditNoteServiceOptions) {
  const { db } = options;

  async function find(ref: string): Promise<Invoice> {
    const text = ref.trim().toUpperCase();
    const byId = /^\d{1,9}$/.test(text);
    const invoice = await db
      .selectFrom('invoices')
      .selectAll()
      .where(byId ? 'id' : 'number', '=', byId ? Number(text) : text)
      .executeTakeFirst();
    if (!invoice) throw new AppError('not_found', { message: `No invoice ${ref}.` });
    return invoice;
  }

  return {
    find,

    /**
     * Staff credit an invoice in one transaction: the credit note, the `refund` row into the
     * wallet, the client's notification, then unpaid orders paid from the money (CONTRACT §7).
     */
    async credit(input: StaffCredit) {
      let amountPaise: bigint | undefined;
      if (input.amount !== undefined) {
        const parsed = parsePaise(input.amount);
        if (!parsed.ok) throw AppError.fields({ amount: parsed.reason });
        amountPaise = parsed.paise;
      }
      const invoice = await find(input.invoice);
      const at = options.clock();
      const done = await db.transaction().execute(async (trx) => {
        await lockWallet(trx, invoice.account_id);
        const left = await creditableLeft(trx, invoice);
        const out = await refundInvoice(trx, options.invoicing, {
          invoice,
          ...(amountPaise === undefined ? {} : { amountPaise }),
          reason: input.reason,
          at,
          note: `Refund against invoice ${invoice.number}: ${input.reason.trim()} (${input.actor})`,
        });
        const total = formatPaise(out.creditNote.total_paise);
        const who = input.who ?? byStaff();
        await auditAs(trx, who, {
          action: 'invoice.credit',
          targetType: 'invoice',
          targetId: invoice.id,
          before: { number: invoice.number, credited: formatPaise(BigInt(invoice.total_paise) - left) },
          after: {
            credit_note: out.creditNote.number,
            amount: total,
            credited: formatPaise(BigInt(invoice.total_paise) - left + BigInt(out.creditNote.total_paise)),
            transaction: out.refund.public_id,
          },
          reason: out.creditNote.reason,
          at,
        });
        await recordActivity(trx, {
          accountId: invoice.account_id,
          type: 'staff_invoice_credited',
          who,
          summary: `Hostplane staff credited ₹${total} against invoice ${invoice.number} (credit note ${out.creditNote.number}) to your wallet`,
          details: {
            invoice: invoice.number,
            credit_note: out.creditNote.number,
            amount: total,
            transaction: out.refund.public_id,
          },
          at,
        });
        await notify(trx, invoice.account_id, {
          kind: 'credit_note',
          title: `₹${total} credited to your wallet`,
          body: `Credit note ${out.creditNote.number} credits ₹${total} against invoice ${invoice.number}: ${out.creditNote.reason}`,
          data: { invoice: invoice.id, credit_note: out.creditNote.id },
        });
        await options.afterCredit?.(trx, invoice.account_id);
        return out;
      });
      return { ...done, invoice, balance: await balanceOf(db, invoice.account_id) };
    },

    /** The credit notes of these orders' invoices, oldest first, by order id. */
    async ofOrders(accountId: number, orderIds: number[]): Promise<Map<number, Invoice[]>> {
      const out = new Map<number, Invoice[]>();
      if (orderIds.length === 0) return out;
      const rows = await db
        .selectFrom('invoices')
        .selectAll()
        .where('account_id', '=', accountId)
        .where('kind', '=', 'credit_note')
        .where('order_id', 'in', orderIds)
        .orderBy('id')
        .execute();
      for (const row of rows) out.set(row.order_id as number, [...(out.get(row.order_id as number) ?? []), row]);
      return out;
    },
  };
}

export type CreditNoteService = ReturnType<typeof createCreditNoteService>;

/**
 * Give back what a paid order charged when its work gave up (provisioning, a resize): through a
 * credit note of its tax invoice, or a plain refund row for an order without one. Null when the
 * invoice is credited in full already.
 */
export async function refundOrderCharge(
  trx: Transaction<DB>,
  invoicing: InvoicingConfig,
  input: { order: Order; why: string; at: Date },
): Promise<LedgerRow | null> {
  const { order, why, at } = input;
  const note = `Refund of ${order.public_id}: ${why.charAt(0).toLowerCase()}${why.slice(1)}`;
  const invoice = await trx
    .selectFrom('invoices')
    .selectAll()
    .where('order_id', '=', order.id)
    .where('kind', '=', 'invoice')
    .executeTakeFirst();
  if (!invoice) {
    return post(trx, order.account_id, {
      kind: 'refund',
      amountPaise: BigInt(order.amount_paise),
      referenceType: 'order',
      referenceId: order.id,
      note,
      at,
    });
  }
  if ((await creditableLeft(trx, invoice)) <= 0n) return null;
  return (await refundInvoice(trx, invoicing, { invoice, reason: why, at, note })).refund;
}

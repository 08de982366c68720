// The sections of a data export about money: billing details, the wallet and its ledger, deposits
// (with their proof files inline when asked for), orders, and the tax invoices and credit notes
// exactly as issued. Amounts are rupees as decimal strings.

import { readFile } from 'node:fs/promises';
import type { Invoice } from '../../db/tables.ts';
import { formatPaise } from '../money.ts';
import { type ExportContext, type Exporter, iso } from './export-kit.ts';

/** Proof files put inline in one archive at most, in bytes; past it a deposit says where to find its file. */
export const MAX_INLINE_PROOF_BYTES = 20 * 1024 * 1024;

const MIME = { png: 'image/png', jpeg: 'image/jpeg', webp: 'image/webp', pdf: 'application/pdf' } as const;

const billingProfile: Exporter = {
  section: 'billing_profile',
  description: 'The billing details your tax invoices name you by (null when you never set them).',
  async collect({ db, accountId }) {
    const p = await db
      .selectFrom('billing_profiles')
      .select(['legal_name', 'address_line1', 'address_line2', 'city', 'state_code', 'pincode', 'gstin', 'updated_at'])
      .where('account_id', '=', accountId)
      .executeTakeFirst();
    return p ? { ...p, updated_at: iso(p.updated_at) } : null;
  },
};

const wallet: Exporter = {
  section: 'wallet',
  description: 'Your wallet balance.',
  async collect({ db, accountId }) {
    const w = await db
      .selectFrom('wallets')
      .select(['balance_paise', 'updated_at'])
      .where('account_id', '=', accountId)
      .executeTakeFirst();
    return { balance: formatPaise(w?.balance_paise ?? 0), currency: 'INR', updated_at: iso(w?.updated_at ?? null) };
  },
};

const ledger: Exporter = {
  section: 'ledger',
  description: 'Every movement of your wallet, oldest first, with the balance after it.',
  async collect({ db, accountId }) {
    const rows = await db
      .selectFrom('wallet_transactions')
      .select([
        'id',
        'public_id',
        'kind',
        'amount_paise',
        'balance_after_paise',
        'reference_type',
        'reference_id',
        'note',
        'created_at',
      ])
      .where('account_id', '=', accountId)
      .orderBy('id')
      .execute();
    return rows.map(({ amount_paise, balance_after_paise, created_at, ...r }) => ({
      ...r,
      amount: formatPaise(amount_paise),
      balance_after: formatPaise(balance_after_paise),
      created_at: iso(created_at),
    }));
  },
};

async function proofOf(
  ctx: ExportContext,
  deposit: { screenshot_file: string | null; screenshot_type: keyof typeof MIME | null; proof_erased_at: Date | null },
  budget: { left: number },
): Promise<Record<string, unknown> | null> {
  if (deposit.screenshot_file === null || deposit.screenshot_type === null) {
    return deposit.proof_erased_at === null ? null : { note: 'The proof file was deleted.' };
  }
  if (!ctx.includeProofs) {
    return { note: 'Not included: ask for an export with proof files, or download it from the wallet page.' };
  }
  const bytes = await readFile(ctx.proofPath(deposit.screenshot_file)).catch(() => null);
  if (bytes === null) return { note: 'The proof file could not be read; ask support for it.' };
  if (bytes.length > budget.left) {
    return { note: 'Too large to include beside the others: download it from the wallet page.', bytes: bytes.length };
  }
  budget.left -= bytes.length;
  return { media_type: MIME[deposit.screenshot_type], bytes: bytes.length, base64: bytes.toString('base64') };
}

const deposits: Exporter = {
  section: 'deposits',
  description:
    'Money you added to your wallet: amount, method, reference, review and refunds; proof files only when asked for (base64).',
  async collect(ctx) {
    const rows = await ctx.db
      .selectFrom('deposits')
      .select([
        'id',
        'public_id',
        'amount_paise',
        'method',
        'txn_ref',
        'screenshot_file',
        'screenshot_type',
        'screenshot_bytes',
        'proof_erased_at',
        'gateway_order_id',
        'gateway_payment_id',
        'status',
        'reason',
        'reviewed_at',
        'refund_amount_paise',
        'refund_reason',
        'refunded_at',
        'created_at',
      ])
      .where('account_id', '=', ctx.accountId)
      .orderBy('id')
      .execute();
    const budget = { left: MAX_INLINE_PROOF_BYTES };
    const out: Record<string, unknown>[] = [];
    for (const d of rows) {
      out.push({
        id: d.id,
        public_id: d.public_id,
        amount: formatPaise(d.amount_paise),
        method: d.method,
        reference: d.txn_ref,
        gateway_order_id: d.gateway_order_id,
        gateway_payment_id: d.gateway_payment_id,
        status: d.status,
        reason: d.reason,
        reviewed_at: iso(d.reviewed_at),
        refund:
          d.refunded_at === null
            ? null
            : { amount: formatPaise(d.refund_amount_paise ?? 0), reason: d.refund_reason, at: iso(d.refunded_at) },
        created_at: iso(d.created_at),
        proof: await proofOf(ctx, d, budget),
      });
    }
    return out;
  },
};

const orders: Exporter = {
  section: 'orders',
  description: 'Every order, new and renewal, with what it was for and its state.',
  async collect({ db, accountId }) {
    const rows = await db
      .selectFrom('orders')
      .innerJoin('plans', 'plans.id', 'orders.plan_id')
      .select([
        'orders.id',
        'orders.public_id',
        'orders.kind',
        'orders.status',
        'orders.amount_paise',
        'orders.service_id',
        'orders.domain',
        'orders.config',
        'orders.created_at',
        'orders.paid_at',
        'orders.renews_from',
        'plans.label as plan',
        'plans.name as plan_name',
      ])
      .where('orders.account_id', '=', accountId)
      .orderBy('orders.id')
      .execute();
    return rows.map(({ amount_paise, created_at, paid_at, renews_from, ...o }) => ({
      ...o,
      amount: formatPaise(amount_paise),
      created_at: iso(created_at),
      paid_at: iso(paid_at),
      renews_from: iso(renews_from),
    }));
  },
};

function document(i: Invoice) {
  return {
    id: i.id,
    number: i.number,
    kind: i.kind,
    issued_at: iso(i.issued_at),
    order_id: i.order_id,
    original_number: i.original_number,
    original_issued_at: iso(i.original_issued_at),
    reason: i.reason,
    place_of_supply: i.place_of_supply,
    b2b: i.b2b,
    rate_bps: i.rate_bps,
    taxable: formatPaise(i.taxable_paise),
    cgst: formatPaise(i.cgst_paise),
    sgst: formatPaise(i.sgst_paise),
    igst: formatPaise(i.igst_paise),
    total: formatPaise(i.total_paise),
    buyer: i.buyer,
    seller: i.seller,
    lines: i.lines,
  };
}

function invoicesOf(kind: Invoice['kind']) {
  return async ({ db, accountId }: ExportContext) => {
    const rows = await db
      .selectFrom('invoices')
      .selectAll()
      .where('account_id', '=', accountId)
      .where('kind', '=', kind)
      .orderBy('id')
      .execute();
    return rows.map(document);
  };
}

const invoices: Exporter = {
  section: 'invoices',
  description: 'Your tax invoices as issued (buyer and seller as they were then; line amounts in paise).',
  collect: invoicesOf('invoice'),
};

const creditNotes: Exporter = {
  section: 'credit_notes',
  description: 'Credit notes against your invoices, as issued.',
  collect: invoicesOf('credit_note'),
};

export const MONEY_EXPORTERS: readonly Exporter[] = [
  billingProfile,
  wallet,
  ledger,
  deposits,
  orders,
  invoices,
  creditNotes,
];

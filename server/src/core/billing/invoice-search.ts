// Issued invoices and credit notes as staff look them up (CONTRACT §14, the console's Invoices
// page): every account's, newest first, by part of the number, the customer's e-mail or the id,
// with what has been credited against each invoice so far. Read-only, like everything that reads
// invoices (they are immutable once issued).

import { type Kysely, sql } from 'kysely';
import type { DB, Invoice } from '../../db/tables.ts';
import { AppError } from '../errors.ts';

export interface InvoiceSearch {
  /** Part of the number (HP/2627/0000…), part of the customer's e-mail, or an invoice id. */
  search?: string;
  kind?: Invoice['kind'];
  accountId?: number;
  limit: number;
  /** Only documents with an id below this one (the next page of a newest-first list). */
  before?: number;
}

export type StaffInvoice = Invoice & {
  email: string;
  /** Paise credited against it by credit notes so far (0 for a credit note itself). */
  credited_paise: string;
};

function query(db: Kysely<DB>) {
  return db
    .selectFrom('invoices')
    .innerJoin('accounts', 'accounts.id', 'invoices.account_id')
    .selectAll('invoices')
    .select('accounts.email')
    .select(
      sql<string>`coalesce((select sum(cn.total_paise) from invoices cn where cn.original_invoice_id = invoices.id and cn.kind = 'credit_note'), 0)`.as(
        'credited_paise',
      ),
    );
}

/** Documents of every account (or one), newest first. */
export async function searchInvoices(db: Kysely<DB>, filter: InvoiceSearch): Promise<StaffInvoice[]> {
  let q = query(db).orderBy('invoices.id', 'desc').limit(filter.limit);
  if (filter.kind) q = q.where('invoices.kind', '=', filter.kind);
  if (filter.accountId !== undefined) q = q.where('invoices.account_id', '=', filter.accountId);
  if (filter.before !== undefined) q = q.where('invoices.id', '<', filter.before);
  const search = filter.search?.trim().toLowerCase();
  if (search) {
    const like = `%${search.replace(/[\\%_]/g, '\\$&')}%`;
    const id = /^\d{1,9}$/.test(search) ? Number(search) : null;
    q = q.where((eb) =>
      eb.or([
        eb(eb.fn('lower', ['invoices.number']), 'like', like),
        eb('accounts.email', 'like', like),
        ...(id === null ? [] : [eb('invoices.id', '=', id)]),
      ]),
    );
  }
  return (await q.execute()).map((row) => ({ ...row, credited_paise: String(row.credited_paise) }));
}

/** One document of any account, with its owner's e-mail and what is credited against it; 404 otherwise. */
export async function staffInvoice(db: Kysely<DB>, id: number): Promise<StaffInvoice> {
  const row = await query(db).where('invoices.id', '=', id).executeTakeFirst();
  if (!row) throw new AppError('not_found', { message: `No invoice ${id}.` });
  return { ...row, credited_paise: String(row.credited_paise) };
}

/** The credit notes against an invoice, oldest first. */
export function creditNotesOf(db: Kysely<DB>, invoiceId: number): Promise<Invoice[]> {
  return db
    .selectFrom('invoices')
    .selectAll()
    .where('original_invoice_id', '=', invoiceId)
    .where('kind', '=', 'credit_note')
    .orderBy('id')
    .execute();
}

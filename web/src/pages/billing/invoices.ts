// The invoices answers as the pages read them, and the few words they share: a document's kind
// ("Tax invoice", "Credit note"), its PDF's address, and the tax it carries in words.

import type { paths } from '@hostplane/sdk/schema';
import { useQuery } from '@tanstack/react-query';
import { api, unwrap } from '../../lib/api.ts';

type InvoicesAnswer = paths['/api/v1/client/invoices/']['get']['responses'][200]['content']['application/json'];
export type InvoiceList = Extract<InvoicesAnswer, { invoices: unknown }>;
export type InvoiceSummary = InvoiceList['invoices'][number];
export type Invoice = Extract<InvoicesAnswer, { invoice: unknown }>['invoice'];

export const INVOICES_PER_PAGE = 20;

export function useInvoices(page: number) {
  return useQuery({
    queryKey: ['invoices', page],
    queryFn: async () =>
      (await unwrap(
        api.GET('/api/v1/client/invoices/', { params: { query: { page, per_page: INVOICES_PER_PAGE } } }),
      )) as InvoiceList,
    placeholderData: (previous) => previous,
  });
}

export function useInvoice(id: number) {
  return useQuery({
    queryKey: ['invoices', 'one', id],
    queryFn: async () => {
      // The route also answers a PDF (format=pdf); asked for JSON, it answers JSON.
      const answer = (await unwrap(
        api.GET('/api/v1/client/invoices/', { params: { query: { id } } }),
      )) as InvoicesAnswer;
      if (!('invoice' in answer)) throw new Error('The server answered with a list instead of the invoice.');
      return answer.invoice;
    },
  });
}

/** "Tax invoice" or "Credit note" (a kind the panel does not know yet is shown as it is). */
export function kindLabel(kind: string | undefined): string {
  if (kind === 'credit_note') return 'Credit note';
  if (kind === 'invoice' || kind === undefined) return 'Tax invoice';
  return kind.replace(/_/g, ' ').replace(/^./, (c) => c.toUpperCase());
}

/** The PDF of invoice `id` on the session surface. */
export function pdfUrl(id: number): string {
  return `/api/v1/client/invoices/?id=${id}&format=pdf`;
}

/** The GST of a document as one amount (CGST + SGST, or IGST), in rupees. */
export function taxTotal(tax: { cgst: string; sgst: string; igst: string }): number {
  return Math.round((Number(tax.cgst) + Number(tax.sgst) + Number(tax.igst)) * 100) / 100;
}

/** Which GST a document carries: CGST + SGST inside the seller's state, IGST across states. */
export function split(invoice: Invoice): 'intra' | 'inter' {
  if (Number(invoice.tax.igst) !== 0) return 'inter';
  return invoice.seller.state_code === null || invoice.seller.state_code === invoice.place_of_supply
    ? 'intra'
    : 'inter';
}

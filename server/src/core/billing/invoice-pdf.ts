// The PDF of a tax invoice or credit note (issue 35, CONTRACT §12, reference gst.md; CGST rule
// 46): A4, the seller (name, address, GSTIN, state), the buyer (name, address, GSTIN when
// registered, state), number and date (IST), place of supply (state name and code), the lines
// (description, SAC, quantity, taxable value), the tax heads with rate and amount, the total and
// the total in words (Indian numbering), and "This is a computer-generated invoice". A credit
// note names the invoice it reduces. An IRN is printed when the document has one (e-invoicing
// is not built, so none has yet). Amounts are ₹ with Indian grouping.
//
// Everything printed comes from the invoice row as issued (buyer and seller were frozen then),
// so a PDF never changes, and its metadata dates are the issue time: the same invoice renders to
// the same bytes. Drawing helpers: pdf-sheet.ts; the tables: invoice-pdf-tables.ts; the words and
// numbers printed: invoice-format.ts.

import type { Invoice, InvoiceParty } from '../../db/tables.ts';
import { documentTitle, type InvoiceDocument, intraState, istDate, percentOf, stateLabel } from './invoice-format.ts';
import { drawLines, drawTotals, drawWords } from './invoice-pdf-tables.ts';
import {
  ACCENT,
  createDocument,
  Flow,
  finish,
  LEFT,
  MARGIN,
  MUTED,
  RIGHT,
  RULE,
  SHADE,
  type Sheet,
  TOP,
} from './pdf-sheet.ts';

/** The seller's block (left) and the title with number and date (right); returns the y below both. */
function drawHeader(sheet: Sheet, doc: InvoiceDocument, top: number): number {
  const { invoice } = doc;
  const seller = invoice.seller;
  let left = top - 16;
  sheet.text(seller.legal_name, LEFT, left, { size: 15, bold: true });
  left -= 15;
  if (seller.address) left = sheet.paragraph(seller.address, LEFT, left, 285, { size: 9, color: MUTED });
  if (seller.gstin) {
    sheet.text('GSTIN', LEFT, left, { size: 9, color: MUTED });
    sheet.text(seller.gstin, LEFT + 44, left, { size: 9, bold: true });
    left -= 12.5;
  }
  if (seller.state_code) {
    sheet.text('State', LEFT, left, { size: 9, color: MUTED });
    sheet.text(stateLabel(seller.state_code), LEFT + 44, left, { size: 9 });
    left -= 12.5;
  }

  let right = top - 20;
  sheet.textRight(documentTitle(invoice), RIGHT, right, { size: 21, bold: true, color: ACCENT });
  right -= 22;
  const rows: [string, string][] = [
    [invoice.kind === 'credit_note' ? 'Credit note no.' : 'Invoice no.', invoice.number],
    ['Date', istDate(invoice.issued_at)],
    ['Place of supply', stateLabel(invoice.place_of_supply)],
  ];
  for (const [label, value] of rows) {
    sheet.text(label, RIGHT - 205, right, { size: 9, color: MUTED });
    sheet.textRight(value, RIGHT, right, { size: 9.5, bold: true });
    right -= 14;
  }
  return Math.min(left, right) + 2;
}

/** Full-width lines under the header: the IRN when there is one, and a credit note's original. */
function drawReferences(flow: Flow, doc: InvoiceDocument): void {
  const { sheet } = flow;
  if (doc.irn) {
    sheet.text('IRN', LEFT, flow.y - 10, { size: 8, color: MUTED });
    sheet.text(doc.irn, LEFT + 24, flow.y - 10, { size: 8 });
    flow.y -= 16;
  }
  if (doc.original !== null) {
    sheet.box(LEFT, flow.y, RIGHT - LEFT, 22, SHADE);
    const text = `Against invoice ${doc.original.number} dated ${istDate(doc.original.issued_at)}`;
    sheet.text(text, LEFT + 10, flow.y - 14.5, { size: 9.5, bold: true });
    flow.y -= 30;
  }
}

interface BlockLine {
  label?: string;
  text: string;
  bold?: boolean;
  size?: number;
}

/** The buyer as printed: name, address, GSTIN (registered buyers), state, e-mail (when no address). */
function buyerLines(buyer: InvoiceParty): BlockLine[] {
  const lines: BlockLine[] = [{ text: buyer.legal_name, bold: true, size: 10.5 }];
  if (buyer.address) lines.push({ text: buyer.address });
  if (buyer.gstin) lines.push({ label: 'GSTIN', text: buyer.gstin, bold: true });
  if (buyer.state_code) lines.push({ label: 'State', text: stateLabel(buyer.state_code) });
  if (buyer.email) lines.push({ label: 'E-mail', text: buyer.email });
  return lines;
}

function supplyLines(invoice: Invoice): BlockLine[] {
  const half = percentOf(invoice.rate_bps / 2);
  const fy = `20${invoice.fy.slice(0, 2)}-${invoice.fy.slice(2)}`;
  const intra = intraState(invoice);
  return [
    { label: 'Supply', text: `${intra ? 'Intra-state' : 'Inter-state'}, to ${stateLabel(invoice.place_of_supply)}` },
    { label: 'Tax', text: intra ? `CGST ${half} + SGST ${half}` : `IGST ${percentOf(invoice.rate_bps)}` },
    { label: 'Reverse charge', text: 'No' },
    { label: 'Financial year', text: fy },
  ];
}

interface Block {
  heading: string;
  lines: BlockLine[];
  /** Where values stand right of their labels. */
  indent: number;
  x: number;
}

/** Draw a block's lines from baseline y (or only measure them, draw = false); returns the y below. */
function blockLines(sheet: Sheet, block: Block, y: number, width: number, draw: boolean): number {
  let baseline = y;
  const x = block.x;
  for (const line of block.lines) {
    const size = line.size ?? 9;
    const indent = line.label ? block.indent : 0;
    const wrapped = sheet.wrap(line.text, width - indent, { size, bold: line.bold ?? false });
    if (draw && line.label) sheet.text(line.label, x, baseline, { size: 8.5, color: MUTED });
    for (const part of wrapped) {
      if (draw) sheet.text(part, x + indent, baseline, { size, bold: line.bold ?? false });
      baseline -= size * 1.4;
    }
  }
  return baseline;
}

/** Two shaded boxes side by side: who is billed, and how the supply is taxed. */
function drawParties(flow: Flow, invoice: Invoice): void {
  const gap = 12;
  const width = (RIGHT - LEFT - gap) / 2;
  const pad = 10;
  const blocks: Block[] = [
    {
      heading: invoice.kind === 'credit_note' ? 'Credited to' : 'Billed to',
      lines: buyerLines(invoice.buyer),
      indent: 44,
      x: LEFT,
    },
    { heading: 'Supply', lines: supplyLines(invoice), indent: 80, x: LEFT + width + gap },
  ];
  const { sheet } = flow;
  const first = flow.y - pad - 8 - 16;
  const height = Math.max(...blocks.map((block) => first - blockLines(sheet, block, first, width - 2 * pad, false)));
  const boxHeight = height + pad + 8 + 16;
  flow.need(boxHeight);
  const top = flow.y;
  for (const block of blocks) {
    sheet.box(block.x, top, width, boxHeight, SHADE);
    sheet.text(block.heading.toUpperCase(), block.x + pad, top - pad - 8, { size: 7.5, bold: true, color: ACCENT });
    blockLines(sheet, { ...block, x: block.x + pad }, top - pad - 8 - 16, width - 2 * pad, true);
  }
  flow.y = top - boxHeight - 18;
}

/** On every page: the computer-generated line, the number and the page count. */
function drawFooters(flow: Flow, invoice: Invoice): void {
  const what = invoice.kind === 'credit_note' ? 'credit note' : 'invoice';
  flow.eachPage((sheet, i, count) => {
    const y = MARGIN + 14;
    sheet.rule(LEFT, RIGHT, y + 14, RULE);
    sheet.text(`This is a computer-generated ${what} and needs no signature.`, LEFT, y, { size: 8, color: MUTED });
    sheet.textRight(`${invoice.number}  ·  Page ${i + 1} of ${count}`, RIGHT, y, { size: 8, color: MUTED });
  });
}

/** The PDF of an issued invoice or credit note. */
export async function renderInvoicePdf(doc: InvoiceDocument): Promise<Buffer> {
  const { invoice } = doc;
  const title = `${documentTitle(invoice)} ${invoice.number}`;
  const { pdf, fonts } = await createDocument({
    title,
    author: invoice.seller.legal_name,
    subject: `${title} issued to ${invoice.buyer.legal_name}`,
    date: invoice.issued_at,
  });
  const flow = new Flow(pdf, fonts.covers);
  flow.y = drawHeader(flow.sheet, doc, TOP) - 8;
  flow.sheet.rule(LEFT, RIGHT, flow.y, ACCENT, 1.5);
  flow.y -= 12;
  drawReferences(flow, doc);
  drawParties(flow, invoice);
  drawLines(flow, invoice);
  drawTotals(flow, invoice);
  drawWords(flow, invoice);
  drawFooters(flow, invoice);
  return finish(pdf);
}

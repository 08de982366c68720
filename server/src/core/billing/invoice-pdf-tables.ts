// The tables of an invoice's PDF (invoice-pdf.ts): the lines (description, SAC, quantity, taxable
// value), the tax heads beside the totals, and the total in words. Each starts at flow.y and
// leaves flow.y below itself; the lines table goes on over pages, its header repeated.

import type { Invoice } from '../../db/tables.ts';
import { amountInWords } from './gst.ts';
import { intraState, percentOf, rupees } from './invoice-format.ts';
import { ACCENT, type Flow, LEFT, MUTED, RIGHT, RULE, SHADE, WHITE } from './pdf-sheet.ts';

const COL = {
  index: LEFT + 8,
  description: LEFT + 30,
  sac: RIGHT - 200,
  qtyRight: RIGHT - 118,
  amountRight: RIGHT - 10,
};
const DESCRIPTION_WIDTH = COL.sac - COL.description - 14;
const HEADER_HEIGHT = 20;

function drawLinesHeader(flow: Flow): void {
  const { sheet } = flow;
  const style = { size: 8.5, bold: true, color: WHITE };
  sheet.box(LEFT, flow.y, RIGHT - LEFT, HEADER_HEIGHT, ACCENT);
  const baseline = flow.y - 13.5;
  sheet.text('#', COL.index, baseline, style);
  sheet.text('Description', COL.description, baseline, style);
  sheet.text('SAC', COL.sac, baseline, style);
  sheet.textRight('Qty', COL.qtyRight, baseline, style);
  sheet.textRight('Taxable value', COL.amountRight, baseline, style);
  flow.y -= HEADER_HEIGHT;
}

/** The lines of the invoice, one row each; a row that does not fit starts a new page. */
export function drawLines(flow: Flow, invoice: Invoice): void {
  flow.need(HEADER_HEIGHT + 40);
  drawLinesHeader(flow);
  const leading = 12.6;
  invoice.lines.forEach((line, i) => {
    const wrapped = flow.sheet.wrap(line.description, DESCRIPTION_WIDTH, { size: 9.5 });
    const height = 9 + Math.max(1, wrapped.length) * leading + 4;
    if (flow.need(height)) drawLinesHeader(flow);
    const { sheet } = flow;
    const first = flow.y - 9 - 9.5;
    sheet.text(String(i + 1), COL.index, first, { size: 9.5, color: MUTED });
    wrapped.forEach((part, n) => {
      sheet.text(part, COL.description, first - n * leading, { size: 9.5 });
    });
    sheet.text(line.sac, COL.sac, first, { size: 9.5 });
    sheet.textRight(String(line.quantity), COL.qtyRight, first, { size: 9.5 });
    sheet.textRight(rupees(line.taxable_paise), COL.amountRight, first, { size: 9.5 }, 100);
    flow.y -= height;
    sheet.rule(LEFT, RIGHT, flow.y, RULE);
  });
  flow.y -= 16;
}

/** The heads charged: CGST and SGST at half the rate each within the state, else IGST at the rate. */
function taxHeads(invoice: Invoice): [string, string, string][] {
  if (intraState(invoice)) {
    const half = percentOf(invoice.rate_bps / 2);
    return [
      ['CGST', half, rupees(invoice.cgst_paise)],
      ['SGST', half, rupees(invoice.sgst_paise)],
    ];
  }
  return [['IGST', percentOf(invoice.rate_bps), rupees(invoice.igst_paise)]];
}

const ROW = 19;

/** The tax table (left) and the totals (right), side by side. */
export function drawTotals(flow: Flow, invoice: Invoice): void {
  const heads = taxHeads(invoice);
  flow.need(Math.max((heads.length + 1) * ROW, 3 * ROW + 8) + 12);
  const { sheet } = flow;
  const top = flow.y;

  // Tax table: head, rate, taxable value, amount.
  const tax = { left: LEFT, rate: LEFT + 62, onRight: LEFT + 192, amountRight: LEFT + 282 };
  const column = 92;
  sheet.box(tax.left, top, tax.amountRight + 8 - tax.left, ROW, SHADE);
  const head = { size: 8.5, bold: true, color: MUTED };
  sheet.text('Tax', tax.left + 8, top - 13, head);
  sheet.text('Rate', tax.rate, top - 13, head);
  sheet.textRight('Taxable value', tax.onRight, top - 13, head);
  sheet.textRight('Amount', tax.amountRight, top - 13, head);
  heads.forEach(([name, rate, amount], i) => {
    const baseline = top - ROW * (i + 1) - 13;
    sheet.text(name, tax.left + 8, baseline, { size: 9.5, bold: true });
    sheet.text(rate, tax.rate, baseline, { size: 9.5 });
    sheet.textRight(rupees(invoice.taxable_paise), tax.onRight, baseline, { size: 9.5 }, column);
    sheet.textRight(amount, tax.amountRight, baseline, { size: 9.5 }, column - 12);
    sheet.rule(tax.left, tax.amountRight + 8, top - ROW * (i + 2), RULE);
  });

  // Totals: taxable value, total tax, and the total on the accent bar.
  const box = { left: RIGHT - 200, right: RIGHT - 10 };
  const taxTotal = BigInt(invoice.cgst_paise) + BigInt(invoice.sgst_paise) + BigInt(invoice.igst_paise);
  const rows: [string, string][] = [
    ['Taxable value', rupees(invoice.taxable_paise)],
    [`Total tax (${percentOf(invoice.rate_bps)})`, rupees(taxTotal)],
  ];
  rows.forEach(([label, value], i) => {
    const baseline = top - ROW * i - 13;
    sheet.text(label, box.left + 10, baseline, { size: 9.5, color: MUTED });
    sheet.textRight(value, box.right, baseline, { size: 9.5 }, 100);
  });
  const barTop = top - ROW * rows.length - 4;
  sheet.box(box.left, barTop, RIGHT - box.left, ROW + 6, ACCENT);
  sheet.text(invoice.kind === 'credit_note' ? 'Total credit' : 'Total', box.left + 10, barTop - 16.5, {
    size: 11,
    bold: true,
    color: WHITE,
  });
  sheet.textRight(rupees(invoice.total_paise), box.right, barTop - 16.5, { size: 12, bold: true, color: WHITE }, 110);

  flow.y = Math.min(top - ROW * (heads.length + 1), barTop - ROW - 6) - 16;
}

/** The total in words, Indian numbering, in a shaded band. */
export function drawWords(flow: Flow, invoice: Invoice): void {
  const words = amountInWords(BigInt(invoice.total_paise));
  const style = { size: 10, bold: true };
  const lines = flow.sheet.wrap(words, RIGHT - LEFT - 20, style);
  const height = 10 + 12 + lines.length * 14 + 6;
  flow.need(height);
  const { sheet } = flow;
  sheet.box(LEFT, flow.y, RIGHT - LEFT, height, SHADE);
  sheet.text('Amount in words', LEFT + 10, flow.y - 16, { size: 8.5, color: MUTED });
  lines.forEach((line, i) => {
    sheet.text(line, LEFT + 10, flow.y - 32 - i * 14, style);
  });
  flow.y -= height + 14;
}

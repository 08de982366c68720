// Drawing on A4 pages with the bundled Noto Sans (server/assets/fonts, SIL OFL 1.1), through
// pdfkit: text in two weights, wrapped to a width, aligned left or right; rules and filled boxes.
// The font has the rupee sign (U+20B9), which none of the PDF standard fonts has, and pdfkit
// embeds only the glyphs used. Coordinates here are PDF points from the bottom-left corner (as
// the PDF itself counts them), turned into pdfkit's top-left ones below; the invoice layout
// (invoice-pdf.ts) works top-down with `y` as the baseline of the line it draws.

import { readFile } from 'node:fs/promises';
import type * as fontkit from 'fontkit';
import type PDFDocument from 'pdfkit';
import { onFirstUse } from '../on-first-use.ts';

/** pdfkit and fontkit, loaded at the first document (core/on-first-use.ts). */
const pdfkit = onFirstUse<typeof PDFDocument>('pdfkit');
const fontkitLib = onFirstUse<typeof fontkit>('fontkit');

/** A4 in points (210 × 297 mm). */
export const A4: [number, number] = [595.28, 841.89];

export const INK = '#21262f';
export const MUTED = '#616977';
export const ACCENT = '#1a3d73';
export const RULE = '#cdd3dc';
export const SHADE = '#f1f4f9';
export const WHITE = '#ffffff';

const FONT_DIR = new URL('../../../assets/fonts/', import.meta.url);

interface FontFiles {
  /** Parsed once per process and shared by every document (pdfkit takes a fontkit font as it is). */
  regular: fontkit.Font;
  bold: fontkit.Font;
  /** Whether the font draws a code point (both weights have the same repertoire). */
  covers: (codePoint: number) => boolean;
}

let fontFiles: Promise<FontFiles> | null = null;

function parse(bytes: Buffer, name: string): fontkit.Font {
  const font = fontkitLib().create(bytes);
  if (!('layout' in font)) throw new Error(`${name} is a font collection, not a font`);
  return font;
}

/**
 * The fonts, read and parsed once per process: parsing Noto Sans (its layout tables cover many
 * scripts) costs far more than drawing an invoice, so documents share the parsed fonts; each
 * document still subsets them for itself.
 */
function loadFontFiles(): Promise<FontFiles> {
  fontFiles ??= (async () => {
    const [regular, bold] = await Promise.all([
      readFile(new URL('NotoSans-Regular.ttf', FONT_DIR)),
      readFile(new URL('NotoSans-Bold.ttf', FONT_DIR)),
    ]);
    const face = parse(regular, 'NotoSans-Regular.ttf');
    return {
      regular: face,
      bold: parse(bold, 'NotoSans-Bold.ttf'),
      covers: (codePoint: number) => face.hasGlyphForCodePoint(codePoint),
    };
  })().catch((error: unknown) => {
    fontFiles = null;
    throw error;
  });
  return fontFiles;
}

export interface DocumentInfo {
  title: string;
  author: string;
  subject: string;
  /** Creation and modification date: fixed (the issue time), so the same document makes the same bytes. */
  date: Date;
}

/** A new A4 document with both weights registered, its pages kept until `finish` (for footers). */
export async function createDocument(info: DocumentInfo): Promise<{ pdf: PDFKit.PDFDocument; fonts: FontFiles }> {
  const fonts = await loadFontFiles();
  const PDF = pdfkit();
  const pdf = new PDF({
    size: 'A4',
    margin: 0,
    autoFirstPage: false,
    bufferPages: true,
    displayTitle: true,
    lang: 'en-IN',
    info: {
      Title: info.title,
      Author: info.author,
      Subject: info.subject,
      Creator: 'Hostplane',
      Producer: 'Hostplane (PDFKit)',
      CreationDate: info.date,
      ModDate: info.date,
    },
  });
  // pdfkit takes a parsed fontkit font (anything with layout()); its types know only files and bytes.
  pdf.registerFont('regular', fonts.regular as unknown as Buffer);
  pdf.registerFont('bold', fonts.bold as unknown as Buffer);
  return { pdf, fonts };
}

/** End the document and collect its bytes. */
export function finish(pdf: PDFKit.PDFDocument): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    pdf.on('data', (chunk: Buffer) => chunks.push(chunk));
    pdf.on('end', () => resolve(Buffer.concat(chunks)));
    pdf.on('error', reject);
    pdf.end();
  });
}

export interface TextStyle {
  size?: number;
  bold?: boolean;
  color?: string;
}

const FORMAT_OR_CONTROL = /[\p{Cc}\p{Cf}\u2028\u2029]+/gu;

/** The page being drawn of a document (pdfkit draws on its current page). */
export class Sheet {
  readonly pdf: PDFKit.PDFDocument;
  readonly #covers: (codePoint: number) => boolean;

  constructor(pdf: PDFKit.PDFDocument, covers: (codePoint: number) => boolean) {
    this.pdf = pdf;
    this.#covers = covers;
  }

  /**
   * What the fonts can draw of `text` as one line: control and format characters (line breaks,
   * bidi controls) become spaces, a character the font lacks becomes '?', so a buyer's name
   * never draws as empty boxes nor reorders the line.
   */
  printable(text: string): string {
    let out = '';
    for (const char of text.replace(FORMAT_OR_CONTROL, ' ')) {
      out += this.#covers(char.codePointAt(0) ?? 0) ? char : '?';
    }
    return out;
  }

  #use(style: TextStyle): PDFKit.PDFDocument {
    return this.pdf.font(style.bold ? 'bold' : 'regular').fontSize(style.size ?? 9);
  }

  width(text: string, style: TextStyle = {}): number {
    return this.#use(style).widthOfString(this.printable(text));
  }

  /** Draw one line starting at x, on baseline y. */
  text(text: string, x: number, y: number, style: TextStyle = {}): void {
    const printable = this.printable(text);
    if (printable.trim() === '') return;
    this.#use(style)
      .fillColor(style.color ?? INK)
      .text(printable, x, A4[1] - y, { lineBreak: false, baseline: 'alphabetic' });
  }

  /**
   * Draw one line ending at `right`; with `maxWidth`, a line wider than that is drawn smaller
   * until it fits (an amount of crores in a column sized for lakhs), never over its neighbour.
   */
  textRight(text: string, right: number, y: number, style: TextStyle = {}, maxWidth?: number): void {
    let fitted = style;
    if (maxWidth !== undefined) {
      const size = style.size ?? 9;
      const width = this.width(text, style);
      if (width > maxWidth) fitted = { ...style, size: Math.max(5, Math.floor((size * maxWidth * 10) / width) / 10) };
    }
    this.text(text, right - this.width(text, fitted), y, fitted);
  }

  /** `text` broken into lines no wider than `width` (at spaces; a word longer than a line is cut). */
  wrap(text: string, width: number, style: TextStyle = {}): string[] {
    const lines: string[] = [];
    let line = '';
    for (const word of this.printable(text)
      .split(' ')
      .filter((w) => w !== '')) {
      const candidate = line === '' ? word : `${line} ${word}`;
      if (this.width(candidate, style) <= width) {
        line = candidate;
        continue;
      }
      if (line !== '') lines.push(line);
      line = word;
      while (this.width(line, style) > width && line.length > 1) {
        let cut = line.length - 1;
        while (cut > 1 && this.width(line.slice(0, cut), style) > width) cut--;
        lines.push(line.slice(0, cut));
        line = line.slice(cut);
      }
    }
    if (line !== '') lines.push(line);
    return lines;
  }

  /** Draw `text` wrapped to `width` from baseline y down; returns the baseline after the last line. */
  paragraph(text: string, x: number, y: number, width: number, style: TextStyle = {}, leading = 1.35): number {
    const step = (style.size ?? 9) * leading;
    let baseline = y;
    for (const line of this.wrap(text, width, style)) {
      this.text(line, x, baseline, style);
      baseline -= step;
    }
    return baseline;
  }

  rule(x1: number, x2: number, y: number, color: string = RULE, thickness = 0.75): void {
    this.pdf
      .moveTo(x1, A4[1] - y)
      .lineTo(x2, A4[1] - y)
      .lineWidth(thickness)
      .strokeColor(color)
      .stroke();
  }

  /** A filled box whose top edge is at `top`. */
  box(x: number, top: number, width: number, height: number, fill: string = SHADE): void {
    this.pdf
      .rect(x, A4[1] - top, width, height)
      .fillColor(fill)
      .fill();
  }
}

/** Page geometry shared by every page of a document. */
export const MARGIN = 44;
export const LEFT = MARGIN;
export const RIGHT = A4[0] - MARGIN;
export const TOP = A4[1] - MARGIN;
/** Nothing flows below this: the footer's band. */
export const FLOW_BOTTOM = MARGIN + 40;

/**
 * Content flowing down pages: `y` is where the next block starts (its top); `need` moves to a
 * new page when a block of that height would reach the footer's band.
 */
export class Flow {
  readonly sheet: Sheet;
  y = TOP;

  constructor(pdf: PDFKit.PDFDocument, covers: (codePoint: number) => boolean) {
    this.sheet = new Sheet(pdf, covers);
    pdf.addPage({ size: 'A4', margin: 0 });
  }

  /** Room for `height` points from y, on a new page when this one has too little; true when it turned. */
  need(height: number): boolean {
    if (this.y - height >= FLOW_BOTTOM || this.y === TOP) return false;
    this.sheet.pdf.addPage({ size: 'A4', margin: 0 });
    this.y = TOP;
    return true;
  }

  /** Visit every page (for the footers, drawn once the page count is known). */
  eachPage(draw: (sheet: Sheet, index: number, count: number) => void): void {
    const { start, count } = this.sheet.pdf.bufferedPageRange();
    for (let i = start; i < start + count; i++) {
      this.sheet.pdf.switchToPage(i);
      draw(this.sheet, i - start, count);
    }
  }
}

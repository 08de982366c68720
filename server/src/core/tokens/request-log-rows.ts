// The request log's buffer (request-log.ts): rows kept column by column until their batch is
// written, each column ready to become one PostgreSQL array literal of the batch's INSERT. Kept
// off the JavaScript heap as bytes and unboxed numbers, not as an object per row, because an
// entry held as objects until its batch was written outlived the young generation and cost the
// garbage collector more than the writing.

/** One call of the request log, as record() takes it. */
export interface RequestLogEntry {
  tokenId: number | null;
  accountId: number | null;
  method: string;
  path: string;
  route: string | null;
  status: number;
  ip: string | null;
  durationMs: number;
  requestId: string;
  /** When: a Date, or epoch milliseconds. */
  at: Date | number;
}

/**
 * One text column of buffered rows as the elements of a PostgreSQL array literal, in UTF-8 bytes:
 * `"text",NULL`. ASCII is copied byte by byte here, since a `Buffer.write` per value is a call
 * into C++ each; the rest goes through it.
 */
class TextColumn {
  #bytes = Buffer.allocUnsafe(16 * 1024);
  #length = 0;
  #count = 0;
  #room(bytes: number): void {
    if (this.#length + bytes <= this.#bytes.length) return;
    const grown = Buffer.allocUnsafe(Math.max(this.#bytes.length * 2, this.#length + bytes));
    this.#bytes.copy(grown, 0, 0, this.#length);
    this.#bytes = grown;
  }
  push(value: string | null): void {
    // A UTF-8 character is at most 3 bytes per UTF-16 unit (an escaped ASCII one 2); the
    // separator and the quotes add 3.
    this.#room(value === null ? 5 : value.length * 3 + 3);
    const bytes = this.#bytes;
    if (this.#count++ > 0) bytes[this.#length++] = 0x2c; // ,
    if (value === null) {
      this.#length += bytes.write('NULL', this.#length, 'latin1');
      return;
    }
    let at = this.#length;
    bytes[at++] = 0x22; // "
    for (let i = 0; i < value.length; i++) {
      const c = value.charCodeAt(i);
      if (c >= 0x80) {
        // The rest, escaped, as UTF-8.
        at += bytes.write(value.slice(i).replace(/[\\"]/g, '\\$&'), at, 'utf8');
        break;
      }
      if (c === 0x22 || c === 0x5c) bytes[at++] = 0x5c; // a backslash before " and \
      bytes[at++] = c;
    }
    bytes[at++] = 0x22;
    this.#length = at;
  }
  /** The literal: `{…}`. */
  literal(): string {
    return `{${this.#bytes.toString('utf8', 0, this.#length)}}`;
  }
  clear(): void {
    this.#length = 0;
    this.#count = 0;
    // A burst's buffer is not kept for ever.
    if (this.#bytes.length > 1024 * 1024) this.#bytes = Buffer.allocUnsafe(16 * 1024);
  }
}

/** One number column of buffered rows, unboxed; NaN stands for NULL (and so do infinities). */
class NumberColumn {
  #values = new Float64Array(1024);
  push(index: number, value: number | null): void {
    if (index === this.#values.length) {
      const grown = new Float64Array(this.#values.length * 2);
      grown.set(this.#values);
      this.#values = grown;
    }
    this.#values[index] = value === null ? Number.NaN : value;
  }
  /** The first `count` values as an array literal: `{12,NULL}`. */
  literal(count: number): string {
    let text = '{';
    for (let i = 0; i < count; i++) {
      const value = this.#values[i] as number;
      text += `${i > 0 ? ',' : ''}${Number.isFinite(value) ? value : 'NULL'}`;
    }
    return `${text}}`;
  }
  clear(): void {
    // A burst's array is not kept for ever.
    if (this.#values.length > 64 * 1024) this.#values = new Float64Array(1024);
  }
}

/**
 * A column of few distinct texts (methods, route patterns): each row holds the index of its
 * text in the batch's own list, and the texts are written once each when the batch is.
 */
class ChoiceColumn {
  #texts: (string | null)[] = [];
  #index = new Map<string | null, number>();
  readonly #rows = new NumberColumn();
  push(index: number, value: string | null): void {
    let choice = this.#index.get(value);
    if (choice === undefined) {
      choice = this.#texts.length;
      this.#texts.push(value);
      this.#index.set(value, choice);
    }
    this.#rows.push(index, choice + 1);
  }
  /** The texts (`{"GET","POST"}`) and the rows' 1-based positions in them (`{1,1,2}`). */
  literals(count: number): { texts: string; rows: string } {
    const texts = new TextColumn();
    for (const text of this.#texts) texts.push(text);
    return { texts: texts.literal(), rows: this.#rows.literal(count) };
  }
  clear(): void {
    this.#texts = [];
    this.#index.clear();
    this.#rows.clear();
  }
}

/** Buffered rows, column by column. */
export class Rows {
  length = 0;
  readonly tokenId = new NumberColumn();
  readonly accountId = new NumberColumn();
  readonly method = new ChoiceColumn();
  readonly path = new TextColumn();
  readonly route = new ChoiceColumn();
  readonly status = new NumberColumn();
  readonly ip = new TextColumn();
  readonly durationMs = new NumberColumn();
  readonly requestId = new TextColumn();
  /** Epoch milliseconds. */
  readonly at = new NumberColumn();
  push(e: RequestLogEntry, at: number): void {
    const i = this.length++;
    this.tokenId.push(i, e.tokenId);
    this.accountId.push(i, e.accountId);
    this.method.push(i, e.method);
    this.path.push(e.path.length > 500 ? e.path.slice(0, 500) : e.path);
    this.route.push(i, e.route);
    this.status.push(i, e.status);
    this.ip.push(e.ip);
    this.durationMs.push(i, Math.round(e.durationMs * 100) / 100);
    this.requestId.push(e.requestId);
    this.at.push(i, at);
  }
  clear(): void {
    this.length = 0;
    for (const column of [
      this.tokenId,
      this.accountId,
      this.method,
      this.path,
      this.route,
      this.status,
      this.ip,
      this.durationMs,
      this.requestId,
      this.at,
    ])
      column.clear();
  }
}

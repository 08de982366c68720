// A small streaming multipart/form-data parser: fed chunk by chunk, it finds boundaries across
// chunk edges and hands each part's body to its sink as it arrives, never holding more than one
// chunk plus a boundary's length of unparsed input.

export interface PartHeaders {
  name: string;
  filename: string | null;
  contentType: string | null;
}

export interface PartSink {
  data(chunk: Buffer): void;
  end(): void;
}

const CRLF = Buffer.from('\r\n');
const HEADER_END = Buffer.from('\r\n\r\n');
const MAX_HEADER = 16 * 1024;

/** The boundary of a multipart/form-data content type, or null. */
export function boundaryOf(contentType: string | undefined): string | null {
  const m = /^multipart\/form-data\b.*?;\s*boundary=(?:"([^"]+)"|([^\s;]+))/i.exec(contentType ?? '');
  return m ? (m[1] ?? m[2] ?? null) : null;
}

function parseHeaders(text: string): PartHeaders {
  let name = '';
  let filename: string | null = null;
  let contentType: string | null = null;
  for (const line of text.split('\r\n')) {
    const cut = line.indexOf(':');
    if (cut === -1) continue;
    const key = line.slice(0, cut).trim().toLowerCase();
    const value = line.slice(cut + 1).trim();
    if (key === 'content-type') contentType = value;
    if (key !== 'content-disposition') continue;
    const n = /(?:^|;)\s*name="((?:[^"\\]|\\.)*)"/i.exec(value);
    if (n) name = n[1] ?? '';
    const f = /(?:^|;)\s*filename="((?:[^"\\]|\\.)*)"/i.exec(value);
    if (f) filename = (f[1] ?? '').replace(/\\(.)/g, '$1');
  }
  return { name, filename, contentType };
}

export class MultipartParser {
  private readonly delimiter: Buffer;
  private buffer: Buffer;
  private state: 'preamble' | 'after' | 'headers' | 'body' | 'done' = 'preamble';
  private sink: PartSink | null = null;
  private readonly onPart: (headers: PartHeaders) => PartSink;

  constructor(boundary: string, onPart: (headers: PartHeaders) => PartSink) {
    this.delimiter = Buffer.from(`\r\n--${boundary}`);
    // A leading CRLF lets the first boundary match the same delimiter as the others.
    this.buffer = Buffer.from(CRLF);
    this.onPart = onPart;
  }

  get finished(): boolean {
    return this.state === 'done';
  }

  /** Feed a chunk; throws on malformed input. */
  write(chunk: Buffer): void {
    if (this.state === 'done') return;
    this.buffer = this.buffer.length === 0 ? chunk : Buffer.concat([this.buffer, chunk]);
    for (;;) {
      if (this.state === 'preamble' || this.state === 'body') {
        const at = this.buffer.indexOf(this.delimiter);
        if (at === -1) {
          const keep = this.delimiter.length - 1;
          if (this.buffer.length > keep) {
            const flush = this.buffer.subarray(0, this.buffer.length - keep);
            if (this.state === 'body') this.sink?.data(Buffer.from(flush));
            this.buffer = Buffer.from(this.buffer.subarray(this.buffer.length - keep));
          }
          return;
        }
        if (this.state === 'body') {
          if (at > 0) this.sink?.data(Buffer.from(this.buffer.subarray(0, at)));
          this.sink?.end();
          this.sink = null;
        }
        this.buffer = this.buffer.subarray(at + this.delimiter.length);
        this.state = 'after';
      }
      if (this.state === 'after') {
        if (this.buffer.length < 2) return;
        const two = this.buffer.subarray(0, 2).toString('latin1');
        if (two === '--') {
          this.state = 'done';
          this.buffer = Buffer.alloc(0);
          return;
        }
        // Transport padding (spaces/tabs) may follow a boundary before its CRLF.
        const eol = this.buffer.indexOf(CRLF);
        if (eol === -1) return;
        if (this.buffer.subarray(0, eol).toString('latin1').trim() !== '')
          throw new Error('malformed multipart boundary');
        this.buffer = this.buffer.subarray(eol + 2);
        this.state = 'headers';
      }
      if (this.state === 'headers') {
        const end = this.buffer.indexOf(HEADER_END);
        if (end === -1) {
          if (this.buffer.length > MAX_HEADER) throw new Error('multipart headers too large');
          return;
        }
        const headers = parseHeaders(this.buffer.subarray(0, end).toString('utf8'));
        this.buffer = this.buffer.subarray(end + HEADER_END.length);
        this.sink = this.onPart(headers);
        this.state = 'body';
      }
    }
  }

  /** The input ended: true when the closing boundary was seen. */
  end(): boolean {
    if (this.state !== 'done' && this.sink) {
      this.sink.end();
      this.sink = null;
    }
    return this.state === 'done';
  }
}

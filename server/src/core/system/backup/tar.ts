// The container of an installation backup: a POSIX ustar archive (what `tar` reads), written
// and read as a stream so a database dump of any size never has to fit in memory. Only what a
// backup holds is supported: regular files with relative names of plain segments; sizes past
// 8 GiB use the base-256 size field GNU tar and bsdtar read. Anything else is refused as corrupt.

import { once } from 'node:events';
import type { Writable } from 'node:stream';
import { BackupError } from './errors.ts';

const BLOCK = 512;
const ZEROS = Buffer.alloc(BLOCK * 2);
/** The largest size the 11 octal digits of the size field hold. */
const OCTAL_SIZE_LIMIT = 8 ** 11;

/** A name a backup entry may have: `a/b/c`, every segment plain (no `.`, `..`, backslash or NUL). */
export function safeEntryName(name: string): boolean {
  if (name === '' || name.length > 255 || name.startsWith('/') || /[\\\0]/.test(name)) return false;
  return name.split('/').every((segment) => segment !== '' && segment !== '.' && segment !== '..');
}

function octal(header: Buffer, offset: number, length: number, value: number): void {
  header.write(`${value.toString(8).padStart(length - 1, '0')}\0`, offset, length, 'latin1');
}

/** The 512-byte ustar header of a regular file. */
export function fileHeader(name: string, size: number, mtime: Date): Buffer {
  if (!safeEntryName(name)) throw new Error(`not a backup entry name: ${name}`);
  const header = Buffer.alloc(BLOCK);
  let prefix = '';
  let base = name;
  if (Buffer.byteLength(name) > 100) {
    // ustar splits a long name at a slash: prefix (≤ 155 bytes) / name (≤ 100 bytes).
    const cut = name.lastIndexOf('/', name.length - 1);
    prefix = name.slice(0, cut);
    base = name.slice(cut + 1);
    if (cut <= 0 || Buffer.byteLength(prefix) > 155 || Buffer.byteLength(base) > 100)
      throw new Error(`name too long for the archive: ${name}`);
  }
  header.write(base, 0, 100, 'utf8');
  octal(header, 100, 8, 0o600);
  octal(header, 108, 8, 0);
  octal(header, 116, 8, 0);
  if (size < OCTAL_SIZE_LIMIT) octal(header, 124, 12, size);
  else {
    header[124] = 0x80;
    header.writeBigUInt64BE(BigInt(size), 128);
  }
  octal(header, 136, 12, Math.floor(mtime.getTime() / 1000));
  header.write('0', 156, 1, 'latin1');
  header.write('ustar\0', 257, 6, 'latin1');
  header.write('00', 263, 2, 'latin1');
  header.write(prefix, 345, 155, 'utf8');
  header.fill(0x20, 148, 156);
  let sum = 0;
  for (const byte of header) sum += byte;
  header.write(`${sum.toString(8).padStart(6, '0')}\0 `, 148, 8, 'latin1');
  return header;
}

/** Writes entries to `out` (a gzip stream), honouring its back-pressure. */
export class TarWriter {
  readonly #out: Writable;
  readonly #mtime: Date;

  constructor(out: Writable, mtime: Date) {
    this.#out = out;
    this.#mtime = mtime;
  }

  async #write(chunk: Buffer): Promise<void> {
    if (!this.#out.write(chunk)) await once(this.#out, 'drain');
  }

  /** One entry of `size` bytes taken from `chunks`; fails when they are not exactly `size` bytes. */
  async add(name: string, size: number, chunks: AsyncIterable<Buffer> | Buffer[]): Promise<void> {
    await this.#write(fileHeader(name, size, this.#mtime));
    let written = 0;
    for await (const chunk of chunks) {
      written += chunk.length;
      if (written > size) throw new Error(`${name} grew while it was being archived`);
      await this.#write(chunk);
    }
    if (written !== size) throw new Error(`${name} shrank while it was being archived`);
    const padding = (BLOCK - (size % BLOCK)) % BLOCK;
    if (padding > 0) await this.#write(ZEROS.subarray(0, padding));
  }

  /** The end-of-archive marker (two zero blocks). */
  async finish(): Promise<void> {
    await this.#write(ZEROS);
  }
}

export interface TarEntry {
  name: string;
  size: number;
}

/** Reads exactly the bytes asked for from a stream of chunks. */
class ByteReader {
  readonly #source: AsyncIterator<Buffer>;
  #chunks: Buffer[] = [];
  #length = 0;

  constructor(source: AsyncIterable<Buffer>) {
    this.#source = source[Symbol.asyncIterator]();
  }

  /** True when at least `n` bytes are waiting (reading more as needed); false at the end. */
  async #fill(n: number): Promise<boolean> {
    while (this.#length < n) {
      const next = await this.#source.next();
      if (next.done) return false;
      const chunk = Buffer.isBuffer(next.value) ? next.value : Buffer.from(next.value);
      this.#chunks.push(chunk);
      this.#length += chunk.length;
    }
    return true;
  }

  #take(n: number): Buffer {
    const whole = this.#chunks.length === 1 ? (this.#chunks[0] as Buffer) : Buffer.concat(this.#chunks);
    const taken = whole.subarray(0, n);
    const rest = whole.subarray(n);
    this.#chunks = rest.length > 0 ? [rest] : [];
    this.#length = rest.length;
    return taken;
  }

  /** Exactly `n` bytes, or null when the stream ends first. */
  async read(n: number): Promise<Buffer | null> {
    return (await this.#fill(n)) ? this.#take(n) : null;
  }

  /**
   * The next `n` bytes as they arrive (throws when the stream ends first), as an iterable that
   * keeps its place when a loop over it stops early: `rest()` then skips what is left.
   */
  section(n: number): { body: AsyncIterable<Buffer>; rest(): Promise<void> } {
    let left = n;
    const next = async (): Promise<IteratorResult<Buffer>> => {
      if (left === 0) return { done: true, value: undefined };
      if (!(await this.#fill(1))) throw truncated();
      const first = this.#chunks[0] as Buffer;
      const part = this.#take(Math.min(left, first.length));
      left -= part.length;
      return { done: false, value: part };
    };
    const iterator: AsyncIterator<Buffer> = { next, return: async () => ({ done: true, value: undefined }) };
    return {
      body: { [Symbol.asyncIterator]: () => iterator },
      async rest() {
        while (!(await next()).done) {
          // skipped
        }
      },
    };
  }
}

const truncated = () => new BackupError('backup_corrupt', 'the backup file is truncated');
const corrupt = (why: string) => new BackupError('backup_corrupt', `the backup file is damaged: ${why}`);

function field(header: Buffer, offset: number, length: number): string {
  const raw = header.subarray(offset, offset + length);
  const end = raw.indexOf(0);
  return raw.subarray(0, end === -1 ? length : end).toString('utf8');
}

function numberField(header: Buffer, offset: number, length: number): number {
  if ((header[offset] as number) & 0x80) {
    const value = header.readBigUInt64BE(offset + length - 8);
    if (value > BigInt(Number.MAX_SAFE_INTEGER)) throw corrupt('an entry is too large');
    return Number(value);
  }
  const text = field(header, offset, length).trim();
  if (!/^[0-7]*$/.test(text)) throw corrupt('a header field is not a number');
  return text === '' ? 0 : Number.parseInt(text, 8);
}

function parseHeader(header: Buffer): TarEntry {
  let sum = 0;
  for (let i = 0; i < BLOCK; i++) sum += i >= 148 && i < 156 ? 0x20 : (header[i] as number);
  if (numberField(header, 148, 8) !== sum) throw corrupt('a header checksum does not match');
  const type = String.fromCharCode(header[156] as number);
  const prefix = field(header, 345, 155);
  const base = field(header, 0, 100);
  const name = prefix === '' ? base : `${prefix}/${base}`;
  if (type !== '0' && type !== '\0') throw corrupt(`${JSON.stringify(name)} is not a regular file`);
  if (!safeEntryName(name)) throw corrupt(`an entry has the name ${JSON.stringify(name)}`);
  return { name, size: numberField(header, 124, 12) };
}

/**
 * Read a ustar archive entry by entry: `onEntry` gets each entry and its bytes, which it may
 * read or leave (what it leaves is skipped). Throws BackupError(backup_corrupt) on a bad header,
 * an unsupported entry, or an archive that ends early.
 */
export async function readTar(
  source: AsyncIterable<Buffer>,
  onEntry: (entry: TarEntry, body: AsyncIterable<Buffer>) => Promise<void>,
): Promise<void> {
  const reader = new ByteReader(source);
  for (;;) {
    const header = await reader.read(BLOCK);
    if (header === null) throw truncated();
    if (header.every((byte) => byte === 0)) return;
    const entry = parseHeader(header);
    const section = reader.section(entry.size);
    await onEntry(entry, section.body);
    await section.rest();
    const padding = (BLOCK - (entry.size % BLOCK)) % BLOCK;
    if (padding > 0 && (await reader.read(padding)) === null) throw truncated();
  }
}

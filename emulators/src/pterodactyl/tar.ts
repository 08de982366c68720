// A minimal ustar writer and reader (gzip-wrapped), so archives made by "compress" and by backups
// are real .tar.gz files a person can open, and "decompress" / restore read them back.

import { gunzipSync, gzipSync } from 'node:zlib';

export interface TarEntry {
  /** Relative path, no leading slash; directories without a trailing slash. */
  path: string;
  dir: boolean;
  mode: number;
  mtime: number;
  content: Buffer;
}

function octal(value: number, width: number): string {
  return `${value.toString(8).padStart(width - 1, '0')}\0`;
}

function header(entry: TarEntry): Buffer {
  const block = Buffer.alloc(512, 0);
  let name = entry.dir ? `${entry.path}/` : entry.path;
  let prefix = '';
  if (Buffer.byteLength(name) > 100) {
    const cut = name.lastIndexOf('/', name.length - 2);
    prefix = name.slice(0, Math.max(0, cut));
    name = name.slice(cut + 1);
  }
  block.write(name.slice(0, 100), 0, 'utf8');
  block.write(octal(entry.mode & 0o7777, 8), 100, 'ascii');
  block.write(octal(0, 8), 108, 'ascii');
  block.write(octal(0, 8), 116, 'ascii');
  block.write(octal(entry.dir ? 0 : entry.content.length, 12), 124, 'ascii');
  block.write(octal(Math.floor(entry.mtime / 1000), 12), 136, 'ascii');
  block.write('        ', 148, 'ascii');
  block.write(entry.dir ? '5' : '0', 156, 'ascii');
  block.write('ustar\0', 257, 'ascii');
  block.write('00', 263, 'ascii');
  block.write('container', 265, 'ascii');
  block.write('container', 297, 'ascii');
  block.write(prefix.slice(0, 155), 345, 'utf8');
  let sum = 0;
  for (const byte of block) sum += byte;
  block.write(`${sum.toString(8).padStart(6, '0')}\0 `, 148, 'ascii');
  return block;
}

/** A gzip-compressed tar of the entries, in the order given. */
export function packTarGz(entries: TarEntry[]): Buffer {
  const parts: Buffer[] = [];
  for (const e of entries) {
    parts.push(header(e));
    if (!e.dir && e.content.length > 0) {
      parts.push(e.content);
      const pad = (512 - (e.content.length % 512)) % 512;
      if (pad > 0) parts.push(Buffer.alloc(pad, 0));
    }
  }
  parts.push(Buffer.alloc(1024, 0));
  return gzipSync(Buffer.concat(parts));
}

function field(block: Buffer, start: number, length: number): string {
  const raw = block.subarray(start, start + length);
  const end = raw.indexOf(0);
  return raw.subarray(0, end === -1 ? length : end).toString('utf8');
}

/** The entries of a .tar.gz (or plain .tar); throws when it is not one. */
export function unpackTar(archive: Buffer): TarEntry[] {
  let data = archive;
  if (data[0] === 0x1f && data[1] === 0x8b) data = gunzipSync(data);
  const out: TarEntry[] = [];
  let offset = 0;
  while (offset + 512 <= data.length) {
    const block = data.subarray(offset, offset + 512);
    if (block.every((b) => b === 0)) break;
    if (field(block, 257, 6) !== 'ustar' && field(block, 257, 5) !== 'ustar') throw new Error('not a tar archive');
    const name = field(block, 0, 100);
    const prefix = field(block, 345, 155);
    const size = Number.parseInt(field(block, 124, 12).trim() || '0', 8);
    const type = String.fromCharCode(block[156] ?? 48);
    const mode = Number.parseInt(field(block, 100, 8).trim() || '644', 8);
    const mtime = Number.parseInt(field(block, 136, 12).trim() || '0', 8) * 1000;
    const full = (prefix ? `${prefix}/${name}` : name).replace(/^\.?\/+/, '').replace(/\/+$/, '');
    offset += 512;
    const content = Buffer.from(data.subarray(offset, offset + size));
    offset += size + ((512 - (size % 512)) % 512);
    if (full === '' || (type !== '0' && type !== '\0' && type !== '5')) continue;
    out.push({ path: full, dir: type === '5', mode, mtime, content: type === '5' ? Buffer.alloc(0) : content });
  }
  return out;
}

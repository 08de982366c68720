// Helpers of backup-drill.test.ts: a client of a real server over HTTP (cookies, CSRF), the
// manifest of a backup file, backup files rewritten (a manifest changed, the bytes damaged), and
// the fingerprint of an installation's database read directly.

import { generateKeyPairSync } from 'node:crypto';
import { createReadStream, createWriteStream, readFileSync, writeFileSync } from 'node:fs';
import { pipeline } from 'node:stream/promises';
import { createGunzip, createGzip } from 'node:zlib';
import pg from 'pg';
import { fingerprint, MANIFEST_ENTRY, type Manifest } from '../../src/core/system/backup/manifest.ts';
import { readTar, TarWriter } from '../../src/core/system/backup/tar.ts';
import { openDatabase } from '../../src/db/database.ts';

export interface Answer {
  status: number;
  body: Record<string, unknown>;
  bytes: Buffer;
}

/** A signed-in customer of a running server: its cookies and CSRF token, as a browser keeps them. */
export class HttpClient {
  readonly cookies = new Map<string, string>();
  csrf: string | null = null;
  readonly base: string;
  constructor(base: string) {
    this.base = base;
  }

  async request(
    method: 'GET' | 'POST',
    path: string,
    body?: unknown,
    raw?: { body: Buffer; contentType: string },
  ): Promise<Answer> {
    const headers: Record<string, string> = {};
    if (this.cookies.size > 0) headers.cookie = [...this.cookies].map(([k, v]) => `${k}=${v}`).join('; ');
    if (method !== 'GET' && this.csrf) headers['x-csrf-token'] = this.csrf;
    if (body !== undefined) headers['content-type'] = 'application/json';
    if (raw) headers['content-type'] = raw.contentType;
    const res = await fetch(`${this.base}${path}`, {
      method,
      headers,
      ...(raw ? { body: new Uint8Array(raw.body) } : body === undefined ? {} : { body: JSON.stringify(body) }),
    });
    for (const line of res.headers.getSetCookie()) {
      const [pair = ''] = line.split(';');
      const at = pair.indexOf('=');
      this.cookies.set(pair.slice(0, at), pair.slice(at + 1));
    }
    const bytes = Buffer.from(await res.arrayBuffer());
    const json = (res.headers.get('content-type') ?? '').includes('json')
      ? (JSON.parse(bytes.toString('utf8')) as Record<string, unknown>)
      : {};
    if (typeof json.csrf_token === 'string') this.csrf = json.csrf_token;
    return { status: res.status, body: json, bytes };
  }

  get(path: string): Promise<Answer> {
    return this.request('GET', path);
  }

  post(path: string, body: unknown): Promise<Answer> {
    return this.request('POST', path, body);
  }

  async login(identifier: string, password: string): Promise<void> {
    await this.get('/api/v1/client/auth/csrf/');
    const res = await this.post('/api/v1/client/auth/login/', { identifier, password, csrf_token: this.csrf });
    if (res.status !== 200) throw new Error(`login: ${res.status} ${res.bytes.toString()}`);
  }
}

/** An OpenSSH ed25519 public key line. */
export function sshPublicKey(): string {
  const jwk = generateKeyPairSync('ed25519').publicKey.export({ format: 'jwk' });
  const key = Buffer.from(jwk.x as string, 'base64url');
  const part = (b: Buffer) => Buffer.concat([Buffer.from([0, 0, 0, b.length]), b]);
  return `ssh-ed25519 ${Buffer.concat([part(Buffer.from('ssh-ed25519')), part(key)]).toString('base64')} drill`;
}

/** Every entry of a backup file, in order, in memory (test backups are small). */
export async function entriesOf(file: string): Promise<{ name: string; data: Buffer }[]> {
  const gunzip = createGunzip();
  createReadStream(file).pipe(gunzip);
  const entries: { name: string; data: Buffer }[] = [];
  await readTar(gunzip, async (entry, body) => {
    const chunks: Buffer[] = [];
    for await (const chunk of body) chunks.push(chunk);
    entries.push({ name: entry.name, data: Buffer.concat(chunks) });
  });
  return entries;
}

export async function manifestOf(file: string): Promise<Manifest> {
  const first = (await entriesOf(file))[0];
  if (first?.name !== MANIFEST_ENTRY) throw new Error(`${file} has no manifest first`);
  return JSON.parse(first.data.toString('utf8')) as Manifest;
}

/**
 * A copy of backup `from` at `to` whose manifest `change` edited, the other entries unchanged (or,
 * `manifestOnly`, left out: for refusals decided on the manifest alone).
 */
export async function withManifest(
  from: { name: string; data: Buffer }[],
  to: string,
  change: (manifest: Manifest) => void,
  manifestOnly = false,
): Promise<void> {
  const [first, ...rest] = from as [{ name: string; data: Buffer }, ...{ name: string; data: Buffer }[]];
  const manifest = JSON.parse(first.data.toString('utf8')) as Manifest;
  change(manifest);
  const entries = [{ name: first.name, data: Buffer.from(JSON.stringify(manifest)) }, ...(manifestOnly ? [] : rest)];
  const gzip = createGzip({ level: 1 });
  const done = pipeline(gzip, createWriteStream(to));
  const tar = new TarWriter(gzip, new Date());
  for (const entry of entries) await tar.add(entry.name, entry.data.length, [entry.data]);
  await tar.finish();
  gzip.end();
  await done;
}

/** Copies of `file`: cut short, and with bytes in the middle overwritten. */
export function damaged(file: string, truncatedTo: string, flippedTo: string): void {
  const bytes = readFileSync(file);
  writeFileSync(truncatedTo, bytes.subarray(0, Math.floor(bytes.length / 2)));
  const flipped = Buffer.from(bytes);
  flipped.fill(0x55, Math.floor(bytes.length / 2), Math.floor(bytes.length / 2) + 64);
  writeFileSync(flippedTo, flipped);
}

export type Found = Awaited<ReturnType<typeof fingerprint>>;

/** Row counts, checksums and the installation id of an installation's database, read directly (no server on it). */
export async function fingerprintOf(target: { url: string | null; dataDir: string }): Promise<Found> {
  if (target.url !== null) {
    const client = new pg.Client({ connectionString: target.url });
    await client.connect();
    try {
      return await fingerprint(client);
    } finally {
      await client.end();
    }
  }
  const database = await openDatabase({ engine: 'pglite', dataDir: target.dataDir, role: 'backup drill test' });
  try {
    const client = await database.pool.connect();
    try {
      return await fingerprint(client);
    } finally {
      client.release();
    }
  } finally {
    await database.close();
  }
}

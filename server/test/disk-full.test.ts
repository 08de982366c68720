// Failure drill (issue 39; docs/RELIABILITY.md): the disk fills while a file is being written. The
// directories the app writes big files to are small tmpfs mounts, so the disk is really full
// (ENOSPC from the write itself), not a free-space check told to refuse:
//
//  - DATA_DIR/uploads (payment proofs and the temporary files of uploads: deposit screenshots and
//    game-file uploads, which go on to the panel from there). The database is elsewhere (the run's
//    PostgreSQL, or an in-memory PGlite), so only the upload fills the disk. The upload is admitted
//    (UPLOAD_FREE_SPACE_FLOOR_MB=0, the space was there) and then, half-way through, another writer
//    takes every byte left. The client gets 507 insufficient_storage in the session envelope, never a
//    500; no partial file remains; no deposit, activity or panel file is made; once space is freed the
//    same upload works.
//  - The staff CLI's files (`invoices pdf --out`, `invoices export --out`, `backup create FILE`) to
//    a full disk, and a backup whose DATA_DIR/backup-tmp is full: exit 1 with a message that says the
//    disk is full, and no half file, neither at the target nor in backup-tmp. The CLI's steps are
//    run as main.ts runs them (runAdmin, then writeOutputFiles) in this process.
//
// Needs `mount -t tmpfs` (root, as in CI); without it the drill is skipped with the reason.

import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  statfsSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PassThrough } from 'node:stream';
import { after, before, describe, test } from 'node:test';
import type { LightMyRequestResponse } from 'fastify';
import { writeOutputFiles } from '../src/admin/outputs.ts';
import { runAdmin } from '../src/admin/run.ts';
import { BACKUP_TEMP_DIR } from '../src/core/system/backup/data-files.ts';
import { cliRunner } from './support/cli.ts';
import { GAME, type GameClient, gameClient, panelFile } from './support/game.ts';
import { apiClient } from './support/rest.ts';
import { PNG } from './support/uploads.ts';
import { createUpstreamApp, type UpstreamApp } from './support/upstreams.ts';
import { waitFor } from './support/wait.ts';

const KIB = 1024;
const ROOT = mkdtempSync(join(tmpdir(), 'hostplane-diskfull-'));
const DATA = join(ROOT, 'data');
const UPLOADS = join(DATA, 'uploads');
const TMP = join(UPLOADS, 'tmp');
const DEPOSITS = join(UPLOADS, 'deposits');
const BACKUP_TMP = join(DATA, BACKUP_TEMP_DIR);
/** Where the staff member runs the CLI, and writes its files. */
const OUT = join(ROOT, 'out');

const mounted: string[] = [];
let skip: string | null = null;
let u: UpstreamApp | null = null;
let c: GameClient;

/** Mount a tmpfs of `kib` KiB on `dir`; null, or why it cannot be done here. */
function mountTmpfs(dir: string, kib: number): string | null {
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  try {
    execFileSync('mount', ['-t', 'tmpfs', '-o', `size=${kib}k,mode=0700`, 'tmpfs', dir], { stdio: 'pipe' });
  } catch (error) {
    const stderr = String((error as { stderr?: Buffer }).stderr ?? '')
      .replace(/\s+/g, ' ')
      .trim();
    return `cannot mount a tmpfs here (${stderr || (error as Error).message}); the drill needs root, as in CI`;
  }
  mounted.push(dir);
  return null;
}

function unmount(dir: string): void {
  try {
    execFileSync('umount', [dir], { stdio: 'pipe' });
  } catch {
    execFileSync('umount', ['-l', dir], { stdio: 'pipe' });
  }
  mounted.splice(mounted.indexOf(dir), 1);
}

before(async () => {
  skip = mountTmpfs(UPLOADS, 512) ?? mountTmpfs(OUT, 256);
  if (skip !== null) return;
  u = await createUpstreamApp({ game: true, env: { DATA_DIR: DATA, UPLOAD_FREE_SPACE_FLOOR_MB: '0' } });
  c = await gameClient(u, { order: true });
});

after(async () => {
  try {
    await u?.close();
  } finally {
    for (const dir of [...mounted].reverse()) unmount(dir);
    rmSync(ROOT, { recursive: true, force: true });
  }
});

/**
 * Another writer takes every byte left on the disk of `dir` (a file written until ENOSPC); gives
 * the function that frees it again.
 */
function fillDisk(dir: string): () => void {
  const filler = join(dir, `filler-${randomBytes(4).toString('hex')}`);
  try {
    writeFileSync(filler, Buffer.alloc(2 * 1024 * KIB, 0x66));
    assert.fail(`${dir} did not fill up`);
  } catch (error) {
    assert.equal((error as NodeJS.ErrnoException).code, 'ENOSPC', String(error));
  }
  assert.equal(statfsSync(dir).bavail, 0, 'the disk is full');
  return () => rmSync(filler, { force: true });
}

const listing = (dir: string) => (existsSync(dir) ? readdirSync(dir).sort() : []);

/** A multipart body: its fields, then one file part. */
function formOf(fields: Record<string, string>, file: { field: string; name: string; type: string }, data: Buffer) {
  const boundary = `----hostplane${randomBytes(8).toString('hex')}`;
  const head = Buffer.from(
    Object.entries(fields)
      .map(([k, v]) => `--${boundary}\r\nContent-Disposition: form-data; name="${k}"\r\n\r\n${v}\r\n`)
      .join('') +
      `--${boundary}\r\nContent-Disposition: form-data; name="${file.field}"; filename="${file.name}"\r\n` +
      `Content-Type: ${file.type}\r\n\r\n`,
  );
  const tail = Buffer.from(`\r\n--${boundary}--\r\n`);
  return { head, data, tail, contentType: `multipart/form-data; boundary=${boundary}` };
}

/**
 * Send `form` as `c`'s browser does, streamed: its first `firstBytes` of the file, then (once the
 * server has written them to its temporary file) `meanwhile()`, then the rest.
 */
async function streamUpload(
  url: string,
  form: ReturnType<typeof formOf>,
  firstBytes: number,
  meanwhile: () => void,
): Promise<LightMyRequestResponse> {
  const t = (u as UpstreamApp).t;
  const body = new PassThrough();
  const answer = t.inject({
    method: 'POST',
    url,
    headers: {
      'content-type': form.contentType,
      'content-length': String(form.head.length + form.data.length + form.tail.length),
      'x-csrf-token': c.browser.csrfToken ?? '',
      cookie: [...c.browser.cookies].map(([k, v]) => `${k}=${v}`).join('; '),
    },
    remoteAddress: c.browser.ip,
    payload: body,
  });
  let answered = false;
  const done = () => {
    answered = true;
  };
  answer.then(done, done);
  body.write(form.head);
  body.write(form.data.subarray(0, firstBytes));
  // (An answer before the bytes are written is a refusal: it is returned, nothing is waited for.)
  await waitFor(
    'the first bytes in the temporary file',
    // (The multipart parser may hold back a few bytes that could start its boundary.)
    async () =>
      answered ||
      listing(TMP).some(
        (name) => (statSync(join(TMP, name), { throwIfNoEntry: false })?.size ?? 0) >= firstBytes - KIB,
      ),
  );
  if (!answered) meanwhile();
  body.write(form.data.subarray(firstBytes));
  body.end(form.tail);
  return answer;
}

/** Send `form`, the disk filled by another writer once the first 32 KiB of its file are written. */
async function fullMidway(url: string, form: ReturnType<typeof formOf>) {
  let free: (() => void) | null = null;
  const res = await streamUpload(url, form, 32 * KIB, () => {
    free = fillDisk(UPLOADS);
  });
  assert.ok(free, `the upload was answered before the disk filled: ${res.statusCode} ${res.body}`);
  return { res, free: free as () => void };
}

function insufficientStorage(res: LightMyRequestResponse): void {
  assert.equal(res.statusCode, 507, res.body);
  const body = res.json() as Record<string, unknown>;
  assert.equal(body.success, false, res.body);
  assert.equal(body.code, 'insufficient_storage', res.body);
  assert.match(String(body.message), /disk space/, res.body);
  assert.ok(res.headers['retry-after'], 'Retry-After');
}

describe('drill: the disk fills while an upload is being written', () => {
  test('a deposit screenshot: 507 insufficient_storage, no partial file, no deposit; after space is freed it is accepted', async (t) => {
    if (skip !== null) return t.skip(skip);
    const db = (u as UpstreamApp).t.deps.database.db;
    const proof = Buffer.concat([PNG, randomBytes(128 * KIB)]);
    const txnRef = `UTRDISK${Date.now()}`;
    const form = () =>
      formOf({ amount: '250', txn_ref: txnRef }, { field: 'screenshot', name: 'proof.png', type: 'image/png' }, proof);
    const activityBefore = await db
      .selectFrom('account_activity')
      .select(db.fn.countAll<string>().as('n'))
      .where('account_id', '=', c.accountId)
      .executeTakeFirstOrThrow();

    const full = await fullMidway('/api/v1/client/wallet/deposit/', form());
    try {
      insufficientStorage(full.res);
      assert.deepEqual(listing(TMP), [], 'no partial file in uploads/tmp');
      assert.deepEqual(listing(DEPOSITS), [], 'no proof kept');
      const deposits = await db.selectFrom('deposits').selectAll().where('account_id', '=', c.accountId).execute();
      assert.deepEqual(deposits, [], 'no deposit');
      const activityAfter = await db
        .selectFrom('account_activity')
        .select(db.fn.countAll<string>().as('n'))
        .where('account_id', '=', c.accountId)
        .executeTakeFirstOrThrow();
      assert.equal(activityAfter.n, activityBefore.n, 'no activity recorded');
    } finally {
      full.free();
    }
    const again = await streamUpload('/api/v1/client/wallet/deposit/', form(), 32 * KIB, () => {});
    assert.equal(again.statusCode, 201, again.body);
    const [deposit, ...others] = await db
      .selectFrom('deposits')
      .selectAll()
      .where('account_id', '=', c.accountId)
      .execute();
    assert.deepEqual(others, []);
    assert.equal(deposit?.txn_ref, txnRef);
    assert.equal(String(deposit?.amount_paise), '25000');
    assert.equal(deposit?.status, 'pending');
    assert.deepEqual(listing(DEPOSITS), [deposit?.screenshot_file]);
    assert.deepEqual(readFileSync(join(DEPOSITS, String(deposit?.screenshot_file))), proof);
    assert.deepEqual(listing(TMP), []);
  });

  test('a game-file upload: 507 insufficient_storage, nothing on the panel, no partial file; after space is freed it is uploaded', async (t) => {
    if (skip !== null) return t.skip(skip);
    const data = randomBytes(128 * KIB);
    const url = `${GAME}?service=${c.serviceId}&action=file_upload`;
    const form = () =>
      formOf({ directory: '/' }, { field: 'file', name: 'world.bin', type: 'application/octet-stream' }, data);

    const full = await fullMidway(url, form());
    try {
      insufficientStorage(full.res);
      assert.deepEqual(listing(TMP), [], 'no partial file in uploads/tmp');
      assert.equal(panelFile(u as UpstreamApp, c.serviceId, 'world.bin'), null, 'nothing reached the panel');
    } finally {
      full.free();
    }
    const again = await streamUpload(url, form(), 32 * KIB, () => {});
    assert.equal(again.statusCode, 201, again.body);
    assert.deepEqual(panelFile(u as UpstreamApp, c.serviceId, 'world.bin'), data);
    assert.deepEqual(listing(TMP), []);
  });
});

/** A staff command line as the CLI runs it (main.ts): the command, then the files it produced. */
async function admin(...argv: string[]) {
  const deps = (u as UpstreamApp).t.deps;
  const result = await runAdmin(argv, async () => deps, 'staff:drill');
  return writeOutputFiles(result, false, OUT, BACKUP_TMP);
}

function failedDiskFull(result: { exitCode: number; stdout: string; stderr: string }): void {
  assert.equal(result.exitCode, 1, `stdout: ${result.stdout}\nstderr: ${result.stderr}`);
  assert.match(result.stderr, /^error: .*no space left on the disk/, result.stderr);
}

describe('drill: the staff CLI writes to a full disk', () => {
  test('invoices pdf, invoices export and backup create: exit 1, the disk named full, no half file; then the invoice files are written', async (t) => {
    if (skip !== null) return t.skip(skip);
    const db = (u as UpstreamApp).t.deps.database.db;
    const invoice = await db
      .selectFrom('invoices')
      .select(['number', 'issued_at'])
      .where('account_id', '=', c.accountId)
      .executeTakeFirstOrThrow();
    // The month of the invoice in India Standard Time, as the export reads it.
    const month = new Date(new Date(invoice.issued_at).getTime() + 330 * 60_000).toISOString().slice(0, 7);
    const pdf = join(OUT, 'invoice.pdf');
    const gstr1 = join(OUT, 'gstr1.json');
    const backup = join(OUT, 'backup.tar.gz');

    const free = fillDisk(OUT);
    const filler = listing(OUT);
    failedDiskFull(await admin('invoices', 'pdf', invoice.number, '--out', pdf));
    failedDiskFull(await admin('invoices', 'export', '--month', month, '--out', gstr1));
    failedDiskFull(await admin('backup', 'create', backup));
    assert.deepEqual(listing(OUT), filler, 'no file, whole or half, beside the filler');
    assert.deepEqual(listing(BACKUP_TMP), [], 'no temporary archive left in backup-tmp');

    free();
    const written = await admin('invoices', 'pdf', invoice.number, '--out', pdf);
    assert.equal(written.exitCode, 0, written.stderr);
    assert.equal(readFileSync(pdf).subarray(0, 5).toString(), '%PDF-');
    const exported = await admin('invoices', 'export', '--month', month, '--out', gstr1);
    assert.equal(exported.exitCode, 0, exported.stderr);
    const document = JSON.parse(readFileSync(gstr1, 'utf8')) as { totals: { invoices: { count: number } } };
    assert.ok(document.totals.invoices.count >= 1, "the order's invoice is in the export");

    // A backup's archive moved from backup-tmp to this other disk, now that it has room (what
    // `backup create FILE` does last): copied beside the target, then put in place; never over a file.
    const archive = randomBytes(64 * KIB);
    const move = (path: string) => {
      const tempPath = join(BACKUP_TMP, `${randomBytes(8).toString('hex')}.tar.gz`);
      mkdirSync(BACKUP_TMP, { recursive: true, mode: 0o700 });
      writeFileSync(tempPath, archive);
      const result = { exitCode: 0, stdout: '', stderr: '', files: [{ path, tempPath, exclusive: true }] };
      return writeOutputFiles(result, false, OUT, BACKUP_TMP);
    };
    assert.equal((await move('moved.tar.gz')).exitCode, 0);
    assert.deepEqual(readFileSync(join(OUT, 'moved.tar.gz')), archive);
    const again = await move('moved.tar.gz');
    assert.equal(again.exitCode, 1);
    assert.match(again.stderr, /exists already/);
    assert.deepEqual(readFileSync(join(OUT, 'moved.tar.gz')), archive);
    assert.deepEqual(listing(OUT), ['gstr1.json', 'invoice.pdf', 'moved.tar.gz'], 'no partial file left');
    assert.deepEqual(listing(BACKUP_TMP), []);
  });

  test('backup create with DATA_DIR/backup-tmp full: exit 1, the disk named full, nothing left there or at the target', async (t) => {
    if (skip !== null) return t.skip(skip);
    const reason = mountTmpfs(BACKUP_TMP, 64);
    if (reason !== null) return t.skip(reason);
    try {
      fillDisk(BACKUP_TMP);
      const filler = listing(BACKUP_TMP);
      const target = join(OUT, 'assembled.tar.gz');
      failedDiskFull(await admin('backup', 'create', target));
      assert.deepEqual(listing(BACKUP_TMP), filler, 'no half archive or dump in backup-tmp');
      assert.equal(existsSync(target), false);
    } finally {
      unmount(BACKUP_TMP);
    }
  });
});

describe("drill: the customer's CLI writes to a full disk", () => {
  test('hostplane invoices pdf --out: exit 1, the disk named full, no half PDF; then written whole', async (t) => {
    if (skip !== null) return t.skip(skip);
    const app = u as UpstreamApp;
    const token = await apiClient(app.t, ['billing.read'], '0', c.accountId);
    const url = await app.t.app.listen({ port: 0, host: '127.0.0.1' });
    const cli = cliRunner('hostplane-cli-diskfull');
    try {
      const env = { HOSTPLANE_TOKEN: token.secret, HOSTPLANE_URL: url };
      const invoice = await app.t.deps.database.db
        .selectFrom('invoices')
        .select('id')
        .where('account_id', '=', c.accountId)
        .executeTakeFirstOrThrow();
      const dir = join(OUT, 'customer');
      mkdirSync(dir, { recursive: true });
      const pdf = join(dir, 'invoice.pdf');
      const free = fillDisk(OUT);
      const refused = await cli.run(cli.home(), ['invoices', 'pdf', String(invoice.id), '--out', pdf], { env });
      assert.equal(refused.code, 1, refused.stderr);
      assert.match(refused.stderr, /no space left on the disk \(ENOSPC\); nothing was written/);
      assert.deepEqual(listing(dir), [], 'no file, whole or half');
      free();
      const written = await cli.run(cli.home(), ['invoices', 'pdf', String(invoice.id), '--out', pdf], { env });
      assert.equal(written.code, 0, written.stderr);
      assert.equal(readFileSync(pdf).subarray(0, 5).toString(), '%PDF-');
      assert.deepEqual(listing(dir), ['invoice.pdf'], 'no partial file left');
    } finally {
      cli.cleanup();
    }
  });
});

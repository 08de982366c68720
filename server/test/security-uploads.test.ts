// Security review 3, T3-M4: an upload is decided before a byte of its file is read. On the game
// route the session, the X-CSRF-Token header, the action, ownership, type and state are checked
// before the body is parsed; a deposit screenshot's token (header, or a field before the file)
// before the file part is read. Then at most 2 uploads of an account in flight, and the
// temporary directory's disk keeps a free-space floor (507 insufficient_storage).
//
// "Nothing read" is proved twice: the request body is a stream that counts what the server pulled
// from it (a 20 MiB file part generated lazily), and the temporary directory is watched (inotify)
// for any file made in it, even one removed at once.

import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { type FSWatcher, mkdirSync, readdirSync, watch, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { PassThrough, Readable } from 'node:stream';
import { after, before, describe, test } from 'node:test';
import type { LightMyRequestResponse } from 'fastify';
import type { Service, ServiceStatus } from '../src/db/tables.ts';
import { createUploadGate } from '../src/http/uploads.ts';
import type { Browser } from './support/browser.ts';
import { GAME, type GameClient, gameClient, panelFile } from './support/game.ts';
import { PNG } from './support/uploads.ts';
import { createUpstreamApp, type UpstreamApp, waitFor } from './support/upstreams.ts';

const MIB = 1024 * 1024;
const DEPOSIT = '/api/v1/client/wallet/deposit/';
const DEPOSIT_FILE = { field: 'screenshot', name: 'proof.png', type: 'image/png' };

let u: UpstreamApp;
let c: GameClient;
let other: GameClient;

before(async () => {
  u = await createUpstreamApp({ game: true });
  c = await gameClient(u, { order: true });
  other = await gameClient(u);
});
after(() => u.close());

// ---- request bodies ------------------------------------------------------------------------

interface Body {
  stream: Readable;
  contentType: string;
  length: number;
  /** Bytes the server has pulled from the body so far. */
  pulled(): number;
}

function formParts(fields: Record<string, string>, file: { field: string; name: string; type: string } | null) {
  const boundary = `----hostplane${randomBytes(8).toString('hex')}`;
  const head = Buffer.from(
    Object.entries(fields)
      .map(([k, v]) => `--${boundary}\r\nContent-Disposition: form-data; name="${k}"\r\n\r\n${v}\r\n`)
      .join('') +
      (file
        ? `--${boundary}\r\nContent-Disposition: form-data; name="${file.field}"; filename="${file.name}"\r\n` +
          `Content-Type: ${file.type}\r\n\r\n`
        : ''),
  );
  const tail = Buffer.from(`${file ? '\r\n' : ''}--${boundary}--\r\n`);
  return { head, tail, contentType: `multipart/form-data; boundary=${boundary}` };
}

/** A multipart body whose file part (`bytes` long) is generated only as the server reads it. */
function lazyBody(
  fields: Record<string, string>,
  bytes: number,
  file = { field: 'file', name: 'big.bin', type: 'application/octet-stream' },
  first: Buffer = Buffer.alloc(0),
): Body {
  const { head, tail, contentType } = formParts(fields, file);
  const chunk = Buffer.alloc(64 * 1024, 0x61);
  let pulled = 0;
  let sent = 0;
  let started = false;
  const stream = new Readable({
    read() {
      if (!started) {
        started = true;
        const opening = Buffer.concat([head, first]);
        pulled += opening.length;
        sent += first.length;
        this.push(opening);
        return;
      }
      if (sent < bytes) {
        const n = Math.min(chunk.length, bytes - sent);
        sent += n;
        pulled += n;
        this.push(n === chunk.length ? chunk : chunk.subarray(0, n));
        return;
      }
      pulled += tail.length;
      this.push(tail);
      this.push(null);
    },
  });
  return { stream, contentType, length: head.length + bytes + tail.length, pulled: () => pulled };
}

const cookieOf = (browser: Browser) => [...browser.cookies].map(([k, v]) => `${k}=${v}`).join('; ');

/** POST `body` as `browser`; the answer and how much of the body the server had pulled by then. */
async function post(
  browser: Browser,
  url: string,
  body: Body | PassThrough,
  meta: { contentType: string; length: number },
  csrf: string | null = browser.csrfToken,
): Promise<{ res: LightMyRequestResponse; pulled: number }> {
  const res = await u.t.inject({
    method: 'POST',
    url,
    headers: {
      'content-type': meta.contentType,
      'content-length': String(meta.length),
      cookie: cookieOf(browser),
      ...(csrf === null ? {} : { 'x-csrf-token': csrf }),
    },
    remoteAddress: browser.ip,
    payload: body instanceof PassThrough ? body : body.stream,
  });
  const pulled = body instanceof PassThrough ? -1 : body.pulled();
  if (!(body instanceof PassThrough)) body.stream.destroy();
  return { res, pulled };
}

const gameUpload = (serviceId: number, action = 'file_upload') => `${GAME}?service=${serviceId}&action=${action}`;

function refused(res: LightMyRequestResponse, status: number, code: string): Record<string, unknown> {
  assert.equal(res.statusCode, status, res.body);
  const body = res.json() as Record<string, unknown>;
  assert.equal(body.success, false, res.body);
  assert.equal(body.code, code, res.body);
  return body;
}

// ---- the temporary directory ---------------------------------------------------------------

const tmpDir = () => join(u.t.dataDir, 'uploads', 'tmp');
const partFiles = (dir = tmpDir()) => readdirSync(dir).filter((f) => f.endsWith('.part'));

/**
 * Every name made in the temporary directory while `work` runs, however briefly it existed.
 * inotify reports in order: once a marker written afterwards is seen, everything before it was.
 */
async function madeDuring<T>(work: () => Promise<T>, dir = tmpDir()): Promise<{ value: T; made: string[] }> {
  mkdirSync(dir, { recursive: true });
  // Files already there (uploads held open by the test) still report writes as 'change' events:
  // only a name that was not there before counts as made.
  const before = new Set(readdirSync(dir));
  const seen: string[] = [];
  const watcher: FSWatcher = watch(dir, (_event, name) => {
    if (name) seen.push(String(name));
  });
  try {
    const value = await work();
    const marker = `marker-${randomBytes(4).toString('hex')}`;
    writeFileSync(join(dir, marker), '');
    await waitFor('the marker event', async () => seen.includes(marker));
    return { value, made: [...new Set(seen)].filter((n) => !n.startsWith('marker-') && !before.has(n)) };
  } finally {
    watcher.close();
  }
}

/** A second service of `c`'s account, of `type`, in `status` (a row, as staff tooling would leave it). */
async function twin(type: Service['type'], status: ServiceStatus, label: string): Promise<Service> {
  const db = u.t.deps.database.db;
  const first = await db.selectFrom('services').selectAll().where('id', '=', c.serviceId).executeTakeFirstOrThrow();
  return db
    .insertInto('services')
    .values({
      account_id: first.account_id,
      plan_id: first.plan_id,
      order_id: null,
      type,
      label,
      status,
      location_id: first.location_id,
      node_id: first.node_id,
      price_paise: first.price_paise,
      config: JSON.stringify(first.config),
      external: JSON.stringify(first.external),
    })
    .returningAll()
    .executeTakeFirstOrThrow();
}

const retire = (id: number) =>
  u.t.deps.database.db.updateTable('services').set({ status: 'terminated' }).where('id', '=', id).execute();

// ---- the game route ------------------------------------------------------------------------

describe('T3-M4: a game upload is decided before its body is read', () => {
  const BIG = 20 * MIB;

  /** A 20 MiB upload refused before parsing: nothing pulled, nothing made in the temporary directory. */
  async function refusedUnread(
    browser: Browser,
    url: string,
    csrf: string | null,
    status: number,
    code: string,
    fields: Record<string, string> = {},
  ) {
    const body = lazyBody(fields, BIG);
    const { value, made } = await madeDuring(() => post(browser, url, body, body, csrf));
    const answer = refused(value.res, status, code);
    assert.equal(value.pulled, 0, `${code}: no byte of the body was read`);
    assert.deepEqual(made, [], `${code}: nothing was written to the temporary directory`);
    return answer;
  }

  test('without the X-CSRF-Token header (even with the token as a form field): 403, nothing read', async () => {
    await refusedUnread(c.browser, gameUpload(c.serviceId), null, 403, 'csrf_failed', {
      csrf_token: c.browser.csrfToken ?? '',
    });
    await refusedUnread(c.browser, gameUpload(c.serviceId), 'A'.repeat(43), 403, 'csrf_failed');
  });

  test('an unknown action: 422 naming action; multipart for an action that takes JSON: 415', async () => {
    const unknown = await refusedUnread(
      c.browser,
      gameUpload(c.serviceId, 'nonexistent'),
      c.browser.csrfToken,
      422,
      'validation_failed',
    );
    assert.ok('action' in (unknown.errors as object), JSON.stringify(unknown.errors));
    await refusedUnread(
      c.browser,
      gameUpload(c.serviceId, 'file_write'),
      c.browser.csrfToken,
      415,
      'unsupported_media_type',
    );
    const badService = await refusedUnread(
      c.browser,
      `${GAME}?service=abc&action=file_upload`,
      c.browser.csrfToken,
      422,
      'validation_failed',
    );
    assert.ok('query.service' in (badService.errors as object) || 'service' in (badService.errors as object));
  });

  test("someone else's service, or one that does not exist: 404 not_owner, nothing read", async () => {
    await refusedUnread(other.browser, gameUpload(c.serviceId), other.browser.csrfToken, 404, 'not_owner');
    await refusedUnread(other.browser, gameUpload(999_999), other.browser.csrfToken, 404, 'not_owner');
    assert.equal(panelFile(u, c.serviceId, 'big.bin'), null);
  });

  test('the wrong type (a VPS of the same account): 422 not_game_service; a suspended server: 409', async () => {
    const vps = await twin('vps', 'active', 'up-vps');
    await refusedUnread(c.browser, gameUpload(vps.id), c.browser.csrfToken, 422, 'not_game_service');
    await retire(vps.id);
    const suspended = await twin('game', 'suspended', 'up-susp');
    await refusedUnread(c.browser, gameUpload(suspended.id), c.browser.csrfToken, 409, 'suspended');
    await retire(suspended.id);
  });

  test('an account over its panel-write limit: 429 before the file is read', async () => {
    const key = `account:${c.accountId}`;
    const { limit } = await u.t.deps.limits.check('panel_write_account', key);
    await u.t.deps.limits.consume('panel_write_account', key, { points: limit });
    try {
      const body = await refusedUnread(c.browser, gameUpload(c.serviceId), c.browser.csrfToken, 429, 'rate_limited');
      assert.match(String(body.message), /.+/);
    } finally {
      await u.t.deps.limits.reset('panel_write_account', key);
    }
  });

  test('a legitimate upload still lands on the panel, and leaves no temporary file', async () => {
    const data = randomBytes(2 * MIB);
    const res = await c.upload('/plugins', { name: 'legit.jar', data });
    assert.equal(res.statusCode, 201, res.body);
    assert.equal(res.json().path, '/plugins/legit.jar');
    assert.deepEqual(panelFile(u, c.serviceId, 'plugins/legit.jar'), data);
    assert.deepEqual(partFiles(), []);
  });

  test('at most 2 uploads of an account in flight: the third is 429 before its file is read', async (t) => {
    const size = 4 * MIB;
    // Two uploads that stop half-way: their temporary files exist, their slots are taken.
    const held = [0, 1].map((i) => {
      const { head, tail, contentType } = formParts(
        { directory: '/held' },
        { field: 'file', name: `held-${i}.bin`, type: 'application/octet-stream' },
      );
      const stream = new PassThrough();
      stream.write(head);
      stream.write(Buffer.alloc(size / 2, 0x30 + i));
      const answer = post(c.browser, gameUpload(c.serviceId), stream, {
        contentType,
        length: head.length + size + tail.length,
      });
      return {
        answer,
        finish() {
          stream.write(Buffer.alloc(size / 2, 0x30 + i));
          stream.end(tail);
        },
      };
    });
    // Whatever fails below, the held uploads end, so their slots do not hold up the next tests.
    let finished = false;
    t.after(async () => {
      if (finished) return;
      for (const h of held) h.finish();
      await Promise.allSettled(held.map((h) => h.answer));
    });
    await waitFor('two uploads streaming', async () => partFiles().length === 2);

    const third = lazyBody({ directory: '/held' }, BIG);
    const { value, made } = await madeDuring(() => post(c.browser, gameUpload(c.serviceId), third, third));
    const body = refused(value.res, 429, 'rate_limited');
    assert.ok(Number(value.res.headers['retry-after']) >= 1, 'Retry-After is set');
    assert.deepEqual(body.details, { uploads_in_flight: 2, limit: 2 });
    assert.deepEqual(made, [], 'the third upload made no temporary file');
    assert.ok(value.pulled < BIG / 4, `the third file was not read (${value.pulled} bytes pulled)`);
    assert.equal(partFiles().length, 2);

    // Another account is not held up by this one's uploads.
    const proof = lazyBody({ amount: '10', txn_ref: `UTROTHER${Date.now()}` }, 1024, DEPOSIT_FILE, PNG);
    assert.equal((await post(other.browser, DEPOSIT, proof, proof)).res.statusCode, 201);

    finished = true;
    for (const h of held) h.finish();
    for (const [i, h] of held.entries()) {
      const { res } = await h.answer;
      assert.equal(res.statusCode, 201, res.body);
      assert.equal(panelFile(u, c.serviceId, `held/held-${i}.bin`)?.length, size);
    }
    // The slots are given back with the answers.
    const after = await c.upload('/held', { name: 'after.bin', data: Buffer.from('after') });
    assert.equal(after.statusCode, 201, after.body);
    assert.deepEqual(partFiles(), []);
  });
});

// ---- deposit screenshots -------------------------------------------------------------------

describe('T3-M4: a deposit screenshot is decided before its file is read', () => {
  test('the token as a field after the file: 403 before the file is read; before it: accepted', async () => {
    const screenshot = DEPOSIT_FILE;
    const late = lazyBody({ amount: '10', txn_ref: `UTRUP${Date.now()}` }, 4 * MIB, screenshot, PNG);
    // The token is a field after the file: the file part is reached first, without any token.
    const { value, made } = await madeDuring(() => post(c.browser, DEPOSIT, late, late, null));
    refused(value.res, 403, 'csrf_failed');
    assert.deepEqual(made, [], 'no temporary file');
    assert.ok(value.pulled < 2 * MIB, `the file was not read (${value.pulled} bytes pulled)`);

    const early = lazyBody(
      { amount: '10', txn_ref: `UTRUP${Date.now()}b`, csrf_token: c.browser.csrfToken ?? '' },
      64 * 1024,
      screenshot,
      PNG,
    );
    const ok = await post(c.browser, DEPOSIT, early, early, null);
    assert.equal(ok.res.statusCode, 201, ok.res.body);
    const header = lazyBody({ amount: '10', txn_ref: `UTRUP${Date.now()}c` }, 64 * 1024, screenshot, PNG);
    assert.equal((await post(c.browser, DEPOSIT, header, header)).res.statusCode, 201);
    assert.deepEqual(partFiles(), []);
  });
});

// ---- the free-space floor ------------------------------------------------------------------

describe('T3-M4: the temporary directory keeps a free-space floor', () => {
  let full: UpstreamApp;
  let client: GameClient;
  before(async () => {
    // A floor no disk has: every upload would go below it.
    full = await createUpstreamApp({ game: true, env: { UPLOAD_FREE_SPACE_FLOOR_MB: '1000000000' } });
    client = await gameClient(full, { order: true });
  });
  after(() => full.close());

  test('below the floor: game uploads and deposit screenshots are 507 insufficient_storage, nothing written', async () => {
    const dir = join(full.t.dataDir, 'uploads', 'tmp');
    const { value, made } = await madeDuring(async () => {
      const game = await client.upload('/', { name: 'big.bin', data: randomBytes(MIB) });
      const { head, tail, contentType } = formParts(
        { amount: '10', txn_ref: `UTRFULL${Date.now()}` },
        { field: 'screenshot', name: 'proof.png', type: 'image/png' },
      );
      const deposit = await client.browser.request('POST', DEPOSIT, {
        body: Buffer.concat([head, PNG, tail]),
        headers: { 'content-type': contentType },
        csrf: true,
      });
      return { game, deposit };
    }, dir);
    refused(value.game, 507, 'insufficient_storage');
    refused(value.deposit, 507, 'insufficient_storage');
    assert.deepEqual(made, []);
    // What needs no disk still works.
    const write = await client.act('file_write', { path: 'small.txt', content: 'fits' });
    assert.equal(write.statusCode, 200, write.body);
  });

  test('the gate counts what uploads in flight may still write, and gives slots back', async () => {
    let free = 1000;
    const gate = createUploadGate({
      tmpDir: join(full.t.dataDir, 'gate-test'),
      floorBytes: 100,
      free: async () => free,
    });
    const first = await gate.admit(1, 600);
    // 1000 free, 600 reserved: another 600 would leave less than the floor.
    await assert.rejects(gate.admit(2, 600), { code: 'insufficient_storage' });
    const second = await gate.admit(1, 200);
    await assert.rejects(gate.admit(1, 1), { code: 'rate_limited' });
    first();
    first(); // twice is once
    const third = await gate.admit(1, 600);
    second();
    third();
    free = 50;
    await assert.rejects(gate.admit(3, 0), { code: 'insufficient_storage' });
    free = 1000;
    (await gate.admit(3, 0))();
  });
});

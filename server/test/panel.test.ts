// The client panel as the server serves it (CONTRACT §10): deep links load the panel with its
// security headers, hashed assets are immutable and compressed, the API and the other paths this
// process serves are never swallowed by it, and without a build the mail links still work.

import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { gunzipSync } from 'node:zlib';
import { PANEL_CSP } from '../src/http/panel.ts';
import { createTestApp, type TestApp } from './support/harness.ts';

let t: TestApp;
before(async () => {
  t = await createTestApp();
});
after(() => t.close());

const HTML = { accept: 'text/html,application/xhtml+xml' };

describe('the panel at /', () => {
  test('every panel path, deep links and unknown ones, loads the panel with its security headers', async () => {
    for (const url of [
      '/',
      '/login',
      '/register',
      '/verify?token=x',
      '/services/42',
      '/wallet?amount=10',
      '/no/such/page',
    ]) {
      const res = await t.inject({ method: 'GET', url, headers: HTML });
      assert.equal(res.statusCode, 200, url);
      assert.match(String(res.headers['content-type']), /^text\/html/);
      assert.match(res.body, /<div id="root"><\/div>/);
      assert.equal(res.headers['content-security-policy'], PANEL_CSP);
      assert.equal(res.headers['cache-control'], 'no-cache');
      assert.equal(res.headers['referrer-policy'], 'same-origin');
      assert.equal(res.headers['x-content-type-options'], 'nosniff');
      assert.match(String(res.headers['permissions-policy']), /camera=\(\)/);
      assert.ok(res.headers.etag, 'an ETag to revalidate against');
    }
    // No inline script or style: everything the page runs comes from /assets/.
    const index = (await t.inject({ method: 'GET', url: '/' })).body;
    assert.doesNotMatch(index, /<script(?![^>]*\bsrc=)[^>]*>/);
    assert.doesNotMatch(index, /<style/);
    assert.doesNotMatch(index, /\sstyle=/);
  });

  test('the HTML revalidates: the same ETag is 304 with no body', async () => {
    const first = await t.inject({ method: 'GET', url: '/wallet' });
    const again = await t.inject({
      method: 'GET',
      url: '/wallet',
      headers: { 'if-none-match': String(first.headers.etag) },
    });
    assert.equal(again.statusCode, 304);
    assert.equal(again.body, '');
  });

  test('assets are immutable for a year and compressed for clients that take it', async () => {
    const index = (await t.inject({ method: 'GET', url: '/' })).body;
    const scripts = [...index.matchAll(/(?:src|href)="(\/assets\/[^"]+)"/g)].map((m) => m[1] as string);
    assert.ok(scripts.some((s) => s.endsWith('.js')) && scripts.some((s) => s.endsWith('.css')), index);
    for (const path of scripts) {
      const plain = await t.inject({ method: 'GET', url: path });
      assert.equal(plain.statusCode, 200, path);
      assert.equal(plain.headers['cache-control'], 'public, max-age=31536000, immutable');
      assert.match(path, /-[A-Za-z0-9_-]{8}\.(js|css)$/, 'a content hash in the name');
      const gzip = await t.inject({ method: 'GET', url: path, headers: { 'accept-encoding': 'gzip' } });
      assert.equal(gzip.headers['content-encoding'], 'gzip');
      assert.equal(gunzipSync(gzip.rawPayload).toString(), plain.body);
      const br = await t.inject({ method: 'GET', url: path, headers: { 'accept-encoding': 'gzip, br' } });
      assert.equal(br.headers['content-encoding'], 'br');
      assert.ok(br.rawPayload.length < plain.rawPayload.length);
    }
    const favicon = await t.inject({ method: 'GET', url: '/favicon.svg' });
    assert.equal(favicon.statusCode, 200);
    assert.equal(favicon.headers['content-type'], 'image/svg+xml');
  });

  test('/staff and /staff/… load the staff console: its own entry, none of it in the customer panel', async () => {
    for (const url of ['/staff', '/staff/deposits', '/staff/invite?token=abc']) {
      const res = await t.inject({ method: 'GET', url, headers: HTML });
      assert.equal(res.statusCode, 200, url);
      assert.match(String(res.headers['content-type']), /^text\/html/, url);
      assert.match(res.body, /\/assets\/staff-[\w-]+\.js/, url);
      assert.match(String(res.headers['content-security-policy']), /script-src 'self';/, url);
      assert.equal(res.headers['x-frame-options'], 'DENY', url);
    }
    const customer = await t.inject({ method: 'GET', url: '/', headers: HTML });
    assert.doesNotMatch(customer.body, /staff/i);
    const missing = await t.inject({ method: 'GET', url: '/staff/app.js.map', headers: HTML });
    assert.equal(missing.statusCode, 404);
    // The page is not also a file of the build.
    assert.equal((await t.inject({ method: 'GET', url: '/staff.html' })).statusCode, 404);
  });

  test('the API, the docs, metrics, the console socket and missing files are never the panel', async () => {
    const cases: [string, number, RegExp][] = [
      ['/api/v1/no-such-thing', 404, /"error":"not_found"/],
      ['/api/v1/client/nothing/', 404, /"code":"not_found"/],
      ['/api', 404, /not_found/],
      ['/cloud/v1/nothing', 404, /"error":"not_found"/],
      ['/metrics', 404, /not_found/],
      ['/ws/console/', 400, /upgrade|websocket|WebSocket/i],
      ['/assets/index-missing0.js', 404, /not_found/],
      ['/robots.txt', 404, /not_found/],
      ['/services/42/app.js.map', 404, /not_found/],
    ];
    for (const [url, status, body] of cases) {
      const res = await t.inject({ method: 'GET', url, headers: HTML });
      assert.equal(res.statusCode, status, url);
      assert.match(String(res.headers['content-type']), /json/, url);
      assert.match(res.body, body, url);
    }
    const docs = await t.inject({ method: 'GET', url: '/docs/' });
    assert.equal(docs.statusCode, 200);
    assert.doesNotMatch(docs.body, /<div id="root"><\/div>/);
    // Only GET (and HEAD) load the panel: a POST to a panel path is the API's 404.
    const post = await t.inject({ method: 'POST', url: '/login', payload: {} });
    assert.equal(post.statusCode, 404);
    const head = await t.inject({ method: 'HEAD', url: '/services/1' });
    assert.equal(head.statusCode, 200);
    assert.match(String(head.headers['content-type']), /^text\/html/);
  });
});

describe('without a panel build', () => {
  let bare: TestApp;
  let fake: TestApp;
  let dir: string;
  before(async () => {
    bare = await createTestApp({ env: { PANEL_DIR: 'off' } });
    // A build elsewhere (PANEL_DIR): what it holds is what is served.
    dir = mkdtempSync(join(tmpdir(), 'hostplane-panel-'));
    mkdirSync(join(dir, 'assets'));
    writeFileSync(
      join(dir, 'index.html'),
      '<!doctype html><div id="root"></div><script type="module" src="/assets/a-12345678.js"></script>',
    );
    writeFileSync(join(dir, 'assets', 'a-12345678.js'), 'console.log("panel")');
    fake = await createTestApp({ env: { PANEL_DIR: dir } });
  });
  after(async () => {
    await bare.close();
    await fake.close();
    rmSync(dir, { recursive: true, force: true });
  });

  test('PANEL_DIR=off: the mail links still open their pages; / is the API 404', async () => {
    const verify = await bare.inject({ method: 'GET', url: '/verify?token=abc' });
    assert.equal(verify.statusCode, 200);
    assert.match(verify.body, /verify\//);
    assert.equal((await bare.inject({ method: 'GET', url: '/reset?token=abc' })).statusCode, 200);
    assert.equal((await bare.inject({ method: 'GET', url: '/services/1' })).statusCode, 404);
  });

  test('PANEL_DIR elsewhere: its index and assets are served', async () => {
    const page = await fake.inject({ method: 'GET', url: '/wallet' });
    assert.equal(page.statusCode, 200);
    assert.match(page.body, /a-12345678\.js/);
    const asset = await fake.inject({ method: 'GET', url: '/assets/a-12345678.js' });
    assert.equal(asset.body, 'console.log("panel")');
    assert.match(String(asset.headers['content-type']), /^text\/javascript/);
  });
});

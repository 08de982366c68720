// SSH keys as an account resource (issue 16, CONTRACT §9) on the session surface: add, list,
// delete; a bad key and a duplicate are 422; another account's key is 404; CSRF on changes.

import assert from 'node:assert/strict';
import { generateKeyPairSync } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import sshpk from 'sshpk';
import { freshIp, signedInBrowser } from './support/factories.ts';
import { createTestApp, type TestApp } from './support/harness.ts';

const KEYS = '/api/v1/client/ssh-keys/';
let t: TestApp;
before(async () => {
  t = await createTestApp();
});
after(() => t.close());

function ed25519(comment: string): string {
  const { publicKey } = generateKeyPairSync('ed25519');
  const pem = publicKey.export({ format: 'pem', type: 'spki' }).toString();
  const key = sshpk.parseKey(pem, 'pem');
  key.comment = comment;
  return key.toString('ssh');
}

describe('ssh keys on the session surface', () => {
  test('add, list, refuse a duplicate and a bad key, delete; another account cannot touch it', async () => {
    const { browser } = await signedInBrowser(t, freshIp());
    const line = ed25519('asha@laptop');
    const added = await browser.post(KEYS, { name: 'laptop', public_key: line }, { csrf: true });
    assert.equal(added.statusCode, 201, added.body);
    const key = added.json().ssh_key;
    assert.equal(key.type, 'ssh-ed25519');
    assert.match(key.fingerprint, /^SHA256:[A-Za-z0-9+/]{43}$/);
    const again = await browser.post(KEYS, { name: 'laptop 2', public_key: line }, { csrf: true });
    assert.equal(again.statusCode, 422, again.body);
    assert.match(again.json().errors.public_key, /already on your account/);
    const bad = await browser.post(KEYS, { name: 'bad', public_key: 'ssh-rsa AAAA not a key' }, { csrf: true });
    assert.equal(bad.statusCode, 422, bad.body);
    assert.ok(bad.json().errors.public_key);
    const noCsrf = await browser.post(KEYS, { name: 'x', public_key: ed25519('x') }, { csrf: false });
    assert.equal(noCsrf.statusCode, 403);
    const list = await browser.get(KEYS);
    assert.deepEqual(
      list.json().ssh_keys.map((k: { name: string }) => k.name),
      ['laptop'],
    );
    // Worded as every list of this surface, and times as everywhere else (CONTRACT §3).
    assert.equal(list.json().message, 'SSH keys loaded.');
    assert.match(list.json().ssh_keys[0].created_at, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}\+00:00$/);
    assert.equal(key.created_at, list.json().ssh_keys[0].created_at);

    const other = await signedInBrowser(t, freshIp());
    const foreign = await other.browser.post(KEYS, { action: 'delete', id: key.id }, { csrf: true });
    assert.equal(foreign.statusCode, 404, foreign.body);
    assert.deepEqual((await other.browser.get(KEYS)).json().ssh_keys, []);
    // The same key on another account is that account's own.
    const theirs = await other.browser.post(KEYS, { name: 'shared', public_key: line }, { csrf: true });
    assert.equal(theirs.statusCode, 201, theirs.body);

    const removed = await browser.post(KEYS, { action: 'delete', id: key.id }, { csrf: true });
    assert.equal(removed.statusCode, 200, removed.body);
    assert.deepEqual((await browser.get(KEYS)).json().ssh_keys, []);
  });
});

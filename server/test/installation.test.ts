// The installation id (security review 3, T3-M2): made at first start, kept across restarts of
// the same database, different for another database, and rotated by staff.

import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { runAdmin } from '../src/admin/run.ts';
import { externalName, loadInstallationId } from '../src/core/system/installation.ts';
import { createTestApp, type TestApp } from './support/harness.ts';

let a: TestApp;
let b: TestApp;
before(async () => {
  a = await createTestApp();
  b = await createTestApp();
});
after(async () => {
  await a.close();
  await b.close();
});

test('each database gets its own id at first start, and keeps it', async () => {
  assert.match(a.deps.installation.id, /^[a-z2-7]{8}$/);
  assert.notEqual(a.deps.installation.id, b.deps.installation.id);
  assert.equal(await loadInstallationId(a.deps.database.db), a.deps.installation.id);
  assert.equal(externalName(a.deps.installation.id, 'svc', 42), `hp-${a.deps.installation.id}-svc-42`);
});

test('install-id show and rotate', async () => {
  const admin = (...argv: string[]) => runAdmin(argv, async () => a.deps);
  const shown = await admin('install-id', 'show', '--json');
  assert.equal(shown.exitCode, 0, shown.stderr);
  const before = JSON.parse(shown.stdout).installation_id;
  assert.equal(before, a.deps.installation.id);
  const rotated = await admin('install-id', 'rotate', '--json');
  assert.equal(rotated.exitCode, 0, rotated.stderr);
  const out = JSON.parse(rotated.stdout);
  assert.equal(out.previous, before);
  assert.notEqual(out.installation_id, before);
  assert.equal(a.deps.installation.id, out.installation_id);
  assert.equal(await loadInstallationId(a.deps.database.db), out.installation_id);
});

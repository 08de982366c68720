// Staff CLI: an OS template's install image (os_templates.image_url, what bare-metal servers
// boot): `os add … --image-url URL`, `os image SLUG URL` and `os image SLUG --clear`, refused
// (exit 1, nothing stored) unless the column's check takes it; `os list` shows it.

import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { runAdmin } from '../src/admin/run.ts';
import { createTestApp, type TestApp } from './support/harness.ts';

let t: TestApp;
before(async () => {
  t = await createTestApp();
});
after(() => t.close());

const ISO = 'https://cdimage.debian.org/cdimage/release/13.0.0/amd64/iso-cd/debian-13.0.0-amd64-netinst.iso';

const admin = (...argv: string[]) => runAdmin(argv, async () => t.deps);
const json = async (...argv: string[]) => {
  const result = await admin(...argv, '--json');
  assert.equal(result.exitCode, 0, result.stderr);
  return JSON.parse(result.stdout);
};
const add = (slug: string, ...extra: string[]) =>
  admin(
    'os',
    'add',
    slug,
    '--name',
    `Debian ${slug}`,
    '--family',
    'debian',
    '--version',
    '13',
    '--template-vmid',
    '9020',
    ...extra,
  );
const imageOf = async (slug: string) =>
  (await t.deps.database.db.selectFrom('os_templates').select('image_url').where('slug', '=', slug).executeTakeFirst())
    ?.image_url;

/** URLs the column's check (^https?://[^\s]+$, ≤ 2048) refuses, some of which a URL parser takes. */
const REFUSED = [
  'HTTPS://example.in/os.iso',
  'https:example.in/os.iso',
  'ftp://example.in/os.iso',
  'https://example.in/my os.iso',
  `https://example.in/${'a'.repeat(2048)}.iso`,
  '',
];

describe('admin os: install images', () => {
  test('os add --image-url stores it; os list shows it; without it the template has none', async () => {
    const added = await add('debian-13a', '--image-url', ISO, '--json');
    assert.equal(added.exitCode, 0, added.stderr);
    assert.equal(JSON.parse(added.stdout).image_url, ISO);
    assert.equal(await imageOf('debian-13a'), ISO);
    const text = await add('debian-13b');
    assert.equal(text.exitCode, 0, text.stderr);
    assert.equal(await imageOf('debian-13b'), null);
    const rows = await json('os', 'list');
    assert.equal(rows.find((r: { slug: string }) => r.slug === 'debian-13a').image_url, ISO);
    const table = await admin('os', 'list');
    assert.match(table.stdout, /image_url/);
    assert.match(table.stdout, /debian-13a .*cdimage\.debian\.org/);
  });

  test('os add refuses a URL the column would refuse, and adds nothing', async () => {
    for (const [i, url] of REFUSED.entries()) {
      const slug = `refused-${i}`;
      const res = await add(slug, '--image-url', url);
      assert.equal(res.exitCode, 1, `${url}: ${res.stdout}${res.stderr}`);
      assert.match(res.stderr, /image_url: /);
      assert.equal(await imageOf(slug), undefined, `${url} added ${slug}`);
    }
    // The catalog's own checks too: credentials in the URL.
    const secret = await add('refused-creds', '--image-url', 'https://user:pw@example.in/os.iso');
    assert.equal(secret.exitCode, 1);
    assert.match(secret.stderr, /image_url: must not contain credentials/);
  });

  test('os image sets, replaces and --clear removes it; bad input changes nothing', async () => {
    await add('debian-13c');
    const set = await json('os', 'image', 'debian-13c', ISO);
    assert.equal(set.image_url, ISO);
    assert.equal(await imageOf('debian-13c'), ISO);
    const other = `${ISO}?mirror=2`;
    const replaced = await admin('os', 'image', 'debian-13c', other);
    assert.equal(replaced.exitCode, 0, replaced.stderr);
    assert.match(replaced.stdout, /debian-13c installs from https:\/\/cdimage/);
    assert.equal(await imageOf('debian-13c'), other);

    for (const url of REFUSED.filter(Boolean)) {
      const res = await admin('os', 'image', 'debian-13c', url);
      assert.equal(res.exitCode, 1, `${url}: ${res.stderr}`);
      assert.equal(await imageOf('debian-13c'), other, `${url} was stored`);
    }
    const neither = await admin('os', 'image', 'debian-13c');
    assert.equal(neither.exitCode, 2);
    assert.match(neither.stderr, /either a URL or --clear/);
    const both = await admin('os', 'image', 'debian-13c', ISO, '--clear');
    assert.equal(both.exitCode, 2);
    assert.equal(await imageOf('debian-13c'), other);
    const unknown = await admin('os', 'image', 'no-such-os', ISO);
    assert.equal(unknown.exitCode, 1);
    assert.match(unknown.stderr, /No OS template "no-such-os"/);

    const cleared = await admin('os', 'image', 'debian-13c', '--clear');
    assert.equal(cleared.exitCode, 0, cleared.stderr);
    assert.match(cleared.stdout, /debian-13c has no install image now/);
    assert.equal(await imageOf('debian-13c'), null);
  });

  test('help names the option and the command', async () => {
    const help = await admin('os', 'add', '--help');
    assert.match(help.stdout, /--image-url/);
    const image = await admin('os', 'image', '--help');
    assert.match(image.stdout, /--clear/);
  });
});

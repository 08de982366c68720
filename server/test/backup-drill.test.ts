// The backup drill (issue 39, CONTRACT §15), through the real entry points: an installation
// started with `npm start` gets a customer with money, a virtual server (order, invoice), a deposit
// with an uploaded proof; `npm run admin -- backup create` runs while a client keeps reading and
// writing; `backup restore` puts it into a fresh DATA_DIR (and, on PostgreSQL, a fresh database);
// the copy holds the same rows (counts and checksums, table by table) and files, and the same
// installation id; started, it lets the customer sign in to the same balance, proof and invoice.
// Then the refusals (a target that is not empty, a damaged, foreign or newer file, a copy that does
// not match its manifest), and `npm run migrate -- --check`. The engine is the run's (PGlite, or
// PostgreSQL with TEST_DATABASE_URL).

import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, test } from 'node:test';
import pg from 'pg';
import { runAdmin } from '../src/admin/run.ts';
import { loadConfig } from '../src/config.ts';
import { closeDeps, createDeps } from '../src/core/deps.ts';
import { differingTables, type Manifest } from '../src/core/system/backup/manifest.ts';
import { openDatabase } from '../src/db/database.ts';
import {
  damaged,
  entriesOf,
  type Found,
  fingerprintOf,
  HttpClient,
  manifestOf,
  sshPublicKey,
  withManifest,
} from './support/backup.ts';
import { copyOf, createTestDatabase, onPostgres, silentLogger, templateBytes } from './support/harness.ts';
import { freePort, type Running, runNode, runToEnd, waitForJson } from './support/process.ts';
import { withDatabase } from './support/template.ts';
import { multipart, PNG } from './support/uploads.ts';

const MAIN = 'server/src/main.ts';
const ADMIN = 'server/src/admin/main.ts';
const MIGRATE = 'server/src/db/migrate-cli.ts';
const ROOT = mkdtempSync(join(tmpdir(), 'hostplane-drill-'));
const cleanups: (() => Promise<void>)[] = [];
after(async () => {
  for (const cleanup of cleanups.reverse()) await cleanup().catch(() => {});
  rmSync(ROOT, { recursive: true, force: true });
});

/** Where an installation lives: its DATA_DIR and, on PostgreSQL, its database; the environment that names them. */
interface Place {
  dataDir: string;
  url: string | null;
  env: Record<string, string>;
}

let dirCount = 0;
const SECRET_KEY = randomBytes(32).toString('base64');

/** A new, empty place: a DATA_DIR not yet created, and on PostgreSQL a database with nothing in it. */
async function emptyPlace(): Promise<Place> {
  const dataDir = join(ROOT, `data-${++dirCount}`);
  if (!onPostgres) return { dataDir, url: null, env: { DATA_DIR: dataDir } };
  const adminUrl = process.env.TEST_DATABASE_URL as string;
  const name = `hostplane_t_${process.pid}_drill_${randomBytes(4).toString('hex')}`;
  const admin = new pg.Client({ connectionString: adminUrl });
  await admin.connect();
  await admin.query(`create database "${name}"`).finally(() => admin.end());
  cleanups.push(async () => {
    const again = new pg.Client({ connectionString: adminUrl });
    await again.connect();
    await again.query(`drop database if exists "${name}" with (force)`).finally(() => again.end());
  });
  const url = withDatabase(adminUrl, name);
  return { dataDir, url, env: { DATA_DIR: dataDir, DATABASE_URL: url, SECRET_KEY } };
}

const CUSTOMER = { username: 'drill', email: 'drill@example.in', password: 'drill-pass-9x' };

/**
 * A migrated installation with a verified customer holding ₹2000, made through the core services
 * (embedded: the test template unpacked into DATA_DIR, so no process pays for initdb). The embedded
 * one generates its secret key into DATA_DIR, as `npm start` does without SECRET_KEY.
 */
async function seededSource(): Promise<Place> {
  const dataDir = join(ROOT, 'source');
  let place: Place;
  let database: Awaited<ReturnType<typeof openDatabase>>;
  if (onPostgres) {
    const testDb = await createTestDatabase();
    cleanups.push(() => testDb.drop());
    database = testDb.database;
    place = { dataDir, url: testDb.url, env: { DATA_DIR: dataDir, DATABASE_URL: testDb.url as string, SECRET_KEY } };
  } else {
    const template = templateBytes();
    database = await openDatabase({
      engine: 'pglite',
      dataDir,
      ...(template ? { loadDataDir: copyOf(template) } : {}),
    });
    place = { dataDir, url: null, env: { DATA_DIR: dataDir } };
  }
  try {
    const config = loadConfig({ ...place.env, DEMO: '0', LOG_LEVEL: 'silent' });
    const deps = await createDeps(config, database, silentLogger);
    try {
      const account = await deps.accounts.register({ name: 'Drill Customer', ...CUSTOMER });
      await deps.accounts.markVerified(account.id);
      await deps.wallet.credit(account.id, '2000', 'drill float');
    } finally {
      await closeDeps(deps);
    }
  } finally {
    await database.close();
  }
  return place;
}

/** `npm start` on a place (demo mode: the emulated panels provision the server), up and answering. */
async function start(place: Place): Promise<{ running: Running; base: string }> {
  const port = await freePort();
  const running = runNode(MAIN, [], { ...place.env, PORT: String(port), DEMO: '1', LOG_LEVEL: 'warn' });
  cleanups.push(async () => {
    running.child.kill('SIGKILL');
  });
  const base = `http://127.0.0.1:${port}`;
  await waitForJson(`${base}/api/v1/health/`, running);
  return { running, base };
}

async function stop(running: Running): Promise<void> {
  running.child.kill('SIGTERM');
  assert.equal(await running.exited, 0, running.output());
}

/** Poll (a guard, not a measure) until the service is active. */
async function activeService(client: HttpClient, id: number): Promise<Record<string, unknown>> {
  for (let waited = 0; ; waited += 250) {
    const res = await client.get(`/api/v1/client/services/?id=${id}`);
    const service = res.body.service as Record<string, unknown>;
    if (service?.status === 'active') return service;
    assert.notEqual(service?.status, 'failed', JSON.stringify(service));
    assert.ok(waited < 120_000, `service ${id} not active: ${JSON.stringify(service)}`);
    await new Promise((r) => setTimeout(r, 250));
  }
}

/** What the customer sees that a restore must keep: balance, the proof's bytes, the invoice PDF's bytes, the server. */
interface Seen {
  balance: string;
  proof: Buffer;
  pdf: Buffer;
  service: { id: number; status: string };
}

async function seenBy(client: HttpClient, ids: { deposit: number; invoice: number; service: number }): Promise<Seen> {
  const wallet = await client.get('/api/v1/client/wallet/');
  const proof = await client.get(`/api/v1/client/wallet/deposit/?id=${ids.deposit}&action=screenshot`);
  const pdf = await client.get(`/api/v1/client/invoices/?id=${ids.invoice}&format=pdf`);
  const service = await client.get(`/api/v1/client/services/?id=${ids.service}`);
  for (const res of [wallet, proof, pdf, service]) assert.equal(res.status, 200, res.bytes.toString().slice(0, 300));
  const view = service.body.service as { id: number; status: string };
  return {
    balance: (wallet.body.wallet as { balance: string }).balance,
    proof: proof.bytes,
    pdf: pdf.bytes,
    service: { id: view.id, status: view.status },
  };
}

/** The customer's footprint: a virtual server ordered (its invoice issued) and a deposit reported with a proof. */
async function useAsCustomer(client: HttpClient): Promise<{ deposit: number; invoice: number; service: number }> {
  const catalog = await client.get('/api/v1/client/catalog/');
  const plan = (catalog.body.plans as { id: number; label: string }[]).find((p) => p.label === 'vps-1c-1g');
  assert.ok(plan, 'the demo catalog sells vps-1c-1g');
  const order = await client.post('/api/v1/client/orders/', {
    plan_id: plan.id,
    config: { server_name: 'drill1', region: 'mum1' },
    idempotency_key: 'drill-order-1',
  });
  assert.equal(order.status, 201, order.bytes.toString());
  const serviceId = (order.body.service as { id: number }).id;
  await activeService(client, serviceId);
  const form = multipart({ amount: '500', txn_ref: `DRILL${randomBytes(4).toString('hex')}` }, [
    { field: 'screenshot', filename: 'proof.png', contentType: 'image/png', data: PNG },
  ]);
  const deposit = await client.request('POST', '/api/v1/client/wallet/deposit/', undefined, form);
  assert.equal(deposit.status, 201, deposit.bytes.toString());
  const invoices = await client.get('/api/v1/client/invoices/');
  const invoice = (invoices.body.invoices as { id: number }[])[0];
  assert.ok(invoice, 'the paid order has its invoice');
  return { deposit: (deposit.body.deposit as { id: number }).id, invoice: invoice.id, service: serviceId };
}

/** Reads and writes (an SSH key added and deleted) until `until` settles; how many rounds ran. */
async function traffic(client: HttpClient, until: Promise<unknown>): Promise<number> {
  let done = false;
  void until.finally(() => {
    done = true;
  });
  const publicKey = sshPublicKey();
  let rounds = 0;
  while (!done) {
    assert.equal((await client.get('/api/v1/client/wallet/')).status, 200);
    const added = await client.post('/api/v1/client/ssh-keys/', { name: `k${rounds}`, public_key: publicKey });
    assert.equal(added.status, 201, added.bytes.toString());
    const id = (added.body.ssh_key as { id: number }).id;
    assert.equal((await client.post('/api/v1/client/ssh-keys/', { action: 'delete', id })).status, 200);
    rounds++;
  }
  return rounds;
}

/** Tables the drill's traffic and a running server do not change: the source after the backup still has them as backed up. */
const SETTLED = [
  'accounts',
  'wallets',
  'wallet_transactions',
  'orders',
  'services',
  'invoices',
  'deposits',
  'installation',
];

function assertSame(a: Found['tables'], b: Found['tables'], tables: string[] | null, what: string): void {
  const pick = (t: Found['tables']): Found['tables'] =>
    tables === null
      ? t
      : Object.fromEntries(tables.map((name) => [`public.${name}`, t[`public.${name}`] ?? { rows: -1, checksum: '' }]));
  assert.deepEqual(differingTables(pick(a), pick(b)), [], what);
}

let backupFile: string | null = null;
let restored: Place | null = null;

describe('backup drill', () => {
  test('backed up under traffic, restored elsewhere: same rows, files and installation id; the copy serves the customer', async () => {
    const source = await seededSource();
    const server = await start(source);
    const client = new HttpClient(server.base);
    await client.login(CUSTOMER.username, CUSTOMER.password);
    const ids = await useAsCustomer(client);
    const before = await seenBy(client, ids);
    assert.equal(before.balance, '1701.00', '₹2000 less the ₹299 server; the deposit is pending');

    // The backup, while the customer keeps reading and writing.
    const file = join(ROOT, 'drill.tar.gz');
    const backingUp = runToEnd(ADMIN, ['backup', 'create', file, '--json'], source.env, 300_000);
    // The client's first request leaves before the CLI has started; it goes on until the CLI ends.
    const rounds = await traffic(client, backingUp);
    const created = await backingUp;
    assert.equal(created.code, 0, created.output);
    assert.ok(rounds > 0);
    const summary = JSON.parse(created.output) as { file: string; installation_id: string; secret_key: string | null };
    assert.equal(summary.file, file);
    assert.equal(summary.secret_key, onPostgres ? 'environment' : 'data_dir');
    assert.equal(statSync(file).mode & 0o777, 0o600);
    const manifest: Manifest = await manifestOf(file);
    assert.equal(manifest.installation_id, summary.installation_id);
    assert.equal(manifest.files.filter((f) => f.path.startsWith('files/uploads/deposits/')).length, 1, 'the proof');
    await stop(server.running);

    // The source, stopped, still holds what the backup recorded of everything the traffic did not touch.
    const sourceFound = await fingerprintOf(source);
    assertSame(sourceFound.tables, manifest.tables, SETTLED, 'the source against the backup');
    assert.equal(sourceFound.described.installationId, manifest.installation_id);
    for (const table of ['accounts', 'services', 'invoices', 'deposits', 'wallet_transactions']) {
      assert.ok((manifest.tables[`public.${table}`]?.rows ?? 0) > 0, `${table} has rows`);
    }

    // Restored into an empty place: the same rows, table by table; the same files; the same id.
    const target = await emptyPlace();
    const restore = await runToEnd(ADMIN, ['backup', 'restore', file, '--json'], target.env, 300_000);
    assert.equal(restore.code, 0, restore.output);
    assert.equal((JSON.parse(restore.output) as { installation_id: string }).installation_id, manifest.installation_id);
    const copy = await fingerprintOf(target);
    assertSame(copy.tables, manifest.tables, null, 'the copy against the backup, every table');
    assert.equal(copy.described.installationId, sourceFound.described.installationId);
    const proofName = readdirSync(join(source.dataDir, 'uploads', 'deposits'))[0] as string;
    assert.deepEqual(
      readFileSync(join(target.dataDir, 'uploads', 'deposits', proofName)),
      readFileSync(join(source.dataDir, 'uploads', 'deposits', proofName)),
    );
    if (!onPostgres) {
      assert.deepEqual(
        readFileSync(join(target.dataDir, 'secret.key')),
        readFileSync(join(source.dataDir, 'secret.key')),
      );
    }

    // `npm run migrate -- --check` on the copy: at the code's latest, nothing would run.
    const check = await runToEnd(MIGRATE, ['--check'], target.env);
    assert.equal(check.code, 0, check.output);
    assert.match(check.output, /schema is up to date; no migration would run/);

    // Started: the customer signs in and sees what they saw.
    const copyServer = await start(target);
    const again = new HttpClient(copyServer.base);
    await again.login(CUSTOMER.username, CUSTOMER.password);
    assert.deepEqual(await seenBy(again, ids), before);
    await stop(copyServer.running);
    backupFile = file;
    restored = target;
  });

  test('refused: a target that is not empty, a damaged, foreign or newer file, a copy unlike its manifest', async (t) => {
    if (backupFile === null || restored === null) return t.skip('needs the drill');
    const file = backupFile;

    // Through the CLI: the restored copy is not empty (exit 1, and it is left as it was).
    const before = readdirSync(restored.dataDir).sort();
    const again = await runToEnd(ADMIN, ['backup', 'restore', file, '--json'], restored.env);
    assert.equal(again.code, 1, again.output);
    assert.equal(
      (JSON.parse(again.output.slice(0, again.output.lastIndexOf('}') + 1)) as { error: string }).error,
      'target_not_empty',
    );
    assert.deepEqual(readdirSync(restored.dataDir).sort(), before);

    // The command in this process (as the CLI runs it), into empty places.
    const restoreInto = async (place: Place, path: string) => {
      const config = loadConfig({ ...place.env, DEMO: '0' });
      const result = await runAdmin(
        ['backup', 'restore', path, '--json'],
        async () => {
          throw new Error('restore needs no services');
        },
        'staff:drill',
        undefined,
        async () => ({
          config,
          inServer: false,
          logger: silentLogger,
          database: async () => {
            throw new Error('restore opens no configured database');
          },
        }),
      );
      return { code: result.exitCode, error: (JSON.parse(result.stdout || '{}') as { error?: string }).error };
    };
    /** A failed restore leaves no database and no files behind. */
    const leftEmpty = async (place: Place) => {
      const left = existsSync(place.dataDir) ? readdirSync(place.dataDir) : [];
      assert.deepEqual(left, [], `left in DATA_DIR: ${left.join(', ')}`);
      if (place.url !== null) {
        const client = new pg.Client({ connectionString: place.url });
        await client.connect();
        const { rows } = await client
          .query<{ n: number }>(
            "select count(*)::int as n from pg_class c join pg_namespace n on n.oid = c.relnamespace where n.nspname not in ('pg_catalog', 'information_schema') and n.nspname not like 'pg\\_%'",
          )
          .finally(() => client.end());
        assert.equal(rows[0]?.n, 0, 'no relation left in the database');
      }
    };

    const truncated = join(ROOT, 'truncated.tar.gz');
    const flipped = join(ROOT, 'flipped.tar.gz');
    damaged(file, truncated, flipped);
    const plain = join(ROOT, 'plain.txt');
    writeFileSync(plain, 'not a backup\n');
    const foreign = join(ROOT, 'foreign.tar.gz');
    const newer = join(ROOT, 'newer.tar.gz');
    const unlike = join(ROOT, 'unlike.tar.gz');
    const entries = await entriesOf(file);
    const onlyManifest = true;
    await withManifest(entries, foreign, (m) => void Object.assign(m, { format: 'something-else' }), onlyManifest);
    await withManifest(entries, newer, (m) => void Object.assign(m, { schema_version: '9999_later' }), onlyManifest);
    // A manifest that records one account more than the database holds: the copy cannot match it.
    await withManifest(entries, unlike, (m) => {
      (m.tables['public.accounts'] as { rows: number }).rows += 1;
    });
    const cases: [string, string][] = [
      [truncated, 'backup_corrupt'],
      [flipped, 'backup_corrupt'],
      [plain, 'backup_foreign'],
      [foreign, 'backup_foreign'],
      [newer, 'backup_newer'],
      [unlike, 'verify_failed'],
    ];
    for (const [path, code] of cases) {
      const place = await emptyPlace();
      const result = await restoreInto(place, path);
      assert.deepEqual(result, { code: 1, error: code }, path);
      await leftEmpty(place);
    }

    // The other engine: refused on the manifest, before the target is looked at (this database is never reached).
    const otherEngine = join(ROOT, 'other-engine');
    const other: Place = onPostgres
      ? { dataDir: otherEngine, url: null, env: { DATA_DIR: otherEngine } }
      : {
          dataDir: otherEngine,
          url: null,
          env: { DATA_DIR: otherEngine, DATABASE_URL: 'postgres://nobody@127.0.0.1:9/none', SECRET_KEY },
        };
    assert.deepEqual(await restoreInto(other, file), { code: 1, error: 'engine_mismatch' });
    await leftEmpty(other);
  });
});

test('npm run migrate -- --check on a DATA_DIR without a database: every migration would run (exit 1), none is run', async (t) => {
  if (onPostgres) return t.skip('the embedded case; the drill checks a restored PostgreSQL database');
  const dataDir = join(ROOT, 'never');
  const check = await runToEnd(MIGRATE, ['--check'], { DATA_DIR: dataDir });
  assert.equal(check.code, 1, check.output);
  assert.match(check.output, /no database in DATA_DIR yet.*migrations would run: 0001_extensions, /);
  assert.equal(existsSync(join(dataDir, 'pglite')), false, 'no database was created');
});

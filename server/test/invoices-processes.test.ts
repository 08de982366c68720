// Invoice numbers across processes (issue 35, CONTRACT §12, rule 46): two API processes on one
// PostgreSQL database (`npm run api` twice, as an operator scales out) take 50 token deploys at
// once, 25 each, from ten accounts whose orders are spread over both; every charge must have
// exactly one invoice totalling its debit, and the serials of each financial year must be exactly
// 1…n — no gap, no duplicate — whichever process issued them. The series row (invoice_series,
// UPDATE … RETURNING in the charging transaction) is the only thing the processes share.
// (The same within one process, on both engines: invoices.test.ts, "20 orders at once".)

import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, test } from 'node:test';
import pino from 'pino';
import { loadConfig } from '../src/config.ts';
import { seedDemoCatalog } from '../src/core/catalog/demo-seed.ts';
import { closeDeps, createDeps, type Deps } from '../src/core/deps.ts';
import { openDatabase } from '../src/db/database.ts';
import { createTestDatabase, onPostgres, redisUrl } from './support/harness.ts';
import { freePort, runNode, waitForJson } from './support/process.ts';

const cleanups: (() => Promise<void> | void)[] = [];
after(async () => {
  for (const c of cleanups.reverse()) await c();
});

const ACCOUNTS = 10;
const PER_ACCOUNT = 5; // within the deploy allowance (10 an hour per account)
const CHARGES = ACCOUNTS * PER_ACCOUNT;

describe('invoice numbers across two processes', {
  skip:
    !onPostgres &&
    'needs PostgreSQL (TEST_DATABASE_URL): the embedded PGlite database belongs to one process, so two cannot share it',
}, () => {
  test(`${CHARGES} charges at once through two API processes: serials 1…n, no gap, no duplicate, one invoice per charge`, {
    timeout: 300_000,
  }, async () => {
    const testDb = await createTestDatabase();
    await testDb.database.close();
    const dataDir = mkdtempSync(join(tmpdir(), 'hostplane-2inv-'));
    cleanups.push(
      () => rmSync(dataDir, { recursive: true, force: true }),
      () => testDb.drop(),
    );
    const env: Record<string, string> = {
      DATABASE_URL: testDb.url as string,
      SECRET_KEY: randomBytes(32).toString('base64'),
      DATA_DIR: dataDir,
      DEMO: '0',
      LOG_LEVEL: 'warn',
      ...(redisUrl ? { REDIS_URL: redisUrl, REDIS_PREFIX: `hp-test-${randomBytes(4).toString('hex')}` } : {}),
    };
    const database = await openDatabase({ engine: 'postgresql', url: env.DATABASE_URL as string });
    const deps: Deps = await createDeps(loadConfig(env), database, pino({ level: 'silent' }));
    cleanups.push(async () => {
      await closeDeps(deps);
      await database.close();
    });
    const db = database.db;
    await seedDemoCatalog(db);
    // The API processes only place orders (no worker runs): the node is never dialled.
    await deps.nodes.add({
      name: 'pve-mum1',
      kind: 'proxmox',
      locationCode: 'mum1',
      endpoint: 'http://127.0.0.1:9',
      credentials: { token_id: 'a@pve!b', token_secret: 'x' },
      capacity: 500,
    });
    const secrets: string[] = [];
    for (let i = 0; i < ACCOUNTS; i++) {
      const account = await deps.accounts.register({
        name: `Invoice Race ${i}`,
        email: `race${i}@example.in`,
        username: `race${i}`,
        password: `race-password-${i}`,
      });
      await deps.wallet.credit(account.id, '5000', 'float');
      secrets.push((await deps.tokens.create(account.id, { name: 'deploy', scopes: ['*'] })).secret);
    }

    const servers: string[] = [];
    for (let i = 0; i < 2; i++) {
      const port = await freePort();
      const running = runNode('server/src/main.ts', ['--role=api'], { ...env, PORT: String(port) });
      cleanups.push(() => void running.child.kill('SIGKILL'));
      await waitForJson(`http://127.0.0.1:${port}/api/v1/health/`, running);
      servers.push(`http://127.0.0.1:${port}`);
    }

    // Charge k goes to process k % 2, for account ⌊k / 5⌋: each account's orders meet in both.
    const answers = await Promise.all(
      Array.from({ length: CHARGES }, async (_, k) => {
        const res = await fetch(`${servers[k % 2]}/api/v1/instances`, {
          method: 'POST',
          headers: {
            authorization: `Bearer ${secrets[Math.floor(k / PER_ACCOUNT)]}`,
            'content-type': 'application/json',
          },
          body: JSON.stringify({
            plan: 'vps-1c-1g',
            server_name: `race${k}`,
            region: 'mum1',
            eula: true,
            idempotency_key: `race-${k}`,
          }),
        });
        return { status: res.status, body: await res.text() };
      }),
    );
    for (const a of answers) assert.equal(a.status, 201, a.body);

    const charges = await db
      .selectFrom('wallet_transactions')
      .select(['id', 'amount_paise', 'reference_id'])
      .where('kind', '=', 'order')
      .execute();
    assert.equal(charges.length, CHARGES, 'one debit per deploy');
    const issued = await db.selectFrom('invoices').selectAll().orderBy('fy').orderBy('serial').execute();
    assert.equal(issued.length, CHARGES, 'one invoice per charge');
    for (const charge of charges) {
      const mine = issued.filter((i) => i.order_id === charge.reference_id);
      assert.equal(mine.length, 1, `the charge of order ${charge.reference_id} has exactly one invoice`);
      assert.equal(BigInt(mine[0]?.total_paise as string), -BigInt(charge.amount_paise), 'its total is the debit');
    }
    assert.equal(new Set(issued.map((i) => i.number)).size, CHARGES, 'no number twice');
    // Per financial year (a run across 1 April IST would start a second series at 1).
    const byYear = new Map<string, number[]>();
    for (const i of issued) byYear.set(i.fy, [...(byYear.get(i.fy) ?? []), i.serial]);
    for (const [fy, serials] of byYear) {
      assert.deepEqual(
        serials,
        serials.map((_, n) => n + 1),
        `FY ${fy}: serials 1…${serials.length} with no gap`,
      );
    }
    const series = await db.selectFrom('invoice_series').selectAll().execute();
    for (const s of series) assert.equal(s.next_serial, (byYear.get(s.fy)?.length ?? 0) + 1, 'the series is at n + 1');
  });
});

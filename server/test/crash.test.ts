// kill -9 mid-provisioning (reliability T5): the server dies while the VM is being created;
// after a restart the job resumes and completes with exactly one VM, and the money is consistent.
// The emulator runs in its own process, so it outlives the server as a real node would.

import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, test } from 'node:test';
import { sql } from 'kysely';
import pino from 'pino';
import { loadConfig } from '../src/config.ts';
import { seedDemoCatalog } from '../src/core/catalog/demo-seed.ts';
import { closeDeps, createDeps } from '../src/core/deps.ts';
import { openDatabase, targetFromConfig } from '../src/db/database.ts';
import { migrateToLatest } from '../src/db/migrator.ts';
import { createTestDatabase, onPostgres } from './support/harness.ts';
import { freePort, type Running, runNode, waitForJson } from './support/process.ts';
import { waitFor } from './support/wait.ts';

const cleanups: (() => Promise<void> | void)[] = [];
after(async () => {
  for (const cleanup of cleanups.reverse()) await cleanup();
});

async function startEmulator(): Promise<{ url: string; tokenId: string; tokenSecret: string; process: Running }> {
  const tokenSecret = '6b1f7c2e-1111-4222-8333-444455556666';
  const running = runNode(
    'emulators/src/proxmox/main.ts',
    ['--port', '0', '--task-delay', '1500', '--token-secret', tokenSecret],
    {},
  );
  cleanups.push(() => void running.child.kill('SIGKILL'));
  await waitFor('the emulator to print its address', async () => running.output().includes('"url"'), 120_000);
  const info = JSON.parse(running.output().split('\n')[0] as string) as { url: string; token_id: string };
  return { url: info.url, tokenId: info.token_id, tokenSecret, process: running };
}

class Client {
  cookie = '';
  csrf = '';
  readonly base: string;
  constructor(base: string) {
    this.base = base;
  }
  async call<T extends object = Record<string, unknown>>(
    method: string,
    path: string,
    body?: unknown,
  ): Promise<T & { status: number }> {
    const res = await fetch(`${this.base}${path}`, {
      method,
      headers: {
        ...(this.cookie ? { cookie: this.cookie } : {}),
        ...(body ? { 'content-type': 'application/json', 'x-csrf-token': this.csrf } : {}),
      },
      ...(body ? { body: JSON.stringify(body) } : {}),
    });
    const set = res.headers.get('set-cookie');
    if (set) this.cookie = set.split(';')[0] as string;
    const json = (await res.json()) as T & { csrf_token?: unknown };
    if (typeof json.csrf_token === 'string') this.csrf = json.csrf_token;
    return { ...json, status: res.status };
  }
}

describe('crash during provisioning', () => {
  test('kill -9 while the VM is being created; after a restart: active, one VM, money consistent', {
    timeout: 180_000,
  }, async () => {
    const emulator = await startEmulator();
    const dataDir = mkdtempSync(join(tmpdir(), 'hostplane-crash-'));
    cleanups.push(() => rmSync(dataDir, { recursive: true, force: true }));
    const env: Record<string, string> = {
      DATA_DIR: dataDir,
      DEMO: '0',
      LOG_LEVEL: 'warn',
      SECRET_KEY: randomBytes(32).toString('base64'),
    };
    if (onPostgres) {
      const testDb = await createTestDatabase();
      await testDb.database.close();
      env.DATABASE_URL = testDb.url as string;
      cleanups.push(() => testDb.drop());
    }

    // Prepare the catalog, a node pointing at the emulator and a funded, verified client.
    const config = loadConfig(env);
    const database = await openDatabase(targetFromConfig(config, 'crash test setup'));
    await migrateToLatest(database.db);
    const deps = await createDeps(config, database, pino({ level: 'silent' }));
    await seedDemoCatalog(database.db);
    await deps.nodes.add({
      name: 'pve-mum1',
      kind: 'proxmox',
      locationCode: 'mum1',
      endpoint: emulator.url,
      credentials: { token_id: emulator.tokenId, token_secret: emulator.tokenSecret },
      capacity: 10,
    });
    const account = await deps.accounts.register({
      name: 'Crash Test',
      email: 'crash@example.in',
      username: 'crash',
      password: 'crash-test-1',
    });
    await deps.accounts.markVerified(account.id);
    await deps.wallet.credit(account.id, '1000', 'test float');
    const plan = await database.db
      .selectFrom('plans')
      .select('id')
      .where('label', '=', 'vps-1c-1g')
      .executeTakeFirstOrThrow();
    await closeDeps(deps);
    await database.close();

    const port = await freePort();
    const serverEnv = { ...env, PORT: String(port) };
    const first = runNode('server/src/main.ts', [], serverEnv);
    cleanups.push(() => void first.child.kill('SIGKILL'));
    await waitForJson(`http://127.0.0.1:${port}/api/v1/health/`, first);
    const client = new Client(`http://127.0.0.1:${port}/api/v1/client`);
    await client.call('GET', '/auth/csrf/');
    assert.equal(
      (
        await client.call('POST', '/auth/login/', {
          identifier: 'crash',
          password: 'crash-test-1',
          csrf_token: client.csrf,
        })
      ).status,
      200,
    );
    const placed = await client.call('POST', '/orders/', {
      plan_id: plan.id,
      config: { hostname: 'crash.example.in', os: 'ubuntu-24.04' },
      idempotency_key: 'crash-1',
    });
    assert.equal(placed.status, 201, JSON.stringify(placed));
    const serviceId = (placed.service as { id: number }).id;

    // Wait for the clone to be under way (its task takes 1.5 s), then kill the server outright.
    for (;;) {
      const { service } = await client.call<{ service: { last_job: { step: string | null } } }>(
        'GET',
        `/services/?id=${serviceId}`,
      );
      if (service.last_job.step === 'creating the virtual machine') break;
      await new Promise((r) => setTimeout(r, 20));
    }
    await new Promise((r) => setTimeout(r, 300));
    first.child.kill('SIGKILL');
    await first.exited;

    const second = runNode('server/src/main.ts', [], serverEnv);
    cleanups.push(() => void second.child.kill('SIGKILL'));
    await waitForJson(`http://127.0.0.1:${port}/api/v1/health/`, second);
    await waitFor(
      'the service to become active',
      async () => {
        const res = await client.call<{ service?: { status: string } }>('GET', `/services/?id=${serviceId}`);
        return res.service?.status === 'active';
      },
      120_000,
    );

    const state = (await (await fetch(`${emulator.url}/__emulator/state`)).json()) as {
      vms: { name: string }[];
      calls: Record<string, number>;
    };
    assert.equal(state.vms.filter((vm) => vm.name.endsWith(`-svc-${serviceId}`)).length, 1, 'exactly one VM');
    assert.equal(state.calls['POST /nodes/:/qemu/:/clone'], 1, 'cloned once');
    const wallet = await client.call<{ wallet: { balance: string } }>('GET', '/wallet/');
    assert.equal(wallet.wallet.balance, '701.00');
    second.child.kill('SIGTERM');
    assert.equal(await second.exited, 0);

    // The ledger, read directly: rows sum to the balance; one debit, no refund.
    const check = await openDatabase(targetFromConfig(loadConfig(env), 'crash test check'));
    const { rows } = await sql<{
      sum: string;
      n: string;
    }>`select sum(amount_paise) as sum, count(*) as n from wallet_transactions where account_id = ${account.id}`.execute(
      check.db,
    );
    const balance = await check.db
      .selectFrom('wallets')
      .select('balance_paise')
      .where('account_id', '=', account.id)
      .executeTakeFirstOrThrow();
    const order = await check.db.selectFrom('orders').select('status').executeTakeFirstOrThrow();
    await check.close();
    assert.deepEqual(rows[0], { sum: '70100', n: '2' });
    assert.equal(balance.balance_paise, '70100');
    assert.equal(order.status, 'paid');
  });
});

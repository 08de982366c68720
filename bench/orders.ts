// `npm run bench -- orders`: (1) order placement over HTTP on PostgreSQL — 1000 funded accounts
// (orders count against the deploy allowance, 10 an hour per account, so each account places at
// most 10 and the requests measured are placements, not 429s), 50 connections, every request a new idempotency key — against the same write set (idempotency
// lock and record, conditional debit, ledger row, order, service, IPv4, job row) run bare through
// `pg` by 50 concurrent clients in the same run; (2) the time from order to `active` through the
// real driver with the Proxmox emulator answering after 5 ms.

import { randomBytes } from 'node:crypto';
import autocannon from 'autocannon';
import pg from 'pg';
import pino from 'pino';
import { startProxmoxEmulator } from '../emulators/src/proxmox/index.ts';
import { loadConfig } from '../server/src/config.ts';
import { createSession, csrfTokenFor } from '../server/src/core/auth/sessions.ts';
import { seedDemoCatalog } from '../server/src/core/catalog/demo-seed.ts';
import { addRange } from '../server/src/core/catalog/ipv4.ts';
import { closeDeps, createDeps, type Deps } from '../server/src/core/deps.ts';
import { publicId } from '../server/src/core/ids.ts';
import { openDatabase } from '../server/src/db/database.ts';
import { type BenchOptions, startHostplane } from './support.ts';

const ACCOUNTS = 1000;

/** Concurrent ordering is a PostgreSQL question: embedded mode serialises everything on one connection. */
export const engine = 'postgresql' as const;

interface Prepared {
  deps: Deps;
  planId: number;
  sessions: { cookie: string; csrf: string; accountId: number }[];
  close(): Promise<void>;
}

/** Catalog, a big IPv4 pool, a node, and funded accounts with sessions, made through the core. */
async function prepare(
  env: Record<string, string>,
  endpoint: string,
  credentials: Record<string, string>,
): Promise<Prepared> {
  const config = loadConfig(env);
  const database = await openDatabase({ engine: 'postgresql', url: env.DATABASE_URL as string, poolSize: 4 });
  const deps = await createDeps(config, database, pino({ level: 'silent' }));
  await seedDemoCatalog(database.db);
  const mum1 = await deps.catalog.location('mum1');
  for (const cidr of ['10.20.0.0/20', '10.20.16.0/20', '10.20.32.0/20', '10.20.48.0/20'])
    await addRange(database.db, mum1.id, cidr);
  await deps.nodes.add({
    name: 'pve-bench',
    kind: 'proxmox',
    locationCode: 'mum1',
    endpoint,
    credentials,
    settings: { node: 'pve' },
    capacity: 1_000_000,
  });
  const plan = await database.db
    .selectFrom('plans')
    .select('id')
    .where('label', '=', 'vps-1c-1g')
    .executeTakeFirstOrThrow();
  const sessions = [];
  for (let i = 0; i < ACCOUNTS; i++) {
    const account = await deps.accounts.register({
      name: `Bench ${i}`,
      email: `bench${i}@example.in`,
      username: `bench${i}`,
      password: 'bench-pass-1',
    });
    await deps.accounts.markVerified(account.id);
    await deps.wallet.credit(account.id, '100000', 'bench float');
    const session = await createSession(database.db, deps.clock, account.id, {
      remember: false,
      ip: null,
      userAgent: 'bench',
    });
    sessions.push({
      cookie: `SVCSESSID=${session.id}`,
      csrf: csrfTokenFor(deps.secretKey, session.id),
      accountId: account.id,
    });
  }
  return {
    deps,
    planId: plan.id,
    sessions,
    async close() {
      await closeDeps(deps);
      await database.close();
    },
  };
}

async function httpPlacement(url: string, prepared: Prepared, options: BenchOptions) {
  let n = 0;
  const result = await autocannon({
    url,
    connections: options.connections,
    duration: options.duration,
    requests: [
      {
        method: 'POST',
        path: '/api/v1/client/orders/',
        setupRequest: (request) => {
          n++;
          const s = prepared.sessions[n % prepared.sessions.length] as Prepared['sessions'][number];
          return {
            ...request,
            headers: { 'content-type': 'application/json', cookie: s.cookie, 'x-csrf-token': s.csrf },
            body: JSON.stringify({
              plan_id: prepared.planId,
              config: {
                hostname: `h${n}-${randomBytes(3).toString('hex')}.example.in`,
                os: 'ubuntu-24.04',
                region: 'mum1',
              },
              idempotency_key: `bench-${n}-${randomBytes(6).toString('hex')}`,
            }),
          };
        },
      },
    ],
  });
  // autocannon stops sending at the deadline; let the requests still in the server finish.
  await new Promise((r) => setTimeout(r, 3000));
  return {
    rps: Math.round(result.requests.average),
    p50: result.latency.p50,
    p99: result.latency.p99,
    non2xx: result.non2xx,
    errors: result.errors,
  };
}

/** The order transaction's writes, bare: what an order costs the database without HTTP or validation. */
async function barePlacement(url: string, prepared: Prepared, options: BenchOptions) {
  const pool = new pg.Pool({ connectionString: url, max: options.connections });
  const { rows } = await pool.query<{ id: number; location_id: number; node_id: number }>(
    `select p.id, l.id as location_id, n.id as node_id from plans p, locations l, nodes n where p.label = 'vps-1c-1g' and l.code = 'mum1' and n.name = 'pve-bench'`,
  );
  const ids = rows[0] as { id: number; location_id: number; node_id: number };
  let done = 0;
  const latencies: number[] = [];
  const deadline = Date.now() + options.duration * 1000;
  const worker = async (w: number) => {
    const client = await pool.connect();
    try {
      for (let i = 0; Date.now() < deadline; i++) {
        const accountId = (prepared.sessions[(w + i) % prepared.sessions.length] as { accountId: number }).accountId;
        const key = `bare-${w}-${i}-${randomBytes(4).toString('hex')}`;
        const started = performance.now();
        // The statements of the ordering transaction, in its order (and so its lock order).
        await client.query('begin');
        await client.query('select pg_try_advisory_xact_lock(hashtextextended($1, 0))', [
          `idempotency:${accountId}:${key}`,
        ]);
        await client.query('select 1 from idempotency_keys where account_id = $1 and key = $2', [accountId, key]);
        await client.query('select * from plans where id = $1', [ids.id]);
        await client.query(
          'select l.* from plan_locations pl join locations l on l.id = pl.location_id where pl.plan_id = $1',
          [ids.id],
        );
        await client.query(`select * from os_templates where slug = 'ubuntu-24.04' and active`);
        await client.query(`select id from services where account_id = $1 and label = $2 and status <> 'terminated'`, [
          accountId,
          key.slice(0, 60),
        ]);
        await client.query(
          `select count(*) from services where node_id = $1 and status not in ('terminated', 'failed')`,
          [ids.node_id],
        );
        const order = await client.query<{ id: number }>(
          `insert into orders (public_id, account_id, plan_id, kind, status, amount_paise, location_id, paid_at) values ($1, $2, $3, 'new', 'paid', 29900, $4, now()) returning id`,
          [publicId('order'), accountId, ids.id, ids.location_id],
        );
        await client.query('insert into wallets (account_id) values ($1) on conflict (account_id) do nothing', [
          accountId,
        ]);
        const wallet = await client.query<{ balance_paise: string }>(
          'update wallets set balance_paise = balance_paise - 29900, updated_at = now() where account_id = $1 and balance_paise - 29900 >= 0 returning balance_paise',
          [accountId],
        );
        const ledger = await client.query<{ id: number }>(
          `insert into wallet_transactions (public_id, account_id, kind, amount_paise, balance_after_paise, reference_type, reference_id) values ($1, $2, 'order', -29900, $3, 'order', $4) returning id`,
          [publicId('pay'), accountId, wallet.rows[0]?.balance_paise, order.rows[0]?.id],
        );
        const service = await client.query<{ id: number }>(
          `insert into services (account_id, plan_id, order_id, type, label, status, location_id, price_paise) values ($1, $2, $3, 'vps', $4, 'provisioning', $5, 29900) returning id`,
          [accountId, ids.id, order.rows[0]?.id, key.slice(0, 60), ids.location_id],
        );
        await client.query('update orders set transaction_id = $1, service_id = $2 where id = $3', [
          ledger.rows[0]?.id,
          service.rows[0]?.id,
          order.rows[0]?.id,
        ]);
        await client.query(
          `update ipv4_addresses set status = 'allocated', service_id = $1, allocated_at = now() where id = (select id from ipv4_addresses where location_id = $2 and status = 'free' order by id limit 1 for update skip locked)`,
          [service.rows[0]?.id, ids.location_id],
        );
        await client.query(`insert into jobs (account_id, service_id, type) values ($1, $2, 'provision')`, [
          accountId,
          service.rows[0]?.id,
        ]);
        await client.query(
          `insert into service_events (service_id, kind, message) values ($1, 'order_placed', 'bench')`,
          [service.rows[0]?.id],
        );
        await client.query('select id from nodes where id = $1 for update', [ids.node_id]);
        await client.query(
          `select count(*) from services where node_id = $1 and status not in ('terminated', 'failed')`,
          [ids.node_id],
        );
        await client.query('update services set node_id = $1 where id = $2', [ids.node_id, service.rows[0]?.id]);
        await client.query(
          `insert into idempotency_keys (account_id, key, scope, request_hash, response_status, response_body) values ($1, $2, 'bench', 'x', 201, '{}')`,
          [accountId, key],
        );
        await client.query('commit');
        latencies.push(performance.now() - started);
        done++;
      }
    } finally {
      client.release();
    }
  };
  await Promise.all(Array.from({ length: options.connections }, (_, w) => worker(w)));
  await pool.end();
  latencies.sort((a, b) => a - b);
  return {
    rps: Math.round(done / options.duration),
    p50: Math.round(latencies[latencies.length >> 1] ?? 0),
    p99: Math.round(latencies[Math.floor(latencies.length * 0.99)] ?? 0),
  };
}

async function orderToActive(options: BenchOptions): Promise<string> {
  const pve = await startProxmoxEmulator({ taskDelayMs: 50 });
  await pve.setFaults({ latencyMs: 5 });
  const secret = randomBytes(32).toString('base64');
  const app = await startHostplane(options, { SECRET_KEY: secret });
  const env = { ...app.env, SECRET_KEY: secret };
  const prepared = await prepare(env, pve.url, { token_id: pve.tokenId, token_secret: pve.tokenSecret });
  const times: number[] = [];
  try {
    for (let i = 0; i < 20; i++) {
      const s = prepared.sessions[i] as Prepared['sessions'][number];
      const started = performance.now();
      const res = await fetch(`${app.url}/api/v1/client/orders/`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', cookie: s.cookie, 'x-csrf-token': s.csrf },
        body: JSON.stringify({
          plan_id: prepared.planId,
          config: { hostname: `active${i}.example.in`, os: 'ubuntu-24.04', region: 'mum1' },
          idempotency_key: `active-${i}`,
        }),
      });
      const placed = (await res.json()) as { service?: { id: number }; message?: string };
      if (!placed.service) throw new Error(`order failed: ${res.status} ${JSON.stringify(placed)}`);
      const service = placed.service;
      for (;;) {
        const detail = (await (
          await fetch(`${app.url}/api/v1/client/services/?id=${service.id}`, { headers: { cookie: s.cookie } })
        ).json()) as { service: { status: string } };
        if (detail.service.status === 'active' || detail.service.status === 'failed') break;
        await new Promise((r) => setTimeout(r, 10));
      }
      times.push(performance.now() - started);
    }
  } finally {
    await prepared.close();
    await app.stop();
    await pve.stop();
  }
  times.sort((a, b) => a - b);
  const at = (q: number) => Math.round(times[Math.min(times.length - 1, Math.floor(times.length * q))] ?? 0);
  return `Order → active through the Proxmox driver (emulator: 5 ms per API call, 50 ms per task; clone, configure, resize, start): 20 orders one after another: p50 ${at(0.5)} ms, p95 ${at(0.95)} ms, max ${at(1)} ms.`;
}

export async function run(options: BenchOptions): Promise<string> {
  const pg = { ...options, engine: 'postgresql' as const };
  const secret = randomBytes(32).toString('base64');
  // The API alone (no worker), so the orders measured are placements, not provisioning.
  const app = await startHostplane(pg, { SECRET_KEY: secret }, ['--role=api']);
  const prepared = await prepare({ ...app.env, SECRET_KEY: secret }, 'http://127.0.0.1:9', {
    token_id: 'x@pve!y',
    token_secret: 'unused',
  });
  const rows: string[] = [];
  try {
    await httpPlacement(app.url, prepared, { ...pg, duration: 2 }); // warm-up
    for (let round = 1; round <= options.rounds; round++) {
      const bare = await barePlacement(app.env.DATABASE_URL as string, prepared, pg);
      rows.push(`| bare pg transaction #${round} | ${bare.rps} | ${bare.p50} | ${bare.p99} | - | 1.00 (baseline) |`);
      const http = await httpPlacement(app.url, prepared, pg);
      rows.push(
        `| POST /api/v1/client/orders/ #${round} | ${http.rps} | ${http.p50} | ${http.p99} | ${http.non2xx} | ${(http.rps / bare.rps).toFixed(2)} |`,
      );
    }
  } finally {
    await prepared.close();
    await app.stop();
  }
  const table = [
    '| run | orders/s | p50 ms | p99 ms | non-2xx | ratio to baseline |',
    '|---|---:|---:|---:|---:|---:|',
    ...rows,
  ].join('\n');
  return `${table}\n\n${await orderToActive(pg)}`;
}

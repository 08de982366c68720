// `npm run bench -- search [--engine postgresql]`: search latency (issue 15). One account
// owns 100,000 rows across the five kinds a search covers (services, IPv4 addresses, orders, wallet
// transactions, deposits; 20,000 each); measured twice in one run: first in a database holding only
// that account's rows (100,000), then after 9,000 other accounts' 900,000 rows are added (1,000,000).
// Rows are bulk-loaded with SQL (`insert … select generate_series`), not through the API; then
// VACUUM ANALYZE. Over real HTTP, with the account's read tokens (an account holds at most 20, and a
// token may search 30 times per 10 s, so requests are paced to stay under both limits), a fixed mix
// of queries of every shape runs sequentially (latency, not throughput), interleaved round-robin with
// the same-run baseline, `GET /api/v1/instances/<id>` (a primary-key lookup through the same
// server). After each size, with the server stopped, the statements the search service runs for
// every query are captured (a logging Kysely over the same pool) and run under
// EXPLAIN (ANALYZE, BUFFERS); the plans of the slowest shape are printed, all of them written to a
// file. Every answer is checked (200, same totals at both sizes: the other accounts' rows never count).
// BENCH_SEARCH_ROUNDS (200) and BENCH_SEARCH_MINUTES (10 per size) bound the measuring;
// BENCH_SEARCH_KEEP=1 keeps the loaded database afterwards; BENCH_SEARCH_SMALL=1 stops after
// 100,000 rows (the 1M columns then repeat the 100k figures); BENCH_PROFILE=<dir> profiles the server.
// Requests go through node:http on one kept-alive connection; BENCH_SEARCH_CLIENT=fetch uses fetch.

import { createHash, randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { Agent, request } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { type CompiledQuery, Kysely, PostgresDialect, type RawBuilder, sql } from 'kysely';
import pino from 'pino';
import { loadConfig } from '../server/src/config.ts';
import { seedDemoCatalog } from '../server/src/core/catalog/demo-seed.ts';
import { closeDeps, createDeps } from '../server/src/core/deps.ts';
import { parseSearch } from '../server/src/core/search/query.ts';
import { createSearch } from '../server/src/core/search/search.service.ts';
import { type Database, openDatabase } from '../server/src/db/database.ts';
import { migrateToLatest } from '../server/src/db/migrator.ts';
import type { DB } from '../server/src/db/tables.ts';
import { type BenchOptions, freePort, scratchDatabase, startServerProcess } from './support.ts';

// ---------------------------------------------------------------------------------------------
// The data: row n of each kind (n counts across all accounts) is a pure function of n, so the
// queries below can name rows that exist without asking the database.

/** Rows of each kind the target account owns (5 kinds → 100,000 rows). */
const OWN = 20_000;
/** Other accounts in the 1,000,000-row database, and rows of each kind each one owns. */
const OTHERS = 9_000;
const PER_OTHER = 20;
const TOTAL = OWN + OTHERS * PER_OTHER; // per kind: 200,000 → 1,000,000 rows over five kinds
const CHUNK = 20_000;

/** Label stems, some accented (search folds case and accents), and their ASCII spelling for hostnames. */
const WORDS = [
  'shop',
  'café',
  'api',
  'db',
  'mail',
  'crm',
  'blog',
  'erp',
  'wiki',
  'git',
  'vpn',
  'cache',
  'queue',
  'search',
  'media',
  'backup',
  'staging',
  'prod',
  'dev',
  'analytics',
  'münchen',
  'são-paulo',
  'zürich',
  'kraków',
  'naïve',
  'résumé',
  'piñata',
  'smørrebrød',
  'ångström',
  'çay',
];
const ASCII = WORDS.map((w) => w.normalize('NFD').replace(/\p{M}/gu, '').replace(/ø/g, 'o').replace(/ü/g, 'u'));
const ROLES = ['web', 'app', 'node', 'worker', 'edge', 'srv', 'box', 'mc', 'game', 'site'];
const CITIES = ['mumbai', 'pune', 'delhi', 'bengaluru', 'chennai', 'kolkata', 'hyderabad', 'jaipur', 'kochi', 'indore'];
/** Plans by the service type of row n (n % 3), chosen by (n / 3) % length. */
const PLANS = {
  vps: ['vps-1c-1g', 'vps-2c-4g', 'vps-4c-8g'],
  game: ['mc-java-2g', 'mc-java-4g', 'mc-bedrock-2g', 'valheim-4g'],
  web: ['web-starter', 'web-business'],
} as const;
const TYPES = ['vps', 'game', 'web'] as const;
const CROCKFORD = '0123456789abcdefghjkmnpqrstvwxyz';
/** Public-id salts per kind: the 40-bit half that makes an id unique is a bijection of n + salt. */
const SALT = { order: 1, transaction: 2, deposit: 3 } as const;
const MIX = 2_654_435_761n; // odd, so n ↦ n·MIX mod 2^40 is a bijection
const MASK = (1n << 40n) - 1n;
const IP_BASE = '10.0.0.0';

const word = (n: number) => WORDS[n % WORDS.length] as string;
const ascii = (n: number) => ASCII[n % ASCII.length] as string;
const role = (n: number) => ROLES[Math.floor(n / WORDS.length) % ROLES.length] as string;
const label = (n: number) => `${word(n)}-${role(n)}-${n}`;
/** Row n is a VPS when n % 3 = 0 (hostname), a game server at 1, web hosting at 2 (domain). */
/** The MAC address of service n's NIC when it is a virtual server (n % 3 = 0): 02:00 and n in hex. */
const mac = (n: number) => `02:00:${(n.toString(16).padStart(8, '0').match(/../g) as string[]).join(':')}`;
const hostname = (n: number) => `${ascii(n)}-${n}.${CITIES[Math.floor(n / 7) % CITIES.length]}.example.in`;
const domain = (n: number) => `${ascii(n)}${n}.co.in`;
/** The target's addresses sit at offsets ≡ 1 (mod 8) from 10.0.0.0; the others' fill the rest of each block. */
function ipOffset(n: number): number {
  if (n < OWN) return n * 8 + 1;
  const k = n - OWN;
  return Math.floor(k / 7) * 8 + (k % 7) + 2;
}
const ip = (n: number) => {
  const v = ipOffset(n) + 10 * 2 ** 24;
  return [24, 16, 8, 0].map((s) => Math.floor(v / 2 ** s) % 256).join('.');
};
function b32(x: bigint): string {
  let out = '';
  for (let k = 7; k >= 0; k--) out += CROCKFORD[Number((x >> BigInt(5 * k)) & 31n)];
  return out;
}
function publicIdOf(kind: keyof typeof SALT, n: number): string {
  const seed = n + SALT[kind] * 2 ** 24;
  const random = BigInt(`0x${createHash('md5').update(String(seed)).digest('hex').slice(0, 10)}`);
  const unique = (BigInt(seed) * MIX) & MASK;
  return `${kind === 'order' ? 'order' : 'pay'}_${b32(random)}${b32(unique)}`;
}

// The same functions in SQL, over a column `n`.
const textArray = (values: readonly string[]) => sql`array[${sql.join(values.map((v) => sql.lit(v)))}]::text[]`;
const sqlWord = sql`(${textArray(WORDS)})[n % ${sql.lit(WORDS.length)} + 1]`;
const sqlAscii = sql`(${textArray(ASCII)})[n % ${sql.lit(ASCII.length)} + 1]`;
const sqlRole = sql`(${textArray(ROLES)})[(n / ${sql.lit(WORDS.length)}) % ${sql.lit(ROLES.length)} + 1]`;
const sqlLabel = sql`${sqlWord} || '-' || ${sqlRole} || '-' || n`;
const sqlHostname = sql`${sqlAscii} || '-' || n || '.' || (${textArray(CITIES)})[(n / 7) % ${sql.lit(CITIES.length)} + 1] || '.example.in'`;
const sqlDomain = sql`${sqlAscii} || n || '.co.in'`;
function sqlB32(x: RawBuilder<unknown>) {
  const chars = [];
  for (let k = 7; k >= 0; k--)
    chars.push(sql`substr(${sql.lit(CROCKFORD)}, ((${x} >> ${sql.lit(5 * k)}) & 31)::int + 1, 1)`);
  return sql.join(chars, sql` || `);
}
function sqlPublicId(kind: keyof typeof SALT) {
  const seed = sql`(n::bigint + ${sql.lit(SALT[kind] * 2 ** 24)})`;
  const random = sql`('x' || substr(md5(${seed}::text), 1, 10))::bit(40)::bigint`;
  const unique = sql`((${seed} * ${sql.lit(Number(MIX))}) & ${sql.lit(Number(MASK))})`;
  return sql`${sql.lit(kind === 'order' ? 'order_' : 'pay_')} || ${sqlB32(random)} || ${sqlB32(unique)}`;
}
/** A 12-digit UPI reference, unique per n (multiplying by a prime coprime to 10 is a bijection mod 10^12). */
const sqlUtr = sql`lpad(((n::bigint * 982451653 + 100000000000) % 1000000000000)::text, 12, '0')`;

interface Catalog {
  plans: Record<string, { id: number; name: string; price: string }>;
  locations: number[];
}

async function catalogOf(database: Database): Promise<Catalog> {
  const plans = await database.db.selectFrom('plans').select(['id', 'label', 'name', 'price_paise']).execute();
  const locations = await database.db.selectFrom('locations').select('id').orderBy('id').execute();
  return {
    plans: Object.fromEntries(plans.map((p) => [p.label, { id: p.id, name: p.name, price: String(p.price_paise) }])),
    locations: locations.map((l) => l.id),
  };
}

/** `case n % 3 …` choosing row n's plan (column `what` of it). */
function sqlPlan(catalog: Catalog, what: 'id' | 'name' | 'price') {
  const arms = TYPES.map((type, t) => {
    const labels = PLANS[type];
    const values = labels.map((l) => {
      const plan = catalog.plans[l];
      if (!plan) throw new Error(`plan ${l} missing from the demo catalog`);
      return what === 'name' ? sql.lit(plan.name) : sql.lit(Number(plan[what]));
    });
    return sql`when ${sql.lit(t)} then (array[${sql.join(values)}])[(n / 3) % ${sql.lit(labels.length)} + 1]`;
  });
  return sql`(case n % 3 ${sql.join(arms, sql` `)} end)`;
}

/**
 * Rows n0 … n1-1 of every kind. `account` maps n to its owner (an SQL expression over n).
 * Services first, then one allocated address per service, orders, ledger rows and deposits.
 */
async function loadRows(database: Database, catalog: Catalog, n0: number, n1: number, account: RawBuilder<unknown>) {
  const db = database.db;
  const series = sql`generate_series(${sql.lit(n0)}::int, ${sql.lit(n1 - 1)}::int) as g(n)`;
  const location = sql`(array[${sql.join(catalog.locations.map((l) => sql.lit(l)))}])[n % ${sql.lit(catalog.locations.length)} + 1]`;
  const type = sql`(array['vps', 'game', 'web'])[n % 3 + 1]`;
  const { max } = (await sql<{ max: number | null }>`select max(id) as max from services`.execute(db)).rows[0] as {
    max: number | null;
  };
  await sql`
    insert into services (account_id, plan_id, type, label, status, location_id, price_paise, config, external,
      created_at, activated_at, suspended_at, terminated_at, period_end)
    select ${account}, ${sqlPlan(catalog, 'id')}, ${type}, ${sqlLabel},
      case n % 20 when 0 then 'suspended' when 1 then 'terminated' when 2 then 'failed' else 'active' end,
      ${location}, ${sqlPlan(catalog, 'price')},
      case n % 3
        when 0 then jsonb_build_object('hostname', ${sqlHostname}, 'os', 'ubuntu-24.04')
        when 1 then jsonb_build_object('server_name', ${sqlLabel}, 'eula', true)
        else jsonb_build_object('domain', ${sqlDomain}) end,
      case when n % 3 = 0 then jsonb_build_object('node', 'pve', 'vmid', 100 + n, 'name', 'hp-svc-' || n, 'macs',
        jsonb_build_array('02:00:' || regexp_replace(lpad(to_hex(n), 8, '0'), '(..)(?!$)', '\\1:', 'g'))) end,
      now() - n * interval '1 minute',
      case when n % 20 > 2 or n % 20 = 0 then now() - n * interval '1 minute' end,
      case when n % 20 = 0 then now() end,
      case when n % 20 = 1 then now() end,
      now() + interval '30 days'
    from ${series}`.execute(db);
  // The address of service n (its label ends in n): the target's at offsets ≡ 1 (mod 8) of 10.0.0.0/8.
  await sql`
    insert into ipv4_addresses (location_id, address, prefix, gateway, status, service_id, allocated_at)
    select s.location_id,
      ${sql.lit(IP_BASE)}::inet + (case when n < ${sql.lit(OWN)} then n * 8 + 1
        else ((n - ${sql.lit(OWN)}) / 7) * 8 + (n - ${sql.lit(OWN)}) % 7 + 2 end),
      8, '10.0.0.1'::inet, 'allocated', s.id, s.created_at
    from (select s.*, substring(s.label from '(\\d+)$')::int as n from services s where s.id > ${sql.lit(max ?? 0)}) s`.execute(
    db,
  );
  await sql`
    insert into orders (public_id, account_id, plan_id, kind, status, amount_paise, config, domain, location_id,
      created_at, paid_at)
    select ${sqlPublicId('order')}, ${account}, ${sqlPlan(catalog, 'id')}, case when n % 4 = 0 then 'renewal' else 'new' end,
      case n % 10 when 0 then 'unpaid' when 1 then 'cancelled' when 2 then 'refunded' else 'paid' end,
      ${sqlPlan(catalog, 'price')}, jsonb_build_object('server_name', ${sqlLabel}),
      case when n % 3 = 2 then ${sqlDomain} end, ${location},
      now() - n * interval '1 minute', case when n % 10 > 0 then now() - n * interval '1 minute' end
    from ${series}`.execute(db);
  // The ledger's notes as the core writes them (order, renewal, deposit, refund) and a staff credit.
  await sql`
    insert into wallet_transactions (public_id, account_id, kind, amount_paise, balance_after_paise, note, created_at)
    select ${sqlPublicId('transaction')}, ${account},
      (array['deposit', 'order', 'renewal', 'refund', 'adjustment'])[n % 5 + 1],
      (n % 50 + 1) * 10000 * case when n % 5 in (1, 2) then -1 else 1 end,
      100000 + (n % 1000) * 100,
      case n % 5
        when 0 then 'Deposit ' || ${sqlPublicId('deposit')} || ' (' || ${sqlUtr} || ')'
        when 1 then ${sqlPlan(catalog, 'name')} || ' (' || ${sqlPublicId('order')} || ')'
        when 2 then 'Renewal of ' || ${sqlLabel} || ': ' || ${sqlPlan(catalog, 'name')} || ' (' || ${sqlPublicId('order')} || ')'
        when 3 then 'Refund of ' || ${sqlPublicId('order')} || ': provisioning failed'
        else 'Goodwill credit, ticket from billing' || n || '@example.in' end,
      now() - n * interval '1 minute'
    from ${series}`.execute(db);
  await sql`
    insert into deposits (public_id, account_id, amount_paise, txn_ref, screenshot_file, screenshot_type,
      screenshot_bytes, status, reason, reviewed_by, reviewed_at, created_at)
    select ${sqlPublicId('deposit')}, ${account}, (n % 50 + 1) * 10000, ${sqlUtr},
      'deposits/bench-' || n || '.png', 'png', 48213,
      case n % 10 when 0 then 'pending' when 1 then 'rejected' else 'approved' end,
      case when n % 10 = 1 then 'The reference does not match the screenshot.' end,
      case when n % 10 > 0 then 'staff' end, case when n % 10 > 0 then now() end,
      now() - n * interval '1 minute'
    from ${series}`.execute(db);
}

// ---------------------------------------------------------------------------------------------
// The query mix: every shape the parser names, several queries each, most finding the target's rows.

interface Shape {
  name: string;
  queries: string[];
}

const SHAPES: Shape[] = [
  { name: 'text: substring', queries: ['shop', 'edge-1', 'minecraft', label(1234), 'pune'] },
  { name: 'text: fuzzy (typo)', queries: ['stagingg', 'analytcs', 'smorebrod', 'angstrm', 'serch-node'] },
  { name: 'text: accented', queries: ['cafe', 'MÜNCHEN', 'zurich', 'Résumé', 'sao paulo'] },
  {
    name: 'domain',
    queries: [hostname(300), domain(602), hostname(18_000), 'nothing-here.example.org', domain(16_667)],
  },
  { name: 'ipv4', queries: [ip(0), ip(12_345), ip(OWN - 1), ip(OWN + 1), '10.200.0.1'] },
  { name: 'cidr', queries: ['10.0.0.0/24', '10.1.0.0/16', '10.0.16.0/20', '10.2.0.0/28', '10.0.'] },
  {
    name: 'mac',
    // Two of the account's virtual servers (as printed by Linux and Windows), another account's
    // (Cisco notation), and one nobody has (one-digit groups, as macOS prints them).
    queries: [
      mac(300).toUpperCase(),
      mac(18_000).replace(/:/g, '-'),
      mac(OWN + 3_001)
        .replace(/:/g, '')
        .replace(/(.{4})(?=.)/g, '$1.'),
      '0:1a:2b:3:4:5',
    ],
  },
  {
    name: 'email',
    queries: ['billing4@example.in', 'BILLING1234@EXAMPLE.IN', 'billing19999@example.in', 'someone@gmail.com'],
  },
  {
    name: 'pay_ id',
    queries: [
      publicIdOf('transaction', 10),
      publicIdOf('deposit', 20),
      publicIdOf('transaction', OWN - 1),
      publicIdOf('deposit', 150_000),
      publicIdOf('transaction', 77_777),
    ],
  },
  {
    name: 'order_ id',
    queries: [
      publicIdOf('order', 5),
      publicIdOf('order', 12_345),
      publicIdOf('order', OWN - 1),
      publicIdOf('order', 150_000),
      publicIdOf('order', 30_000),
    ],
  },
  { name: '#number', queries: ['#1', '#777', `#${OWN}`, '#150000', '#5000'] },
  {
    name: 'operators',
    queries: [
      'status:suspended',
      'loc:mum1 type:vps',
      'type:order status:unpaid',
      'status:active shop',
      'type:deposit status:pending',
      'type:ip loc:blr1',
    ],
  },
];
const BASELINE = 'baseline: GET /instances/<id>';
/** Warm-up: this many rounds, or fewer when they take over a minute (at least one). */
const WARMUP_ROUNDS = 20;
/** Measured rounds per size (one request of every shape and one baseline request per round). */
const ROUNDS = Number(process.env.BENCH_SEARCH_ROUNDS ?? 200);
/** A size stops early after this many minutes of measuring (at least MIN_ROUNDS): slow servers still finish. */
const BUDGET_MINUTES = Number(process.env.BENCH_SEARCH_MINUTES ?? 10);
const MIN_ROUNDS = 10;

// ---------------------------------------------------------------------------------------------
// Setup through the core (PGlite allows one process on a data directory: the bench's own
// connection is closed before the server starts, and reopened between sizes).

async function open(env: Record<string, string>): Promise<Database> {
  const config = loadConfig(env);
  return openDatabase(
    config.databaseUrl
      ? { engine: 'postgresql', url: config.databaseUrl, poolSize: 2 }
      : { engine: 'pglite', dataDir: config.dataDir, role: 'bench setup' },
  );
}

async function analyze(database: Database): Promise<void> {
  for (const table of [
    'accounts',
    'wallets',
    'services',
    'ipv4_addresses',
    'orders',
    'wallet_transactions',
    'deposits',
  ])
    await sql`vacuum analyze ${sql.table(table)}`.execute(database.db);
}

async function count(database: Database): Promise<number> {
  const { rows } = await sql<{ n: string }>`
    select (select count(*) from services) + (select count(*) from ipv4_addresses where service_id is not null)
      + (select count(*) from orders) + (select count(*) from wallet_transactions) + (select count(*) from deposits) as n`.execute(
    database.db,
  );
  return Number(rows[0]?.n);
}

/** Catalog, the target account with 20 read tokens, and its 100,000 rows. */
async function setupTarget(env: Record<string, string>) {
  const database = await open(env);
  await migrateToLatest(database.db);
  const deps = await createDeps(loadConfig(env), database, pino({ level: 'silent' }));
  try {
    await seedDemoCatalog(database.db);
    const account = await deps.accounts.register({
      name: 'Priya Search',
      email: 'priya.search@example.in',
      username: 'priyasearch',
      password: 'bench-pass-1',
    });
    await deps.accounts.markVerified(account.id);
    await sql`insert into wallets (account_id, balance_paise) values (${account.id}, 500000)`.execute(database.db);
    const tokens: string[] = [];
    for (let i = 0; i < 20; i++)
      tokens.push((await deps.tokens.create(account.id, { name: `bench ${i}`, scopes: ['read'] })).secret);
    const catalog = await catalogOf(database);
    const started = performance.now();
    await loadRows(database, catalog, 0, OWN, sql.lit(account.id));
    await analyze(database);
    const seconds = (performance.now() - started) / 1000;
    const serviceIds = (
      await database.db.selectFrom('services').select('id').where('account_id', '=', account.id).orderBy('id').execute()
    ).map((r) => r.id);
    return { accountId: account.id, tokens, serviceIds, rows: await count(database), seconds };
  } finally {
    await closeDeps(deps);
    await database.close();
  }
}

/** 9,000 other accounts (wallets included) and their 900,000 rows. */
async function setupOthers(env: Record<string, string>) {
  const database = await open(env);
  try {
    const started = performance.now();
    await sql`
      insert into accounts (name, email, username, password_hash, email_verified_at, created_at)
      select 'Customer ' || k, 'customer' || k || '@example.in', 'customer' || k, 'x', now(), now() - k * interval '1 hour'
      from generate_series(0, ${sql.lit(OTHERS - 1)}) as g(k)`.execute(database.db);
    await sql`
      insert into wallets (account_id, balance_paise)
      select id, 100000 from accounts where username like 'customer%'`.execute(database.db);
    const catalog = await catalogOf(database);
    const owner = sql`(select a.id from accounts a where a.username = 'customer' || ((n - ${sql.lit(OWN)}) / ${sql.lit(PER_OTHER)}))`;
    for (let n0 = OWN; n0 < TOTAL; n0 += CHUNK) {
      await loadRows(database, catalog, n0, Math.min(TOTAL, n0 + CHUNK), owner);
      process.stderr.write(`  loaded rows ${n0}…${Math.min(TOTAL, n0 + CHUNK) - 1} of each kind\n`);
    }
    await analyze(database);
    return { rows: await count(database), seconds: (performance.now() - started) / 1000 };
  } finally {
    await database.close();
  }
}

// ---------------------------------------------------------------------------------------------
// The server, and paced requests through it.

interface Server {
  base: string;
  stop(): Promise<void>;
}

async function startServer(env: Record<string, string>): Promise<Server> {
  // BENCH_PROFILE=<dir> writes a CPU profile of each server run there.
  const profile = process.env.BENCH_PROFILE ? ['--cpu-prof', `--cpu-prof-dir=${process.env.BENCH_PROFILE}`] : [];
  const server = await startServerProcess(env, { upTimeoutMs: 180_000, nodeFlags: profile });
  return { base: server.url, stop: server.stop };
}

/**
 * The account's tokens, each used within its limits: 30 searches per 10 s and 600 requests a
 * minute. Checked over sliding windows a little longer than the server's fixed ones, so no
 * request measured is a 429; when every token is spent, the next request waits.
 */
class Tokens {
  private readonly searches: number[][];
  private readonly all: number[][];
  private readonly secrets: string[];
  private next = 0;
  waitedMs = 0;

  constructor(secrets: string[]) {
    this.secrets = secrets;
    this.searches = secrets.map(() => []);
    this.all = secrets.map(() => []);
  }

  async take(search: boolean): Promise<string> {
    for (;;) {
      const now = performance.now();
      for (let i = 0; i < this.secrets.length; i++) {
        const t = (this.next + i) % this.secrets.length;
        const searches = (this.searches[t] as number[]).filter((at) => now - at < 11_000);
        const all = (this.all[t] as number[]).filter((at) => now - at < 61_000);
        this.searches[t] = searches;
        this.all[t] = all;
        if ((search && searches.length >= 29) || all.length >= 590) continue;
        if (search) searches.push(now);
        all.push(now);
        this.next = t + 1;
        return this.secrets[t] as string;
      }
      await sleep(10);
      this.waitedMs += performance.now() - now;
    }
  }
}

interface Sample {
  ms: number;
  tookMs: number | null;
  total: number;
}

interface Measured {
  /** Per shape (and the baseline): every latency in ms, in request order. */
  samples: Map<string, Sample[]>;
  /** Per query: the groups' totals it answered (checked identical across the run and both sizes). */
  totals: Map<string, string>;
  /** Per query: latencies, to find the slowest query of a shape. */
  perQuery: Map<string, number[]>;
  waitedMs: number;
  /** Rounds measured (fewer than ROUNDS when the time budget ran out). */
  rounds: number;
}

async function measure(server: Server, tokens: Tokens, serviceIds: number[]): Promise<Measured> {
  const samples = new Map<string, Sample[]>();
  const totals = new Map<string, string>();
  const perQuery = new Map<string, number[]>();
  // Active VPS rows (n % 3 = 0, n % 20 > 2): their detail needs no upstream (no VM yet, no power probe).
  const baselineIds = [3, 4_323, 9_876, 15_003, 19_998].map((i) => serviceIds[i] as number);
  // One kept-alive connection through node:http: fetch (undici) adds latency of its own, which is
  // the client's, not the server's. BENCH_SEARCH_CLIENT=fetch measures through fetch instead.
  const agent = new Agent({ keepAlive: true, maxSockets: 1 });
  const get = (path: string, token: string): Promise<{ status: number; text: string }> =>
    process.env.BENCH_SEARCH_CLIENT === 'fetch'
      ? fetch(`${server.base}${path}`, { headers: { authorization: `Bearer ${token}` } }).then(async (res) => ({
          status: res.status,
          text: await res.text(),
        }))
      : new Promise((resolve, reject) => {
          const req = request(
            `${server.base}${path}`,
            { agent, headers: { authorization: `Bearer ${token}` } },
            (res) => {
              const chunks: Buffer[] = [];
              res.on('data', (chunk: Buffer) => chunks.push(chunk));
              res.on('end', () =>
                resolve({ status: res.statusCode ?? 0, text: Buffer.concat(chunks).toString('utf8') }),
              );
              res.on('error', reject);
            },
          );
          req.on('error', reject);
          req.end();
        });
  const hit = async (path: string, search: boolean) => {
    const token = await tokens.take(search);
    const started = performance.now();
    const { status, text } = await get(path, token);
    const ms = performance.now() - started;
    if (status !== 200) throw new Error(`${path}: ${status} ${text.slice(0, 500)}`);
    return { ms, body: JSON.parse(text) as Record<string, unknown> };
  };
  const warmUntil = performance.now() + 60_000;
  let warmup = 0;
  let deadline = Number.POSITIVE_INFINITY;
  let rounds = 0;
  for (;;) {
    const record = warmup >= WARMUP_ROUNDS || (warmup > 0 && performance.now() > warmUntil);
    if (record && deadline === Number.POSITIVE_INFINITY) {
      deadline = performance.now() + BUDGET_MINUTES * 60_000;
      process.stderr.write(`  ${warmup} warm-up rounds\n`);
    }
    if (record && (rounds >= ROUNDS || (rounds >= MIN_ROUNDS && performance.now() > deadline))) break;
    if (record) rounds++;
    else warmup++;
    if (record && rounds % 10 === 0) process.stderr.write(`  round ${rounds}\n`);
    const round = record ? rounds : warmup;
    for (const shape of SHAPES) {
      const q = shape.queries[round % shape.queries.length] as string;
      const { ms, body } = await hit(`/api/v1/search/?q=${encodeURIComponent(q)}`, true);
      const groups = body.groups as { type: string; total: number }[];
      const answer = groups.map((g) => `${g.type}:${g.total}`).join(' ') || '(none)';
      const before = totals.get(q);
      if (before !== undefined && before !== answer) throw new Error(`${q}: ${answer}, earlier ${before}`);
      totals.set(q, answer);
      if (!record) continue;
      const list = samples.get(shape.name) ?? [];
      list.push({ ms, tookMs: Number(body.took_ms), total: groups.reduce((n, g) => n + g.total, 0) });
      samples.set(shape.name, list);
      perQuery.set(q, [...(perQuery.get(q) ?? []), ms]);
    }
    const id = baselineIds[round % baselineIds.length] as number;
    const { ms, body } = await hit(`/api/v1/instances/${id}`, false);
    if ((body.instance as { id?: number } | undefined)?.id !== id)
      throw new Error(`instance ${id}: ${JSON.stringify(body)}`);
    if (!record) continue;
    const list = samples.get(BASELINE) ?? [];
    list.push({ ms, tookMs: null, total: 1 });
    samples.set(BASELINE, list);
  }
  agent.destroy();
  return { samples, totals, perQuery, waitedMs: tokens.waitedMs, rounds };
}

// ---------------------------------------------------------------------------------------------
// EXPLAIN: the statements the search service runs for a query, captured from a logging Kysely on
// the bench's own pool while the search runs through the core (which also warms the cache: PGlite
// reopens cold), then each run under EXPLAIN (ANALYZE, BUFFERS).

interface Plan {
  group: string;
  executionMs: number;
  sql: string;
  parameters: readonly unknown[];
  plan: string;
}

async function explainAll(
  env: Record<string, string>,
  accountId: number,
  queries: string[],
): Promise<Map<string, Plan[]>> {
  const database = await open(env);
  const out = new Map<string, Plan[]>();
  try {
    const captured: CompiledQuery[] = [];
    const logged = new Kysely<DB>({
      dialect: new PostgresDialect({ pool: database.pool }),
      log: (event) => {
        if (event.level === 'query') captured.push(event.query);
      },
    });
    const search = createSearch({ db: logged, publicUrl: 'http://localhost:8080' });
    for (const q of queries) {
      captured.length = 0;
      await search.search(parseSearch(q), { accountId });
      const plans: Plan[] = [];
      for (const query of [...captured]) {
        // The group a statement answers: the table its page is read from (a group's statement may
        // read other tables first, e.g. the address group the matching services).
        const group =
          (/host\([ap]\.address\)/.test(query.sql) ? 'ipv4_addresses' : undefined) ??
          /join "?(services|orders|wallet_transactions|deposits)"? r on r\.id/.exec(query.sql)?.[1] ??
          /from (services|ipv4_addresses|orders|wallet_transactions|deposits)\b/.exec(query.sql)?.[1] ??
          '?';
        const result = await database.pool.query<{ 'QUERY PLAN': string }>(`explain (analyze, buffers) ${query.sql}`, [
          ...query.parameters,
        ]);
        const plan = result.rows.map((r) => r['QUERY PLAN']).join('\n');
        const executionMs = Number(/Execution Time: ([\d.]+) ms/.exec(plan)?.[1] ?? Number.NaN);
        plans.push({ group, executionMs, sql: query.sql, parameters: query.parameters, plan });
      }
      out.set(q, plans);
    }
  } finally {
    await database.close();
  }
  return out;
}

// ---------------------------------------------------------------------------------------------
// Report.

function percentile(values: number[], p: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))] as number;
}
/** The query of a shape with the highest p95 latency. */
function slowestQuery(shape: Shape, measured: Measured): string {
  const p95 = (q: string) => percentile(measured.perQuery.get(q) ?? [0], 95);
  return [...shape.queries].sort((x, y) => p95(y) - p95(x))[0] as string;
}

/** The sum of the group totals in an answer summary ("service:3 ip:1"). */
const foundBy = (answer: string | undefined) =>
  answer === undefined || answer === '(none)'
    ? 0
    : answer.split(' ').reduce((n, part) => n + Number(part.slice(part.indexOf(':') + 1)), 0);
const f = (n: number) => (n >= 100 ? n.toFixed(0) : n.toFixed(1));

export async function run(options: BenchOptions): Promise<string> {
  const dataDir = mkdtempSync(join(tmpdir(), 'hostplane-bench-search-'));
  const env: Record<string, string> = {
    DATA_DIR: dataDir,
    DEMO: '0',
    LOG_LEVEL: 'info',
    SECRET_KEY: randomBytes(32).toString('base64'),
    PORT: String(await freePort()),
  };
  let dropDb: (() => Promise<void>) | null = null;
  if (options.engine === 'postgresql') {
    const scratch = await scratchDatabase(options.pgUrl, `hostplane_bench_search_${process.pid}`);
    env.DATABASE_URL = scratch.url;
    // As token.ts: rate limits counted in Redis (the PostgreSQL store would add two writes per request).
    env.REDIS_URL = process.env.BENCH_REDIS_URL ?? 'redis://127.0.0.1:6379';
    env.REDIS_PREFIX = `hp-bench-search-${process.pid}`;
    dropDb = scratch.drop;
  }
  const limits = options.engine === 'postgresql' ? { p95: 15 } : { p95: 50 };
  const sizes: { label: string; rows: number; loadSeconds: number; measured: Measured; plans: Map<string, Plan[]> }[] =
    [];
  try {
    process.stderr.write('search bench: loading the target account (100,000 rows)\n');
    const target = await setupTarget(env);
    const tokens = new Tokens(target.tokens);
    // BENCH_SEARCH_SMALL=1 measures the 100,000-row database only (for profiles and quick checks).
    const stages = process.env.BENCH_SEARCH_SMALL ? (['small'] as const) : (['small', 'large'] as const);
    for (const stage of stages) {
      let rows = target.rows;
      let loadSeconds = target.seconds;
      if (stage === 'large') {
        process.stderr.write('search bench: loading 9,000 other accounts (900,000 rows)\n');
        const others = await setupOthers(env);
        rows = others.rows;
        loadSeconds = others.seconds;
      }
      process.stderr.write(`search bench: measuring at ${rows} rows\n`);
      const server = await startServer(env);
      let measured: Measured;
      try {
        measured = await measure(server, tokens, target.serviceIds);
      } finally {
        await server.stop();
      }
      const queries = SHAPES.flatMap((shape) => shape.queries);
      process.stderr.write(`search bench: EXPLAIN ANALYZE of the ${queries.length} queries\n`);
      const plans = await explainAll(env, target.accountId, queries);
      sizes.push({ label: stage === 'small' ? '100k' : '1M', rows, loadSeconds, measured, plans });
    }
  } finally {
    // BENCH_SEARCH_KEEP=1 keeps the loaded database for experiments (indexes, plans) and says where.
    if (process.env.BENCH_SEARCH_KEEP) {
      process.stderr.write(`search bench: kept ${env.DATABASE_URL ?? `the PGlite data directory ${dataDir}`}\n`);
    } else {
      await dropDb?.();
      rmSync(dataDir, { recursive: true, force: true });
    }
  }
  const [small, large = small] = sizes as [(typeof sizes)[number], (typeof sizes)[number]];
  for (const [q, answer] of small.measured.totals) {
    if (large.measured.totals.get(q) !== answer)
      throw new Error(
        `${q}: ${answer} at 100k rows but ${large.measured.totals.get(q)} at 1M (another account's rows?)`,
      );
  }
  for (const shape of SHAPES) {
    if (shape.queries.every((q) => small.measured.totals.get(q) === '(none)'))
      throw new Error(`shape ${shape.name}: no query found anything; the data and the mix disagree`);
  }

  const lines: string[] = [];
  lines.push(
    `Target account: ${OWN.toLocaleString('en')} rows of each kind (${(5 * OWN).toLocaleString('en')}). ` +
      `Database: ${small.rows.toLocaleString('en')} rows (loaded in ${small.loadSeconds.toFixed(0)} s), then ` +
      `${large.rows.toLocaleString('en')} (+${OTHERS.toLocaleString('en')} accounts, loaded in ${large.loadSeconds.toFixed(0)} s). ` +
      `${small.measured.rounds} (100k) and ${large.measured.rounds} (1M) requests per shape after up to ${WARMUP_ROUNDS} warm-up rounds (at most a minute)` +
      `${Math.min(small.measured.rounds, large.measured.rounds) < ROUNDS ? ` (the ${BUDGET_MINUTES}-minute budget per size ended the run before ${ROUNDS})` : ''}, ` +
      'sequential, round-robin with the baseline; ' +
      `ms = client-side latency of one request over loopback HTTP (token surface; client: ${process.env.BENCH_SEARCH_CLIENT === 'fetch' ? 'fetch' : 'node:http, one kept-alive connection'}).`,
  );
  lines.push('');
  lines.push(
    '| shape | found (per query) | 100k p50 | 100k p95 | 100k p99 | 1M p50 | 1M p95 | 1M p99 | 1M server took_ms p95 | p95 growth | 1M p95 ÷ baseline p95 |',
  );
  lines.push('|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|');
  const base = (m: Measured) =>
    percentile(
      (m.samples.get(BASELINE) ?? []).map((s) => s.ms),
      95,
    );
  const verdicts: string[] = [];
  let slowest = { shape: '', p95: 0 };
  for (const name of [...SHAPES.map((s) => s.name), BASELINE]) {
    const a = (small.measured.samples.get(name) ?? []).map((s) => s.ms);
    const b = (large.measured.samples.get(name) ?? []).map((s) => s.ms);
    const took = (large.measured.samples.get(name) ?? []).map((s) => s.tookMs).filter((t): t is number => t !== null);
    const shape = SHAPES.find((s) => s.name === name);
    const found = shape ? shape.queries.map((q) => foundBy(large.measured.totals.get(q))).join(', ') : '1';
    const p95a = percentile(a, 95);
    const p95b = percentile(b, 95);
    const growth = p95b / p95a;
    lines.push(
      `| ${name} | ${found} | ${f(percentile(a, 50))} | ${f(p95a)} | ${f(percentile(a, 99))} | ${f(percentile(b, 50))} | ${f(p95b)} | ${f(percentile(b, 99))} | ${took.length > 0 ? f(percentile(took, 95)) : '-'} | ${growth.toFixed(2)}× | ${(p95b / base(large.measured)).toFixed(1)} |`,
    );
    if (shape) {
      if (p95b > slowest.p95) slowest = { shape: name, p95: p95b };
      const misses = [];
      if (Math.max(p95a, p95b) > limits.p95) misses.push(`p95 ${f(Math.max(p95a, p95b))} ms > ${limits.p95} ms`);
      if (growth >= 2) misses.push(`growth ${growth.toFixed(2)}× ≥ 2×`);
      if (misses.length > 0) verdicts.push(`${name}: ${misses.join(', ')}`);
    }
  }
  lines.push('');
  lines.push(
    verdicts.length === 0
      ? `**Targets (p95 ≤ ${limits.p95} ms on ${options.engine}, growth < 2×): met by every shape.**`
      : `**Targets (p95 ≤ ${limits.p95} ms on ${options.engine}, growth < 2×) missed by:** ${verdicts.join('; ')}.`,
  );
  lines.push(
    `Pacing (token limits) kept the client idle ${(small.measured.waitedMs / 1000).toFixed(0)} s (100k) and ` +
      `${((large.measured.waitedMs - small.measured.waitedMs) / 1000).toFixed(0)} s (1M); idle time is not in any latency.`,
  );

  // Where the time goes: per shape, its slowest query's statements (EXPLAIN ANALYZE execution time).
  lines.push('');
  lines.push(
    "Database time of each shape's slowest query (at 1M) per group statement, 100k → 1M ms (EXPLAIN ANALYZE, warm cache; · = not run):",
  );
  lines.push('');
  const GROUPS = ['services', 'ipv4_addresses', 'orders', 'wallet_transactions', 'deposits'];
  lines.push(`| shape | query | ${GROUPS.join(' | ')} |`);
  lines.push(`|---|---|${GROUPS.map(() => '---:').join('|')}|`);
  for (const s of SHAPES) {
    const q = slowestQuery(s, large.measured);
    const cell = (group: string) => {
      const before = small.plans.get(q)?.find((p) => p.group === group)?.executionMs;
      const now = large.plans.get(q)?.find((p) => p.group === group)?.executionMs;
      const ms = (n: number) => (n < 10 ? n.toFixed(2) : f(n));
      return before === undefined || now === undefined ? '·' : `${ms(before)} → ${ms(now)}`;
    };
    lines.push(`| ${s.name} | \`${q}\` | ${GROUPS.map(cell).join(' | ')} |`);
  }

  // The slowest shape: its slowest query, the database time per group at both sizes, and the plans at 1M.
  const shape = SHAPES.find((s) => s.name === slowest.shape) as Shape;
  const worst = slowestQuery(shape, large.measured);
  lines.push('');
  lines.push(
    `Slowest shape at 1M: **${shape.name}**; its slowest query \`${worst}\` (p95 ${f(percentile(large.measured.perQuery.get(worst) ?? [0], 95))} ms). ` +
      'Database execution time per group statement (EXPLAIN ANALYZE, warm cache):',
  );
  lines.push('');
  lines.push('| group statement | 100k ms | 1M ms |');
  lines.push('|---|---:|---:|');
  const smallPlans = small.plans.get(worst) ?? [];
  const largePlans = large.plans.get(worst) ?? [];
  largePlans.forEach((plan, i) => {
    lines.push(`| ${plan.group} | ${smallPlans[i]?.executionMs.toFixed(2) ?? '-'} | ${plan.executionMs.toFixed(2)} |`);
  });
  const heaviest = [...largePlans].sort((x, y) => y.executionMs - x.executionMs)[0];
  if (heaviest) {
    lines.push('');
    lines.push(`The heaviest statement at 1M (${heaviest.group}), parameters ${JSON.stringify(heaviest.parameters)}:`);
    lines.push('');
    lines.push('```sql');
    lines.push(heaviest.sql.replace(/\n\s+/g, '\n  ').trim());
    lines.push('```');
    lines.push('');
    lines.push('```');
    lines.push(heaviest.plan);
    lines.push('```');
  }
  // Every plan, both sizes, to a file (long).
  const file = join(tmpdir(), `hostplane-bench-search-plans-${options.engine}-${process.pid}.md`);
  const all: string[] = [];
  for (const size of sizes) {
    for (const s of SHAPES) {
      for (const q of s.queries) {
        for (const plan of size.plans.get(q) ?? []) {
          all.push(`## ${size.label} · ${s.name} · \`${q}\` · ${plan.group} · ${plan.executionMs} ms\n`);
          all.push(`parameters: ${JSON.stringify(plan.parameters)}\n\n\`\`\`\n${plan.plan}\n\`\`\`\n`);
        }
      }
    }
  }
  writeFileSync(file, all.join('\n'));
  lines.push('');
  lines.push(`Every statement's plan at both sizes: ${file}`);
  return lines.join('\n');
}

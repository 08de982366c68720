// Search (issue 15, CONTRACT §8): another account's rows never appear, and every total is exact,
// as a seeded property test. Two accounts get random services (labels, hostnames and domains drawn
// from a small alphabet with accents and the LIKE metacharacters `%` `_` `\`, so the accounts'
// words collide), addresses from one /23, orders, ledger rows and deposits, inserted straight into
// the database; random queries (the other account's words and substrings of them, metacharacters,
// addresses of both accounts, CIDRs covering both, order_/pay_ ids and `#<id>` of both, operators)
// are answered for each account through the core, and in every fifth run through the HTTP route
// with a session too. Each answer must equal a model of the caller's own rows: case- and
// accent-insensitive literal substring over the fields each group searches (the only thing taken
// from the database is pg_trgm's fuzzy `<%` decision, taken only when nothing holds the text), exact totals,
// items in the group's order up to the limit; every item is checked against the database as the
// caller's. Rows accumulate over the runs (the ledger is append-only), so later runs search among
// more of both accounts' rows.

import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import fc from 'fast-check';
import { sql } from 'kysely';
import { seedDemoCatalog } from '../src/core/catalog/demo-seed.ts';
import { type ParsedQuery, parseSearch, SEARCH_TYPES, type SearchType } from '../src/core/search/query.ts';
import type { SearchGroup } from '../src/core/search/search.service.ts';
import type { PlanType } from '../src/db/tables.ts';
import { Browser } from './support/browser.ts';
import { createAccount, freshIp } from './support/factories.ts';
import { createTestApp, type TestApp } from './support/harness.ts';

const SEED = Number(process.env.SEARCH_SEED ?? 20261124);
const RUNS = Number(process.env.SEARCH_RUNS ?? 30);
const QUERIES_PER_RUN = 8;
/** Sessions per account for the HTTP runs (30 searches per 10 s each). */
const SESSIONS = 4;

// The model's fold: lower case, then the accents hp_fold (migration 0011) maps, restated here.
const FROM = 'àáâãäåāăąçćčďđèéêëēėęěìíîïīįıłñńňòóôõöøōőùúûüūůűųýÿžźżśšşğřť';
const TO = 'aaaaaaaaacccddeeeeeeeeiiiiiiilnnnoooooooouuuuuuuuyyzzzsssgrt';
const FOLD = new Map([...FROM].map((c, i) => [c, [...TO][i] as string]));
const fold = (s: string) => [...s.toLowerCase()].map((c) => FOLD.get(c) ?? c).join('');
/** A space of the text stands for any one space or ASCII punctuation mark (`[[:space:][:punct:]]`). */
const SEPARATOR = '[\\s!-/:-@[-`{-~]';
const contains = (field: string | null, text: string) =>
  field !== null &&
  new RegExp(
    fold(text)
      .split(' ')
      .map((w) => w.replace(/[\\^$.*+?()[\]{}|/]/g, '\\$&'))
      .join(SEPARATOR),
    'u',
  ).test(fold(field));

const SERVICE_STATUSES = ['pending', 'provisioning', 'active', 'suspended', 'failed', 'terminated'] as const;
const ORDER_STATUSES = ['unpaid', 'paid', 'refunded', 'cancelled'] as const;
const DEPOSIT_STATUSES = ['pending', 'approved', 'rejected'] as const;
const LEDGER_KINDS = ['deposit', 'order', 'renewal', 'refund', 'adjustment'] as const;
const LOCATIONS = ['mum1', 'blr1', 'del1'] as const;
const CROCKFORD = [...'0123456789abcdefghjkmnpqrstvwxyz'];
/** Every address of both accounts (and some free ones) lies in 10.77.0.0/23. */
const ip = (offset: number) => `10.77.${offset >> 8}.${offset & 255}`;

// ---------------------------------------------------------------------------------------------
// What each account owns, as the model sees it.

interface Svc {
  id: number;
  label: string;
  hostname: string | null;
  domain: string | null;
  planName: string;
  type: PlanType;
  status: string;
  /** Its NICs' MAC addresses (`services.external.macs`). */
  macs: string[];
}
interface Ip {
  id: number;
  offset: number;
  serviceId: number;
}
interface Ord {
  id: number;
  publicId: string;
  planName: string;
  domain: string | null;
  status: string;
}
interface Tx {
  id: number;
  publicId: string;
  note: string | null;
}
interface Dep {
  id: number;
  publicId: string;
  txnRef: string;
  status: string;
}
interface Owned {
  accountId: number;
  username: string;
  services: Svc[];
  ips: Ip[];
  orders: Ord[];
  txs: Tx[];
  deposits: Dep[];
  browsers: Browser[];
}

// ---------------------------------------------------------------------------------------------
// Random data.

const unit = fc.constantFrom('a', 'b', 'c', 'x', 'é', 'É', 'ü', '1', '%', '_', '\\', '-', '.');
const word = fc.string({ unit, minLength: 1, maxLength: 6 });
const sentence = fc.array(word, { minLength: 1, maxLength: 3 }).map((words) => words.join(' '));
/** MAC addresses servers may have (lower-case colon form, as `external.macs` holds them). */
const MACS = ['aa:bb:cc:dd:ee:ff', '00:1a:2b:3c:4d:5e', '02:00:00:00:00:01'];
const publicBody = fc.string({ unit: fc.constantFrom(...CROCKFORD), minLength: 16, maxLength: 16 });
const offset = fc.integer({ min: 0, max: 511 });

interface PlanRow {
  id: number;
  label: string;
  name: string;
  type: PlanType;
  price: string;
}

const dataset = (plans: PlanRow[]) =>
  fc.record({
    services: fc.array(
      fc.record({
        label: word,
        hostname: fc.option(word, { nil: null }),
        domain: fc.option(word, { nil: null }),
        plan: fc.constantFrom(...plans),
        status: fc.constantFrom(...SERVICE_STATUSES),
        location: fc.constantFrom(...LOCATIONS),
        ips: fc.array(offset, { maxLength: 2 }),
        // Drawn from a small pool, so both accounts hold some of the same ones.
        macs: fc.uniqueArray(fc.constantFrom(...MACS), { maxLength: 2 }),
      }),
      { maxLength: 4 },
    ),
    freeIps: fc.array(offset, { maxLength: 2 }),
    orders: fc.array(
      fc.record({
        id: publicBody,
        plan: fc.constantFrom(...plans),
        status: fc.constantFrom(...ORDER_STATUSES),
        domain: fc.option(word, { nil: null }),
      }),
      { maxLength: 3 },
    ),
    txs: fc.array(
      fc.record({
        id: publicBody,
        kind: fc.constantFrom(...LEDGER_KINDS),
        amount: fc.integer({ min: 1, max: 500_000 }),
        note: fc.option(sentence, { nil: null }),
      }),
      { maxLength: 3 },
    ),
    deposits: fc.array(fc.record({ id: publicBody, ref: word, status: fc.constantFrom(...DEPOSIT_STATUSES) }), {
      maxLength: 3,
    }),
  });
type Data = ReturnType<typeof dataset> extends fc.Arbitrary<infer T> ? T : never;

let t: TestApp;
let plans: PlanRow[];
let locationIds: Record<string, number>;
let a: Owned;
let b: Owned;
const usedIps = new Set<number>();
const usedRefs = new Set<string>();
const usedIds = new Set<string>();
let unique = 0;

/** Insert one run's rows for an account, constraints kept (unique labels among live services,
 * unique addresses, references and public ids), and add them to the model. */
async function insert(owner: Owned, data: Data): Promise<void> {
  const db = t.deps.database.db;
  const live = new Set(owner.services.filter((s) => s.status !== 'terminated').map((s) => s.label));
  for (const s of data.services) {
    // A label names one live service of an account: a clash is inserted as terminated.
    const status = live.has(s.label) ? 'terminated' : s.status;
    if (status !== 'terminated') live.add(s.label);
    const config: Record<string, string> = {};
    if (s.hostname !== null) config.hostname = s.hostname;
    if (s.domain !== null) config.domain = s.domain;
    const row = await db
      .insertInto('services')
      .values({
        account_id: owner.accountId,
        plan_id: s.plan.id,
        type: s.plan.type,
        label: s.label,
        status,
        location_id: locationIds[s.location] as number,
        price_paise: s.plan.price,
        config: JSON.stringify(config),
        external: s.macs.length > 0 ? JSON.stringify({ node: 'pve', vmid: 100, name: 'hp-svc-x', macs: s.macs }) : null,
      })
      .returning('id')
      .executeTakeFirstOrThrow();
    owner.services.push({
      id: row.id,
      label: s.label,
      hostname: s.hostname,
      domain: s.domain,
      planName: s.plan.name,
      type: s.plan.type,
      status,
      macs: s.macs,
    });
    for (const o of s.ips) {
      if (usedIps.has(o)) continue;
      usedIps.add(o);
      const address = await db
        .insertInto('ipv4_addresses')
        .values({
          location_id: locationIds[s.location] as number,
          address: ip(o),
          prefix: 23,
          gateway: '10.77.0.1',
          status: 'allocated',
          service_id: row.id,
          allocated_at: new Date(),
        })
        .returning('id')
        .executeTakeFirstOrThrow();
      owner.ips.push({ id: address.id, offset: o, serviceId: row.id });
    }
  }
  for (const o of data.freeIps) {
    if (usedIps.has(o)) continue;
    usedIps.add(o);
    await db
      .insertInto('ipv4_addresses')
      .values({ location_id: locationIds.mum1 as number, address: ip(o), prefix: 23, gateway: '10.77.0.1' })
      .execute();
  }
  const fresh = (body: string) => {
    let id = body;
    while (usedIds.has(id)) id = `${body.slice(0, 12)}${String(++unique).padStart(4, '0')}`;
    usedIds.add(id);
    return id;
  };
  for (const o of data.orders) {
    const publicId = `order_${fresh(o.id)}`;
    const row = await db
      .insertInto('orders')
      .values({
        public_id: publicId,
        account_id: owner.accountId,
        plan_id: o.plan.id,
        kind: 'new',
        status: o.status,
        amount_paise: o.plan.price,
        domain: o.domain,
      })
      .returning('id')
      .executeTakeFirstOrThrow();
    owner.orders.push({ id: row.id, publicId, planName: o.plan.name, domain: o.domain, status: o.status });
  }
  for (const x of data.txs) {
    const publicId = `pay_${fresh(x.id)}`;
    const sign = x.kind === 'order' || x.kind === 'renewal' ? -1 : 1;
    const row = await db
      .insertInto('wallet_transactions')
      .values({
        public_id: publicId,
        account_id: owner.accountId,
        kind: x.kind,
        amount_paise: String(sign * x.amount),
        balance_after_paise: '100000',
        note: x.note,
      })
      .returning('id')
      .executeTakeFirstOrThrow();
    owner.txs.push({ id: row.id, publicId, note: x.note });
  }
  for (const d of data.deposits) {
    const publicId = `pay_${fresh(d.id)}`;
    // One reference across every account, whatever its case.
    let ref = d.ref;
    while (usedRefs.has(ref.toLowerCase())) ref = `${d.ref}${++unique}`;
    usedRefs.add(ref.toLowerCase());
    const row = await db
      .insertInto('deposits')
      .values({
        public_id: publicId,
        account_id: owner.accountId,
        amount_paise: '10000',
        txn_ref: ref,
        screenshot_file: 'deposits/property.png',
        screenshot_type: 'png',
        screenshot_bytes: 1000,
        status: d.status,
      })
      .returning('id')
      .executeTakeFirstOrThrow();
    owner.deposits.push({ id: row.id, publicId, txnRef: ref, status: d.status });
  }
}

// ---------------------------------------------------------------------------------------------
// The model: what the caller's own rows answer, group by group.

interface Expected {
  type: SearchType;
  total: number;
  ids: string[];
}

async function expected(parsed: ParsedQuery, owner: Owned, limit: number): Promise<Expected[]> {
  const ops = parsed.operators;
  let types: readonly SearchType[] = ops.type.length > 0 ? ops.type : SEARCH_TYPES;
  if (ops.status.length > 0) types = types.filter((type) => type !== 'ip' && type !== 'transaction');
  if (ops.product.length > 0) types = types.filter((type) => type === 'service' || type === 'ip');
  const kind = parsed.kind;
  const text = parsed.text;
  const hasText = text !== '';
  const range: [number, number] | null = parsed.cidr
    ? parsed.cidr.family === 4
      ? [toInt(parsed.cidr.first), toInt(parsed.cidr.last)]
      : [1, 0] // an IPv6 prefix contains no IPv4 address
    : parsed.ipv4
      ? [toInt(parsed.ipv4), toInt(parsed.ipv4)]
      : parsed.ipv6
        ? [1, 0]
        : null;
  const inRange = (o: number) => range !== null && toInt(ip(o)) >= range[0] && toInt(ip(o)) <= range[1];
  const textual = (excluded: string[]) => hasText && !excluded.includes(kind);
  const status = (s: string) => ops.status.length === 0 || ops.status.includes(s);
  const product = (type: string) => ops.product.length === 0 || (ops.product as string[]).includes(type);
  // The one decision taken from the database: pg_trgm's word similarity of the text to each own label.
  const fuzzy = new Set<number>();
  if (
    types.includes('service') &&
    parsed.number === undefined &&
    range === null &&
    textual(['payment_id', 'order_id', 'mac'])
  ) {
    const { rows } = await sql<{ id: number }>`
      select id from services where account_id = ${owner.accountId}
        and hp_fold(${text}) <% search_text`.execute(t.deps.database.db);
    for (const row of rows) fuzzy.add(row.id);
  }
  const serviceOf = new Map(owner.services.map((s) => [s.id, s]));
  /** A service's label, hostname or domain holds the text. */
  const holds = (s: Svc) => contains(s.label, text) || contains(s.hostname, text) || contains(s.domain, text);
  const out: Expected[] = [];
  const push = (type: SearchType, ids: number[], order: (x: number, y: number) => number = (x, y) => y - x) => {
    if (ids.length === 0) return;
    out.push({
      type,
      total: ids.length,
      ids: [...ids]
        .sort(order)
        .slice(0, limit)
        .map((id) => `${type}:${id}`),
    });
  };
  for (const type of SEARCH_TYPES) {
    if (!types.includes(type)) continue;
    if (type === 'service') {
      const match = (s: Svc, close: boolean) =>
        parsed.number !== undefined
          ? s.id === parsed.number
          : range !== null
            ? owner.ips.some((i) => i.serviceId === s.id && inRange(i.offset))
            : parsed.mac !== undefined
              ? s.macs.includes(parsed.mac)
              : textual(['payment_id', 'order_id', 'mac'])
                ? close
                  ? fuzzy.has(s.id)
                  : holds(s) || contains(s.planName, text)
                : !hasText;
      const found = (close: boolean) =>
        owner.services.filter((s) => match(s, close) && status(s.status) && product(s.type)).map((s) => s.id);
      // Close matches (pg_trgm) only for plain text, when nothing holds it.
      const exact = found(false);
      push(type, exact.length === 0 && kind === 'text' ? found(true) : exact);
    } else if (type === 'ip') {
      const match = (i: Ip) => {
        const service = serviceOf.get(i.serviceId) as Svc;
        if (range !== null) return inRange(i.offset);
        if (parsed.number !== undefined) return i.serviceId === parsed.number;
        if (hasText && /^[0-9.]+$/.test(text)) return ip(i.offset).startsWith(text);
        if (parsed.mac !== undefined) return service.macs.includes(parsed.mac);
        if (textual(['payment_id', 'order_id', 'mac'])) return holds(service);
        return !hasText;
      };
      const rows = owner.ips.filter((i) => match(i) && product((serviceOf.get(i.serviceId) as Svc).type));
      const addressOf = new Map(rows.map((i) => [i.id, toInt(ip(i.offset))]));
      push(
        type,
        rows.map((i) => i.id),
        (x, y) => (addressOf.get(x) as number) - (addressOf.get(y) as number),
      );
    } else if (type === 'order') {
      const match = (o: Ord) =>
        parsed.publicId && kind === 'order_id'
          ? o.publicId === parsed.publicId
          : parsed.number !== undefined
            ? o.id === parsed.number
            : hasText && range === null && kind !== 'payment_id' && kind !== 'mac'
              ? contains(o.publicId, text) || contains(o.planName, text) || contains(o.domain, text)
              : !hasText && range === null;
      push(
        type,
        owner.orders.filter((o) => match(o) && status(o.status)).map((o) => o.id),
      );
    } else if (type === 'transaction') {
      const match = (x: Tx) =>
        parsed.publicId && kind === 'payment_id'
          ? x.publicId === parsed.publicId
          : parsed.number !== undefined
            ? x.id === parsed.number
            : hasText && range === null && kind !== 'order_id' && kind !== 'mac'
              ? contains(x.note, text) || contains(x.publicId, text)
              : !hasText && range === null;
      push(
        type,
        owner.txs.filter(match).map((x) => x.id),
      );
    } else {
      const match = (d: Dep) =>
        parsed.publicId && kind === 'payment_id'
          ? d.publicId === parsed.publicId
          : parsed.number !== undefined
            ? d.id === parsed.number
            : hasText && range === null && kind !== 'order_id' && kind !== 'mac'
              ? contains(d.txnRef, text) || contains(d.publicId, text)
              : !hasText && range === null;
      push(
        type,
        owner.deposits.filter((d) => match(d) && status(d.status)).map((d) => d.id),
      );
    }
  }
  return out;
}

function toInt(address: string): number {
  return address.split('.').reduce((acc, octet) => acc * 256 + Number(octet), 0);
}

/** The account each item's row belongs to, read from the database (for ip: its service's). */
async function ownersOf(groups: SearchGroup[]): Promise<number[]> {
  const db = t.deps.database.db;
  const owners: number[] = [];
  for (const group of groups) {
    const ids = group.items.map((item) => Number(item.id.slice(item.id.indexOf(':') + 1)));
    if (ids.length === 0) continue;
    const rows =
      group.type === 'ip'
        ? await db
            .selectFrom('ipv4_addresses as i')
            .innerJoin('services as s', 's.id', 'i.service_id')
            .select('s.account_id')
            .where('i.id', 'in', ids)
            .execute()
        : await db
            .selectFrom(
              group.type === 'service'
                ? 'services'
                : group.type === 'order'
                  ? 'orders'
                  : group.type === 'transaction'
                    ? 'wallet_transactions'
                    : 'deposits',
            )
            .select('account_id')
            .where('id', 'in', ids)
            .execute();
    assert.equal(rows.length, ids.length, `${group.type}: every item is a row`);
    owners.push(...rows.map((r) => r.account_id));
  }
  return owners;
}

// ---------------------------------------------------------------------------------------------
// Random queries, drawn after the run's rows exist (their ids are the database's).

const METACHARACTERS = ['%', '_', '\\', '%%', '_%', '%_', '\\%', '\\_', 'a%', '%a', '_a', 'a_b', 'a%b', 'a\\b', '1%'];

function query(g: fc.GeneratorValue, me: Owned, other: Owned): string {
  const pick = <T>(list: T[], fallback: T): T =>
    list.length === 0 ? fallback : (list[g(fc.integer, { min: 0, max: list.length - 1 })] as T);
  const both = g(fc.boolean) ? other : me;
  const shape = g(fc.integer, { min: 0, max: 13 });
  switch (shape) {
    case 0:
      return pick(
        other.services.map((s) => s.label),
        g(() => word),
      );
    case 1: {
      const fields = [
        ...other.services.flatMap((s) => [s.label, s.hostname, s.domain]),
        ...other.orders.map((o) => o.domain),
        ...other.txs.map((x) => x.note),
        ...other.deposits.map((d) => d.txnRef),
      ].filter((f): f is string => f !== null);
      const field = pick(fields, 'abc');
      const start = g(fc.integer, { min: 0, max: field.length - 1 });
      const end = g(fc.integer, { min: start + 1, max: field.length });
      return field.slice(start, end);
    }
    case 2:
      return g(() => word);
    case 3:
      return g(fc.constantFrom, ...METACHARACTERS);
    case 4:
      return ip(pick([...other.ips, ...me.ips].map((i) => i.offset).concat(g(() => offset)), 0));
    case 5: {
      const o = g(() => offset);
      return g(
        fc.constantFrom,
        '10.77.0.0/23',
        '10.77.0.0/24',
        '10.77.1.0/24',
        `10.77.${o >> 8}.${o & 0xf0}/28`,
        `10.77.${o >> 8}.${o & 0xfc}/30`,
        '10.77.',
        '10.77.1.',
        '10.0.0.0/8',
      );
    }
    case 6: {
      const id = pick(
        both.orders.map((o) => o.publicId),
        'order_0123456789abcdef',
      );
      return g(fc.boolean) ? id.toUpperCase() : id;
    }
    case 7:
      return pick(
        [...both.txs.map((x) => x.publicId), ...both.deposits.map((d) => d.publicId)],
        'pay_0123456789abcdef',
      );
    case 8: {
      const ids = [
        ...both.services.map((s) => s.id),
        ...both.orders.map((o) => o.id),
        ...both.txs.map((x) => x.id),
        ...both.deposits.map((d) => d.id),
      ];
      return `#${pick(ids, 1)}`;
    }
    case 9: {
      const status = g(fc.constantFrom, ...SERVICE_STATUSES, ...ORDER_STATUSES, ...DEPOSIT_STATUSES);
      return g(fc.boolean) ? `status:${status} ${g(() => word)}` : `status:${status}`;
    }
    case 10: {
      const type = g(fc.constantFrom, 'service', 'ip', 'order', 'transaction', 'deposit', 'vps', 'game', 'web');
      const rest = pick(
        other.services.map((s) => s.label),
        'a',
      );
      return g(fc.boolean) ? `${rest} type:${type}` : `type:${type}`;
    }
    case 11:
      // Two of the pool in other notations, and one no server has.
      return g(fc.constantFrom, 'AA:BB:CC:DD:EE:FF', '00-1a-2b-3c-4d-5e', '0200.0000.0001', '02:00:00:00:00:02');
    case 12:
      return g(fc.constantFrom, '10.77', '10.7', '10.77.1', '10');
    default:
      return `${g(() => word)}@ex.in`;
  }
}

let httpCalls = 0;

/** One query for one caller: the core's answer equals the model; in HTTP runs the route's too.
 * Returns how many items it found. */
async function check(q: string, me: Owned, limit: number, viaHttp: boolean): Promise<number> {
  let parsed: ParsedQuery;
  try {
    parsed = parseSearch(q);
  } catch {
    return 0; // the parser's refusals are search-query.test.ts's business
  }
  const groups = await t.deps.search.search(parsed, { accountId: me.accountId }, { limit });
  const owners = await ownersOf(groups);
  assert.ok(
    owners.every((owner) => owner === me.accountId),
    `${JSON.stringify(q)}: an item of account ${owners.find((o) => o !== me.accountId)} answered account ${me.accountId}`,
  );
  const answer = groups.map((group) => ({
    type: group.type,
    total: group.total,
    ids: group.items.map((item) => item.id),
  }));
  assert.deepEqual(
    answer,
    await expected(parsed, me, limit),
    `${JSON.stringify(q)} (kind ${parsed.kind}, limit ${limit})`,
  );
  for (const group of groups) assert.ok(group.total >= group.items.length);
  const found = groups.reduce((n, group) => n + group.total, 0);
  if (!viaHttp) return found;
  const browser = me.browsers[httpCalls++ % me.browsers.length] as Browser;
  const res = await browser.get(`/api/v1/search/?q=${encodeURIComponent(q)}&limit=${limit}`);
  assert.equal(res.statusCode, 200, `${JSON.stringify(q)}: ${res.body}`);
  assert.deepEqual(res.json().groups, JSON.parse(JSON.stringify(groups)), `${JSON.stringify(q)} through HTTP`);
  return found;
}

async function account(): Promise<Owned> {
  const created = await createAccount(t);
  const browsers: Browser[] = [];
  for (let i = 0; i < SESSIONS; i++) {
    const browser = new Browser(t, freshIp());
    const res = await browser.login(created.account.username, created.password);
    assert.equal(res.statusCode, 200, res.body);
    browsers.push(browser);
  }
  await sql`insert into wallets (account_id) values (${created.account.id}) on conflict do nothing`.execute(
    t.deps.database.db,
  );
  return {
    accountId: created.account.id,
    username: created.account.username,
    services: [],
    ips: [],
    orders: [],
    txs: [],
    deposits: [],
    browsers,
  };
}

before(async () => {
  t = await createTestApp();
  await seedDemoCatalog(t.deps.database.db);
  plans = (
    await t.deps.database.db.selectFrom('plans').select(['id', 'label', 'name', 'type', 'price_paise']).execute()
  ).map((p) => ({ id: p.id, label: p.label, name: p.name, type: p.type, price: String(p.price_paise) }));
  locationIds = Object.fromEntries(
    (await t.deps.database.db.selectFrom('locations').select(['id', 'code']).execute()).map((l) => [l.code, l.id]),
  );
  a = await account();
  b = await account();
});
after(() => t.close());

describe('search: two accounts, random rows and queries', () => {
  test(`${RUNS} runs (seed ${SEED}): only the caller's rows, exact totals, LIKE metacharacters literal`, {
    timeout: 300_000,
  }, async (ctx) => {
    let run = 0;
    const tally = { queries: 0, found: 0 };
    await fc.assert(
      fc.asyncProperty(dataset(plans), dataset(plans), fc.gen(), async (forA, forB, g) => {
        const viaHttp = run++ % 5 === 0;
        await insert(a, forA);
        await insert(b, forB);
        for (let i = 0; i < QUERIES_PER_RUN; i++) {
          const [me, other] = g(fc.boolean) ? [a, b] : [b, a];
          const q = query(g, me, other);
          const limit = g(fc.constantFrom, 1, 2, 5, 50);
          tally.queries++;
          // Both callers: for one of them the query is made of the other account's words and ids.
          const found = (await check(q, me, limit, viaHttp)) + (await check(q, other, limit, viaHttp));
          if (found > 0) tally.found++;
        }
      }),
      { seed: SEED, numRuns: RUNS, endOnFailure: true },
    );
    ctx.diagnostic(
      `seed ${SEED}: ${tally.queries} queries × 2 callers, ${tally.found} answered something; ` +
        `rows: A ${a.services.length} services ${a.ips.length} ips ${a.orders.length} orders ${a.txs.length} txs ` +
        `${a.deposits.length} deposits, B ${b.services.length} services ${b.ips.length} ips; ${httpCalls} through HTTP`,
    );
    assert.ok(tally.found > tally.queries / 4, 'most queries find something: the model is not vacuous');
  });

  test('a metacharacter never matches more than its literal', async () => {
    const me = await account();
    const labels = ['a%b', 'a_b', 'axb', 'a\\b', 'ab', '100%', '1000'];
    const data: Data = {
      services: labels.map((label) => ({
        label,
        hostname: null,
        domain: null,
        plan: plans[0] as PlanRow,
        status: 'active' as const,
        location: 'mum1' as const,
        ips: [],
        macs: [],
      })),
      freeIps: [],
      orders: [],
      txs: labels.map((note, i) => ({
        id: `${'m'.repeat(12)}${String(i).padStart(4, '0')}`,
        kind: 'adjustment' as const,
        amount: 100,
        note,
      })),
      deposits: labels.map((ref, i) => ({
        id: `${'n'.repeat(12)}${String(i).padStart(4, '0')}`,
        ref: `ref-${ref}`,
        status: 'pending' as const,
      })),
    };
    await insert(me, data);
    // The ledger group has no fuzzy match: a note is found exactly when it (or its pay_ id) holds the text.
    const notes = async (q: string) =>
      (await t.deps.search.search(parseSearch(q), { accountId: me.accountId }, { limit: 50 }))
        .find((g) => g.type === 'transaction')
        ?.items.map((item) => me.txs.find((x) => `transaction:${x.id}` === item.id)?.note)
        .sort() ?? [];
    const literal = (q: string) =>
      me.txs
        .filter((x) => x.note?.includes(q) || x.publicId.includes(q))
        .map((x) => x.note)
        .sort();
    assert.deepEqual(await notes('%'), ['100%', 'a%b']);
    assert.deepEqual(await notes('a%b'), ['a%b']);
    assert.deepEqual(await notes('a_b'), ['a_b']);
    assert.deepEqual(await notes('1_0'), []);
    assert.deepEqual(await notes('a\\b'), ['a\\b']);
    for (const q of ['%', '_', '\\', '%%', 'a%b', 'a_b', '1_0', '1%0', 'a\\b', '100%', '_b', 'a%']) {
      assert.deepEqual(await notes(q), literal(q), q);
    }
    for (const q of ['a%b', 'a_b', '%', '_', '\\', '100%']) await check(q, me, 50, true);
  });

  test('loc:, user: compare without case (loc:MUM1, loc:"Mumbai 1", user:<USERNAME>)', async () => {
    const me = await account();
    await insert(me, {
      services: [
        {
          label: 'caseless',
          hostname: null,
          domain: null,
          plan: plans[0] as PlanRow,
          status: 'active',
          location: 'mum1',
          ips: [],
          macs: [],
        },
      ],
      freeIps: [],
      orders: [],
      txs: [],
      deposits: [],
    });
    const id = `service:${me.services[0]?.id}`;
    const wrong: string[] = [];
    const queries = [
      'loc:mum1 caseless',
      'loc:MUM1 caseless',
      'loc:"Mumbai 1" caseless',
      'loc:"mumbai 1" caseless',
      `user:${me.username} caseless`,
      `user:${me.username.toUpperCase()} caseless`,
    ];
    for (const q of queries) {
      try {
        const groups = await t.deps.search.search(parseSearch(q), { accountId: me.accountId });
        const ids = groups.flatMap((g) => g.items.map((item) => item.id));
        if (ids.length !== 1 || ids[0] !== id) wrong.push(`${q} → ${JSON.stringify(ids)}`);
      } catch (error) {
        wrong.push(`${q} → ${(error as Error).message}`);
      }
    }
    assert.deepEqual(wrong, []);
  });

  test('loc: by an accented location name (both the name and the value are folded)', async () => {
    const me = await account();
    const db = t.deps.database.db;
    const location = await db
      .insertInto('locations')
      .values({ code: 'sao1', name: 'São Paulo 1', city: 'São Paulo', country: 'BR' })
      .onConflict((oc) => oc.column('code').doNothing())
      .returning('id')
      .executeTakeFirst();
    const locationId =
      location?.id ??
      (await db.selectFrom('locations').select('id').where('code', '=', 'sao1').executeTakeFirstOrThrow()).id;
    const plan = plans[0] as PlanRow;
    const service = await db
      .insertInto('services')
      .values({
        account_id: me.accountId,
        plan_id: plan.id,
        type: plan.type,
        label: 'accented',
        status: 'active',
        location_id: locationId,
        price_paise: plan.price,
        config: '{}',
      })
      .returning('id')
      .executeTakeFirstOrThrow();
    const wrong: string[] = [];
    for (const q of ['loc:SAO1', 'loc:"sao paulo 1"', 'loc:"São Paulo 1"', 'loc:"SÃO PAULO 1"']) {
      const groups = await t.deps.search.search(parseSearch(`${q} accented`), { accountId: me.accountId });
      const ids = groups.flatMap((g) => g.items.map((item) => item.id));
      if (ids.length !== 1 || ids[0] !== `service:${service.id}`) wrong.push(`${q} → ${JSON.stringify(ids)}`);
    }
    assert.deepEqual(wrong, []);
  });
});

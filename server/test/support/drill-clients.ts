// The kill drills' customers and what they and the emulators see (kill-drills.test.ts): one
// funded client per order, the order placed through the session API, the resources each
// emulator holds for a service (read from its own API, GET /__emulator/state), and the money as
// the client's wallet and invoices show it, held to the ledger in the database.

import assert from 'node:assert/strict';
import { sql } from 'kysely';
import type { Browser } from './browser.ts';
import { freshIp, signedInBrowser } from './factories.ts';
import type { UpstreamApp } from './upstreams.ts';

/** Each client's float, in rupees: more than any plan. */
export const FLOAT = 20_000;

export type Product = 'vps' | 'game' | 'web' | 'baremetal';

export const PLANS: Record<Product, string> = {
  vps: 'vps-1c-1g',
  game: 'mc-java-2g',
  web: 'web-starter',
  baremetal: 'bm-2cpu-64g',
};

export interface Placed {
  product: Product;
  browser: Browser;
  accountId: number;
  serviceId: number;
  jobId: number;
  orderId: number;
  /** Paise. */
  price: number;
  domain: string;
}

let orders = 0;

/** A new funded client orders `product` in mum1 (not waited for). */
export async function place(u: UpstreamApp, product: Product, domain?: string): Promise<Placed> {
  const { browser, account } = await signedInBrowser(u.t, freshIp());
  await u.t.deps.wallet.credit(account.id, String(FLOAT), 'drill float');
  const plan = await u.t.deps.database.db
    .selectFrom('plans')
    .select(['id', 'price_paise'])
    .where('label', '=', PLANS[product])
    .executeTakeFirstOrThrow();
  const n = ++orders;
  const name = domain ?? `k${n}.example.in`;
  const config = {
    vps: { hostname: name, os: 'debian-12' },
    game: { server_name: `k${n}`, eula: true },
    web: {},
    baremetal: { hostname: name, os: 'debian-12' },
  }[product];
  const res = await browser.post(
    '/api/v1/client/orders/',
    {
      plan_id: plan.id,
      config: { region: 'mum1', ...config },
      ...(product === 'web' ? { domain: name } : {}),
      idempotency_key: `kill-${n}`,
    },
    { csrf: true },
  );
  assert.equal(res.statusCode, 201, res.body);
  const body = res.json();
  return {
    product,
    browser,
    accountId: account.id,
    serviceId: body.service.id,
    jobId: body.job.id,
    orderId: body.order.id,
    price: Number(plan.price_paise),
    domain: name,
  };
}

interface Machine {
  url: string;
  power: string;
  actions: string[];
  installParams: unknown;
  media: { inserted: boolean }[];
  drives: { os: { hostname: string } | null }[];
}

/** What the four emulators hold, each read from its own control API. */
export interface Upstream {
  vms: { name: string }[];
  servers: { externalId: string | null }[];
  accounts: { user: string; domain: string; email: string }[];
  machines: Machine[];
}

async function stateOf<T>(url: string): Promise<T> {
  const res = await fetch(`${url}/__emulator/state`);
  assert.equal(res.status, 200, `${url}/__emulator/state`);
  return (await res.json()) as T;
}

export async function upstream(u: UpstreamApp): Promise<Upstream> {
  const [pve, ptero, cpanel, redfish] = await Promise.all([
    stateOf<{ vms: { name: string }[] }>(u.pve.url),
    stateOf<{ servers: { externalId: string | null }[] }>(u.ptero?.url ?? ''),
    stateOf<{ accounts: Upstream['accounts'] }>(u.cpanel?.url ?? ''),
    stateOf<{ machines: Machine[] }>(u.redfish?.machines[0]?.url ?? ''),
  ]);
  return {
    vms: pve.vms,
    servers: ptero.servers,
    accounts: cpanel.accounts,
    machines: redfish.machines,
  };
}

/** The bare-metal machine behind a service's node (node `bmc-mum1-<i+1>` is machine i). */
export async function machineIndex(u: UpstreamApp, serviceId: number): Promise<number> {
  const node = await u.t.deps.database.db
    .selectFrom('services')
    .innerJoin('nodes', 'nodes.id', 'services.node_id')
    .select('nodes.name')
    .where('services.id', '=', serviceId)
    .executeTakeFirstOrThrow();
  return Number(node.name.replace('bmc-mum1-', '')) - 1;
}

/**
 * How many of the service's resources the emulator holds: VMs, game servers, hosting accounts
 * carrying its marker (by its external name `hp-<installation>-svc-<id>`); for bare metal, the
 * installs started on its machine (virtual media inserted).
 */
export function resources(u: UpstreamApp, up: Upstream, placed: Placed, machine: number): number {
  const name = `hp-${u.t.deps.installation.id}-svc-${placed.serviceId}`;
  switch (placed.product) {
    case 'vps':
      return up.vms.filter((vm) => vm.name === name).length;
    case 'game':
      return up.servers.filter((s) => s.externalId === name).length;
    case 'web':
      return up.accounts.filter((a) => a.email.startsWith(`${name}@`)).length;
    case 'baremetal':
      return (up.machines[machine]?.actions ?? []).filter((a) => a.startsWith('VirtualMedia.InsertMedia')).length;
  }
}

/** Off, nothing inserted, no install parameters, disks empty: back in stock. */
export function inStock(machine: Machine | undefined): boolean {
  return (
    machine !== undefined &&
    machine.power === 'Off' &&
    machine.installParams === null &&
    machine.media.every((m) => !m.inserted) &&
    machine.drives.every((d) => d.os === null)
  );
}

interface Money {
  transactions: { kind: string; amount: string; reference: { type: string; id: number } | null }[];
  documents: { id: number; kind: string; total: string }[];
}

const rupees = (paise: number) => (paise / 100).toFixed(2);

/** The wallet and the invoices as the client reads them; the balance is the ledger's sum (read in the database). */
async function money(u: UpstreamApp, placed: Placed, balance: number): Promise<Money> {
  const wallet = await placed.browser.get('/api/v1/client/wallet/');
  assert.equal(wallet.statusCode, 200, wallet.body);
  assert.equal(wallet.json().wallet.balance, rupees(balance), `service ${placed.serviceId}: the balance`);
  const { rows } = await sql<{ sum: string }>`select sum(amount_paise) as sum from wallet_transactions
    where account_id = ${placed.accountId}`.execute(u.t.deps.database.db);
  assert.equal(Number(rows[0]?.sum), balance, `service ${placed.serviceId}: the ledger adds up to the balance`);
  const invoices = await placed.browser.get('/api/v1/client/invoices/');
  assert.equal(invoices.statusCode, 200, invoices.body);
  return { transactions: wallet.json().transactions, documents: invoices.json().invoices };
}

/** Paid once: one debit of the price, no refund, one invoice; the order paid. */
export async function chargedOnce(u: UpstreamApp, placed: Placed): Promise<void> {
  const m = await money(u, placed, FLOAT * 100 - placed.price);
  const what = `service ${placed.serviceId}`;
  assert.deepEqual(
    m.transactions.map((t) => [t.kind, t.amount]),
    [
      ['order', `-${rupees(placed.price)}`],
      ['adjustment', rupees(FLOAT * 100)],
    ],
    what,
  );
  assert.deepEqual(
    m.documents.map((d) => [d.kind, d.total]),
    [['invoice', rupees(placed.price)]],
    what,
  );
  const order = await placed.browser.get(`/api/v1/client/orders/?id=${placed.orderId}`);
  assert.equal(order.json().order.status, 'paid', what);
}

/** Refunded once through a credit note of the whole invoice: the float whole again, the order refunded. */
export async function refundedOnce(u: UpstreamApp, placed: Placed): Promise<void> {
  const m = await money(u, placed, FLOAT * 100);
  const what = `service ${placed.serviceId}`;
  assert.deepEqual(
    m.transactions.map((t) => [t.kind, t.amount]),
    [
      ['refund', rupees(placed.price)],
      ['order', `-${rupees(placed.price)}`],
      ['adjustment', rupees(FLOAT * 100)],
    ],
    what,
  );
  assert.deepEqual(
    m.documents.map((d) => [d.kind, d.total]),
    [
      ['credit_note', rupees(placed.price)],
      ['invoice', rupees(placed.price)],
    ],
    what,
  );
  assert.deepEqual(m.transactions[0]?.reference, { type: 'credit_note', id: m.documents[0]?.id }, what);
  const order = await placed.browser.get(`/api/v1/client/orders/?id=${placed.orderId}`);
  assert.equal(order.json().order.status, 'refunded', what);
}

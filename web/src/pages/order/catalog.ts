// The catalog as the order pages read it: the answer's types, what each product type is called
// and what its order form asks, how a plan's specs read in words, and why a region cannot take
// an order. Plan types come from the catalog itself: a type not described here still gets a page
// (its name humanized, its specs listed as they are, and the fields every order takes).

import type { paths } from '@hostplane/sdk/schema';
import { api, unwrap } from '../../lib/api.ts';
import { plural } from '../../lib/format.ts';

type CatalogAnswer = paths['/api/v1/client/catalog/']['get']['responses'][200]['content']['application/json'];
export type Catalog = Extract<CatalogAnswer, { plans: unknown }>;
export type Plan = Catalog['plans'][number];
export type Region = Catalog['regions'][number];
export type PlanType = Plan['type'];

export const CATALOG_KEY = ['catalog'] as const;

export async function fetchCatalog(): Promise<Catalog> {
  const data = await unwrap(api.GET('/api/v1/client/catalog/'));
  if (!('plans' in data)) throw new Error('The catalog answer had no plans.');
  return data;
}

/** What an order of the type asks for, beyond plan and region (server: core/products/<type>/order.ts). */
export interface TypeInfo {
  title: string;
  /** "VPS": for "See VPS plans". */
  short: string;
  /** "a virtual server": for headings such as "Order a virtual server". */
  noun: string;
  blurb: string;
  os: boolean;
  hostname: boolean;
  sshKeys: boolean;
  domain: boolean;
  eula: boolean;
  /** Takes cloud-init user data (`config.user_data`, at most 64 KiB). */
  userData?: boolean;
}

const TYPES: Record<string, TypeInfo> = {
  vps: {
    title: 'Virtual server (VPS)',
    short: 'VPS',
    noun: 'a virtual server',
    blurb: 'A KVM server with root access, its own IPv4 address and the Linux of your choice.',
    os: true,
    hostname: true,
    sshKeys: true,
    domain: false,
    eula: false,
    userData: true,
  },
  game: {
    title: 'Game server',
    short: 'game server',
    noun: 'a game server',
    blurb: 'A ready-to-play server for Minecraft, Valheim and more, with its own control panel.',
    os: false,
    hostname: false,
    sshKeys: false,
    domain: false,
    eula: true,
  },
  web: {
    title: 'Web hosting',
    short: 'web hosting',
    noun: 'web hosting',
    blurb: 'cPanel hosting for your website, with email accounts and databases.',
    os: false,
    hostname: false,
    sshKeys: false,
    domain: true,
    eula: false,
  },
  baremetal: {
    title: 'Dedicated server',
    short: 'dedicated server',
    noun: 'a dedicated server',
    blurb: 'A whole physical machine for you alone, installed with the Linux of your choice.',
    os: true,
    hostname: true,
    sshKeys: true,
    domain: false,
    eula: false,
  },
};

/** The order in which the chooser lists types; any other type the catalog has follows. */
const TYPE_ORDER = ['vps', 'game', 'web', 'baremetal'];

export function humanize(key: string): string {
  const words = key.replace(/[_-]+/g, ' ').trim();
  return words.charAt(0).toUpperCase() + words.slice(1);
}

export function isKnownType(type: string): boolean {
  return Object.hasOwn(TYPES, type);
}

export function typeInfo(type: string): TypeInfo {
  return (
    TYPES[type] ?? {
      title: humanize(type),
      short: humanize(type).toLowerCase(),
      noun: humanize(type).toLowerCase(),
      blurb: '',
      os: false,
      hostname: false,
      sshKeys: false,
      domain: false,
      eula: false,
    }
  );
}

/** The plan types the catalog sells, in the chooser's order. */
export function typesOf(catalog: Catalog): string[] {
  const present = [...new Set(catalog.plans.map((p) => p.type as string))];
  return present.sort((a, b) => {
    const ia = TYPE_ORDER.indexOf(a);
    const ib = TYPE_ORDER.indexOf(b);
    return (ia < 0 ? 99 : ia) - (ib < 0 ? 99 : ib) || a.localeCompare(b);
  });
}

const count = new Intl.NumberFormat('en-IN');

function memory(mb: number): string {
  return mb >= 1024 && mb % 1024 === 0 ? `${count.format(mb / 1024)} GB` : `${count.format(mb)} MB`;
}

function disk(gb: number): string {
  return gb >= 1000 && gb % 10 === 0 ? `${(gb / 1000).toLocaleString('en-IN')} TB` : `${count.format(gb)} GB`;
}

/** A plan's specs as short phrases ("2 vCPU", "4 GB memory"), in a stable order. */
export function specLines(plan: Plan, games: Catalog['games']): string[] {
  const lines: string[] = [];
  const seen = new Set<string>();
  const specs = plan.specs;
  const num = (key: string): number | null => {
    seen.add(key);
    const v = specs[key];
    return typeof v === 'number' && Number.isFinite(v) ? v : null;
  };
  const add = (key: string, phrase: (n: number) => string) => {
    const n = num(key);
    if (n !== null) lines.push(phrase(n));
  };
  if (typeof specs.game === 'string') {
    seen.add('game');
    const slug = specs.game;
    lines.push(games.find((g) => g.slug === slug)?.name ?? humanize(slug));
  }
  add('sites', (n) => plural(n, 'website'));
  add('slots', (n) => plural(n, 'player slot'));
  add('vcpu', (n) => plural(n, 'vCPU', 'vCPUs'));
  add('cpus', (n) => plural(n, 'CPU'));
  add('cpu_percent', (n) => `${count.format(n)}% CPU (${(n / 100).toLocaleString('en-IN')} cores)`);
  add('ram_mb', (n) => `${memory(n)} memory`);
  add('ram_gb', (n) => `${count.format(n)} GB memory`);
  add('disk_gb', (n) => `${disk(n)} disk`);
  add('bandwidth_tb', (n) => `${n.toLocaleString('en-IN')} TB bandwidth / month`);
  add('mailboxes', (n) => plural(n, 'mailbox', 'mailboxes'));
  add('databases', (n) => plural(n, 'database'));
  add('backups', (n) => plural(n, 'backup'));
  add('snapshots', (n) => plural(n, 'snapshot'));
  for (const [key, value] of Object.entries(specs)) {
    if (seen.has(key) || value === null || typeof value === 'object') continue;
    lines.push(`${humanize(key)}: ${String(value)}`);
  }
  return lines;
}

/** The game a plan runs (game plans: specs.game), or null. */
export function gameOf(plan: Plan): string | null {
  return typeof plan.specs.game === 'string' ? plan.specs.game : null;
}

const REASONS: Record<string, string> = {
  region_closed: 'Closed to new orders',
  no_capacity: 'Full right now',
  no_ipv4: 'No IPv4 addresses left',
  not_sold_here: 'This plan is not sold here',
  plan_inactive: 'This plan is no longer sold',
  no_os: 'No OS image is available',
};

export function reasonText(reason: string | null | undefined): string {
  if (!reason) return 'Not available right now';
  return REASONS[reason] ?? humanize(reason);
}

/** Where a plan can be ordered: every region of the catalog, with the plan's own availability. */
export function regionsFor(
  plan: Plan,
  regions: Catalog['regions'],
): { code: string; name: string; city: string; available: boolean; reason: string | null }[] {
  const listed = regions.map((region) => {
    const own = plan.regions.find((r) => r.code === region.code);
    return own
      ? { code: region.code, name: region.name, city: region.city, available: own.available, reason: own.reason }
      : { code: region.code, name: region.name, city: region.city, available: false, reason: 'not_sold_here' };
  });
  // A region the plan names that the region list lacks (should not happen) still shows.
  for (const own of plan.regions)
    if (!listed.some((r) => r.code === own.code))
      listed.push({ code: own.code, name: own.name, city: own.city, available: own.available, reason: own.reason });
  return listed;
}

/** A random key for one order form (crypto.randomUUID needs a secure context; fall back on random bytes). */
export function newIdempotencyKey(): string {
  if (typeof crypto.randomUUID === 'function') return crypto.randomUUID();
  const bytes = crypto.getRandomValues(new Uint8Array(16));
  return Array.from(bytes, (b) => b.toString(16).padStart(2, '0')).join('');
}

// IPv4 stock per location: staff add ranges; provisioning allocates one free address to a
// service (locking it so two orders never get the same one) and releases it on termination.

import type { Kysely, Transaction } from 'kysely';
import type { DB } from '../../db/tables.ts';
import type { Who } from '../activity/activity.ts';
import { auditAs } from '../audit/audit.ts';
import { AppError } from '../errors.ts';
import { parseCidr } from '../net/ip.ts';

export const MIN_PREFIX = 20; // at most 4094 hosts per command, so a typo cannot add millions of rows

function toInt(address: string): number {
  return address.split('.').reduce((acc, octet) => acc * 256 + Number(octet), 0);
}

function toText(value: number): string {
  return [24, 16, 8, 0].map((shift) => Math.floor(value / 2 ** shift) % 256).join('.');
}

export interface AddedRange {
  cidr: string;
  gateway: string;
  added: number;
  skipped: number;
}

/**
 * Add every host of `cidr` to a location's pool, except the network, broadcast and gateway
 * addresses; a staff `who` (byOperator, byStaffMember) audits it (`ipv4.add_range`, the location).
 */
export async function addRange(
  db: Kysely<DB>,
  locationId: number,
  cidrText: string,
  gatewayText?: string,
  audited: { who?: Who | undefined; reason?: string | null | undefined } = {},
): Promise<AddedRange> {
  const cidr = parseCidr(cidrText);
  if (cidr === null || cidr.kind !== 'ipv4')
    throw AppError.fields({ cidr: 'must be an IPv4 CIDR such as 203.0.113.0/26' });
  const [network, prefix] = cidr.range;
  if (prefix < MIN_PREFIX || prefix > 30) throw AppError.fields({ cidr: `prefix must be /${MIN_PREFIX} to /30` });
  const first = toInt(network.toString()) + 1;
  const last = toInt(network.toString()) + 2 ** (32 - prefix) - 2;
  let gateway = first;
  if (gatewayText !== undefined) {
    const parsed = parseCidr(gatewayText);
    if (parsed === null || parsed.kind !== 'ipv4' || parsed.range[1] !== 32)
      throw AppError.fields({ gateway: 'must be an IPv4 address' });
    gateway = toInt(parsed.range[0].toString());
    if (gateway < first || gateway > last) throw AppError.fields({ gateway: `must be inside ${cidr.text}` });
  }
  const rows: { location_id: number; address: string; prefix: number; gateway: string }[] = [];
  for (let host = first; host <= last; host++) {
    if (host !== gateway)
      rows.push({ location_id: locationId, address: toText(host), prefix, gateway: toText(gateway) });
  }
  // One transaction: an address another location owns refuses the whole range (nothing added),
  // and a range added by two staff at once cannot slip between the insert and the check.
  const inTransaction = (work: (trx: Kysely<DB>) => Promise<AddedRange>) =>
    db.isTransaction ? work(db) : db.transaction().execute(work);
  return inTransaction(async (trx) => {
    let added = 0;
    const owners = new Map<number, number>(); // location id → addresses of this range it holds
    for (let i = 0; i < rows.length; i += 500) {
      const chunk = rows.slice(i, i + 500);
      const result = await trx
        .insertInto('ipv4_addresses')
        .values(chunk)
        .onConflict((oc) => oc.column('address').doNothing())
        .executeTakeFirst();
      const inserted = Number(result.numInsertedOrUpdatedRows ?? 0n);
      added += inserted;
      if (inserted === chunk.length) continue;
      const taken = await trx
        .selectFrom('ipv4_addresses')
        .select('location_id')
        .select((eb) => eb.fn.countAll<string>().as('count'))
        .where(
          'address',
          'in',
          chunk.map((r) => r.address),
        )
        .where('location_id', '<>', locationId)
        .groupBy('location_id')
        .execute();
      for (const t of taken) owners.set(t.location_id, (owners.get(t.location_id) ?? 0) + Number(t.count));
    }
    if (owners.size > 0) {
      const codes = await trx
        .selectFrom('locations')
        .select(['id', 'code'])
        .where('id', 'in', [...owners.keys()])
        .execute();
      const byCode = [...owners].map(
        ([id, count]) => [codes.find((c) => c.id === id)?.code ?? `#${id}`, count] as const,
      );
      const parts = byCode.map(
        ([code, count]) => `${count} ${count === 1 ? 'address belongs' : 'addresses belong'} to location ${code}`,
      );
      throw new AppError('conflict', {
        message: `${cidr.text} overlaps another location's pool: ${parts.join(', ')}. Nothing was added.`,
        details: { owners: Object.fromEntries(byCode) },
      });
    }
    const done = { cidr: cidr.text, gateway: toText(gateway), added, skipped: rows.length - added };
    await auditAs(trx as Transaction<DB>, audited.who, {
      action: 'ipv4.add_range',
      targetType: 'location',
      targetId: locationId,
      after: { ...done },
      reason: audited.reason ?? null,
      at: new Date(),
    });
    return done;
  });
}

export interface AllocatedAddress {
  address: string;
  prefix: number;
  gateway: string;
}

/**
 * Take a free address in a location for a service, inside the caller's transaction. SKIP LOCKED
 * lets concurrent orders take different addresses instead of queueing on the same row. Returns
 * the address the service already holds when called again for it.
 */
export async function allocateAddress(
  trx: Transaction<DB>,
  locationId: number,
  serviceId: number,
): Promise<AllocatedAddress | null> {
  const held = await trx
    .selectFrom('ipv4_addresses')
    .select(['address', 'prefix', 'gateway'])
    .where('service_id', '=', serviceId)
    .executeTakeFirst();
  if (held) return held;
  const free = await trx
    .selectFrom('ipv4_addresses')
    .select('id')
    .where('location_id', '=', locationId)
    .where('status', '=', 'free')
    .orderBy('id')
    .limit(1)
    .forUpdate()
    .skipLocked()
    .executeTakeFirst();
  if (!free) return null;
  return trx
    .updateTable('ipv4_addresses')
    .set({ status: 'allocated', service_id: serviceId, allocated_at: new Date() })
    .where('id', '=', free.id)
    .returning(['address', 'prefix', 'gateway'])
    .executeTakeFirstOrThrow();
}

/** Return a service's address to the pool. */
export async function releaseAddress(db: Kysely<DB>, serviceId: number): Promise<number> {
  const result = await db
    .updateTable('ipv4_addresses')
    .set({ status: 'free', service_id: null, allocated_at: null })
    .where('service_id', '=', serviceId)
    .executeTakeFirst();
  return Number(result.numUpdatedRows);
}

export async function poolSummary(db: Kysely<DB>) {
  return db
    .selectFrom('ipv4_addresses')
    .innerJoin('locations', 'locations.id', 'ipv4_addresses.location_id')
    .select(['locations.code as location', 'ipv4_addresses.status'])
    .select((eb) => eb.fn.countAll<string>().as('count'))
    .groupBy(['locations.code', 'ipv4_addresses.status'])
    .orderBy('locations.code')
    .execute();
}

export interface Ipv4Range {
  location: string;
  /** The range the addresses were added as: the network of their gateway and prefix. */
  cidr: string;
  gateway: string;
  free: number;
  allocated: number;
  reserved: number;
}

/** The pool by range (addresses sharing a location, prefix and gateway), each with its counts by state. */
export async function ipRanges(db: Kysely<DB>): Promise<Ipv4Range[]> {
  const rows = await db
    .selectFrom('ipv4_addresses')
    .innerJoin('locations', 'locations.id', 'ipv4_addresses.location_id')
    .select(['locations.code as location', 'ipv4_addresses.prefix', 'ipv4_addresses.gateway', 'ipv4_addresses.status'])
    .select((eb) => eb.fn.countAll<string>().as('count'))
    .groupBy(['locations.code', 'ipv4_addresses.prefix', 'ipv4_addresses.gateway', 'ipv4_addresses.status'])
    .execute();
  const ranges = new Map<string, Ipv4Range>();
  for (const row of rows) {
    const size = 2 ** (32 - row.prefix);
    const network = toText(Math.floor(toInt(row.gateway) / size) * size);
    const key = `${row.location} ${network}/${row.prefix} ${row.gateway}`;
    const range = ranges.get(key) ?? {
      location: row.location,
      cidr: `${network}/${row.prefix}`,
      gateway: row.gateway,
      free: 0,
      allocated: 0,
      reserved: 0,
    };
    range[row.status] += Number(row.count);
    ranges.set(key, range);
  }
  return [...ranges.values()].sort(
    (a, b) =>
      a.location.localeCompare(b.location) ||
      toInt(a.cidr.split('/')[0] as string) - toInt(b.cidr.split('/')[0] as string),
  );
}

// IPv4 stock per location: staff add ranges; provisioning allocates one free address to a
// service (locking it so two orders never get the same one) and releases it on termination.

import type { Kysely, Transaction } from 'kysely';
import type { DB } from '../../db/tables.ts';
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

/** Add every host of `cidr` to a location's pool, except the network, broadcast and gateway addresses. */
export async function addRange(
  db: Kysely<DB>,
  locationId: number,
  cidrText: string,
  gatewayText?: string,
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
  const rows = [];
  for (let host = first; host <= last; host++) {
    if (host !== gateway)
      rows.push({ location_id: locationId, address: toText(host), prefix, gateway: toText(gateway) });
  }
  let added = 0;
  for (let i = 0; i < rows.length; i += 500) {
    const result = await db
      .insertInto('ipv4_addresses')
      .values(rows.slice(i, i + 500))
      .onConflict((oc) => oc.column('address').doNothing())
      .executeTakeFirst();
    added += Number(result.numInsertedOrUpdatedRows ?? 0n);
  }
  return { cidr: cidr.text, gateway: toText(gateway), added, skipped: rows.length - added };
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

// Builds the driver for a node from its row: endpoint, sealed credentials and settings, through
// the driver registry (upstreams/registry.ts). Drivers keep connections open, so one is kept per
// node and replaced when the node's row changes. Each node's call budget (upstreams/budgets.ts,
// taken by every HTTP call its driver makes) is set here from the row's settings.

import type WebSocket from 'ws';
import type { NodeRow } from '../../db/tables.ts';
import { budgetOf, nodeBudgets } from '../../upstreams/budgets.ts';
import type { ReverseDns } from '../../upstreams/dns.ts';
import type {
  ConsoleDialOptions,
  ConsoleEvents,
  DriverTiming,
  NodeAccess,
  NodeDriver,
  UpstreamConsoleTicket,
} from '../../upstreams/driver.ts';
import {
  type AnyDriverEntry,
  DNS_DRIVERS,
  type DnsKind,
  DRIVER_ROLES,
  DRIVERS,
  type DriverEntry,
  type DriverRegistry,
  type DriverRole,
  type DriverRoles,
  driverEntry,
  NoDriverError,
} from '../../upstreams/registry.ts';
import { AppError } from '../errors.ts';
import type { NodeService } from '../nodes/node.service.ts';

export type { DriverTiming } from '../../upstreams/driver.ts';

export interface Drivers {
  /**
   * The driver of an active node whose kind has a driver of `role` (DriverRoles). A node that
   * cannot serve it (inactive, another kind, no driver yet, unreadable credentials): 409
   * hypervisor_not_configured for a hypervisor, else 503 node_unreachable.
   */
  driverFor<R extends DriverRole>(node: NodeRow | undefined | null, role: R): DriverRoles[R];
  /**
   * Probe an active node through its driver: what it runs (e.g. "<software> 8.2.4"). Throws
   * NoDriverError ("no driver for … nodes yet") for a kind without a driver, AppError for an
   * inactive node or unreadable credentials, the driver's UpstreamError when the node fails.
   */
  ping(node: NodeRow): Promise<{ detail: string }>;
  /**
   * Dial the console of `ticket` on the node that issued it (NodeDriver.openConsole); the node
   * need not be active still. Throws as `ping` does before dialing.
   */
  openConsole(
    node: NodeRow,
    ticket: UpstreamConsoleTicket,
    events: ConsoleEvents,
    options: ConsoleDialOptions,
  ): WebSocket;
  /** The node driver's filter of client frames for this console (NodeDriver.consoleInput). */
  consoleInput(
    node: NodeRow,
    ticket: UpstreamConsoleTicket,
  ): ((data: WebSocket.RawData, binary: boolean) => boolean) | null;
  /**
   * The driver of the DNS server holding the reverse zones (upstreams/dns.ts); 409
   * unavailable:reverse_dns when none is configured (PDNS_*, or demo mode's emulator).
   */
  reverseDns(): ReverseDns;
  /** Point reverse DNS at this server (null: none), replacing the driver built before (demo mode, tests). */
  configureReverseDns(settings: ReverseDnsAccess | null): void;
  close(): void;
  /** The deadlines drivers were built with (steps that poll a node use them too). */
  readonly timing: DriverTiming;
}

/** The DNS server of the reverse zones: its kind and how it is reached (config-powerdns.ts). */
export interface ReverseDnsAccess {
  kind: DnsKind;
  access: NodeAccess;
}

/** Why a node cannot give the driver of `role`. */
function refusal(role: DriverRole): AppError {
  if (role === 'hypervisor') return new AppError('hypervisor_not_configured');
  return new AppError('node_unreachable', {
    message:
      role === 'bareMetal'
        ? 'The management controller of this server cannot be reached right now.'
        : 'The panel of this service cannot be reached right now.',
    retryAfter: 30,
  });
}

/** An entry of the registry narrowed to the role asked for (the registry's entries are typed per role). */
function serves<R extends DriverRole>(entry: DriverEntry, role: R): entry is DriverEntry<R> {
  return entry.role === role;
}

interface Cached<R extends DriverRole> {
  role: R;
  fingerprint: string;
  driver: DriverRoles[R];
}

/** A cached driver narrowed to the role asked for. */
function holds<R extends DriverRole>(cached: Cached<DriverRole>, role: R): cached is Cached<R> {
  return cached.role === role;
}

export function createDrivers(
  nodes: NodeService,
  timing: DriverTiming = {},
  registry: DriverRegistry = DRIVERS,
  dns: ReverseDnsAccess | null = null,
): Drivers {
  const cache = new Map<number, Cached<DriverRole>>();
  let reverseDns: ReverseDns | null = null;
  const buildDns = (settings: ReverseDnsAccess | null) =>
    settings ? DNS_DRIVERS[settings.kind].create(settings.access, timing) : null;
  reverseDns = buildDns(dns);

  /** The node's driver, from the cache while the row is unchanged. */
  function build<R extends DriverRole>(node: NodeRow, entry: DriverEntry<R>): DriverRoles[R] {
    // The driver's HTTP client takes its tokens by the node's name (its metrics label).
    nodeBudgets.configure(node.name, budgetOf(node.settings, timing.budget));
    const fingerprint = `${node.kind}|${node.endpoint}|${node.credentials_sealed}|${JSON.stringify(node.settings)}`;
    const cached = cache.get(node.id);
    if (cached && holds(cached, entry.role) && cached.fingerprint === fingerprint) return cached.driver;
    cached?.driver.close();
    let credentials: Record<string, string>;
    try {
      credentials = nodes.credentials(node);
    } catch {
      throw new AppError('hypervisor_not_configured', {
        message: `The credentials of node ${node.name} cannot be read.`,
      });
    }
    const driver = entry.create(
      { name: node.name, endpoint: node.endpoint, credentials, settings: node.settings },
      timing,
    );
    cache.set(node.id, { role: entry.role, fingerprint, driver });
    return driver;
  }

  /** The driver of the node's kind, whatever its role (probes and consoles). */
  function anyDriver(node: NodeRow): NodeDriver {
    const entry = driverEntry(node.kind, registry);
    for (const role of DRIVER_ROLES) if (serves(entry, role)) return build(node, entry);
    throw new NoDriverError(node.kind, true);
  }

  return {
    driverFor(node, role) {
      if (!node?.active) throw refusal(role);
      let entry: AnyDriverEntry;
      try {
        entry = driverEntry(node.kind, registry);
      } catch (error) {
        if (error instanceof NoDriverError) throw refusal(role);
        throw error;
      }
      if (!serves(entry, role)) throw refusal(role);
      return build(node, entry);
    },

    async ping(node) {
      const entry = driverEntry(node.kind, registry);
      if (!node.active) throw new AppError('hypervisor_not_configured');
      const { version } = await anyDriver(node).ping();
      return { detail: `${entry.software} ${version}` };
    },

    openConsole(node, ticket, events, options) {
      return anyDriver(node).openConsole(ticket, events, options);
    },

    consoleInput(node, ticket) {
      return anyDriver(node).consoleInput?.(ticket) ?? null;
    },

    reverseDns() {
      if (!reverseDns) {
        throw AppError.unavailable('reverse_dns', 'Reverse DNS is not offered on this platform.');
      }
      return reverseDns;
    },

    configureReverseDns(settings) {
      reverseDns?.close();
      reverseDns = buildDns(settings);
    },

    timing,

    close() {
      for (const { driver } of cache.values()) driver.close();
      cache.clear();
      reverseDns?.close();
      reverseDns = null;
    },
  };
}

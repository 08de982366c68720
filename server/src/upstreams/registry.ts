// Node kind → driver: what credentials a node of that kind needs, how its row becomes a driver
// configuration, and the driver itself. The only file that knows every concrete driver; the
// core reaches drivers through core/services/drivers.ts, which builds them from this table.
// A kind with `driver: null` can be added by staff but nothing can run on it yet.

import type { NodeKind } from '../db/tables.ts';
import type { BareMetal } from './bare-metal.ts';
import { createCpanelPanel, parseCpanelNode } from './cpanel/index.ts';
import type { ReverseDns } from './dns.ts';
import type { DriverTiming, NodeAccess } from './driver.ts';
import type { GamePanel } from './game-panel.ts';
import type { Hypervisor } from './hypervisor.ts';
import { createPowerDns } from './powerdns/index.ts';
import { parseProxmoxNode } from './proxmox/config.ts';
import { createProxmoxHypervisor } from './proxmox/hypervisor.ts';
import { createPterodactylPanel, parsePterodactylNode } from './pterodactyl/index.ts';
import { createRedfishMachine, parseRedfishNode } from './redfish/index.ts';
import type { WebPanel } from './web-panel.ts';

/** The kind of interface a driver implements, beyond NodeDriver. */
export interface DriverRoles {
  hypervisor: Hypervisor;
  gamePanel: GamePanel;
  webPanel: WebPanel;
  bareMetal: BareMetal;
}
export type DriverRole = keyof DriverRoles;
/** Every role, once (the object's keys are checked against DriverRoles). */
const ROLES: Record<DriverRole, true> = { hypervisor: true, gamePanel: true, webPanel: true, bareMetal: true };
export const DRIVER_ROLES = Object.keys(ROLES) as DriverRole[];

export interface DriverEntry<R extends DriverRole = DriverRole> {
  role: R;
  /** What the node runs, as `nodes check` names it before the version (e.g. "… 8.2.4"). */
  software: string;
  /** Build the driver of one node. Never throws: a configuration that cannot work fails every call. */
  create(node: NodeAccess, timing: DriverTiming): DriverRoles[R];
}

/** A driver entry of any role, its `role` telling which (narrowed by comparing it). */
export type AnyDriverEntry = { [R in DriverRole]: DriverEntry<R> }[DriverRole];

export interface KindEntry {
  /** Credential fields `nodes add` requires (non-empty strings). */
  credentials: readonly string[];
  /** Null: no driver for this kind yet. */
  driver: AnyDriverEntry | null;
}

export type DriverRegistry = Record<NodeKind, KindEntry>;

export const DRIVERS: DriverRegistry = {
  proxmox: {
    credentials: ['token_id', 'token_secret'],
    driver: {
      role: 'hypervisor',
      software: 'Proxmox VE',
      create: (node, timing) => createProxmoxHypervisor(parseProxmoxNode(node, timing)),
    },
  },
  pterodactyl: {
    // The application key provisions (ptla_); the client key of a root admin does what clients ask (ptlc_).
    credentials: ['app_key', 'client_key'],
    driver: {
      role: 'gamePanel',
      software: 'Pterodactyl Panel',
      create: (node, timing) => createPterodactylPanel(parsePterodactylNode(node, timing)),
    },
  },
  cpanel: {
    // A WHM API token of root (or a reseller owning the accounts); UAPI runs as each account through WHM.
    credentials: ['username', 'api_token'],
    driver: {
      role: 'webPanel',
      software: 'cPanel & WHM',
      create: (node, timing) => createCpanelPanel(parseCpanelNode(node, timing)),
    },
  },
  redfish: {
    // One physical machine: its BMC's account (endpoint = the BMC's base URL; settings
    // {tls_insecure?, tls_ca?, system?} when it manages several systems).
    credentials: ['username', 'password'],
    driver: {
      role: 'bareMetal',
      software: 'Redfish BMC',
      create: (node, timing) => createRedfishMachine(parseRedfishNode(node, timing)),
    },
  },
};

/** A kind of DNS server the reverse zones may live on (config-powerdns.ts: one per installation). */
export type DnsKind = 'powerdns';

export interface DnsDriverEntry {
  /** What the server runs, as a probe names it before the version. */
  software: string;
  /** Credential fields the access needs (non-empty strings). */
  credentials: readonly string[];
  /** Build the driver. Never throws: a configuration that cannot work fails every call. */
  create(access: NodeAccess, timing: DriverTiming): ReverseDns;
}

/** DNS server kind → driver (reverse DNS, upstreams/dns.ts). */
export const DNS_DRIVERS: Record<DnsKind, DnsDriverEntry> = {
  powerdns: {
    // The Authoritative server's HTTP API; `api-key` of pdns.conf (endpoint = its webserver's base URL).
    software: 'PowerDNS Authoritative',
    credentials: ['api_key'],
    create: (access, timing) => createPowerDns(access, timing),
  },
};

/** No driver can serve this node: its kind has none yet, or the kind is unknown. */
export class NoDriverError extends Error {
  override name = 'NoDriverError';
  readonly kind: string;
  /** False: not a node kind at all (a programming error: the database allows only NodeKind). */
  readonly known: boolean;
  constructor(kind: string, known: boolean) {
    super(known ? `no driver for ${kind} nodes yet` : `unknown node kind "${kind}"`);
    this.kind = kind;
    this.known = known;
  }
}

/** The node kinds of a registry, in its order. */
export function nodeKinds(registry: DriverRegistry = DRIVERS): NodeKind[] {
  return Object.keys(registry) as NodeKind[];
}

/** The registry's entry for a kind; an unknown kind throws NoDriverError (known: false). */
export function kindEntry(kind: string, registry: DriverRegistry = DRIVERS): KindEntry {
  if (!Object.hasOwn(registry, kind)) throw new NoDriverError(kind, false);
  return registry[kind as NodeKind];
}

/** The driver entry for a kind; NoDriverError for a kind without one, or an unknown kind. */
export function driverEntry(kind: string, registry: DriverRegistry = DRIVERS): AnyDriverEntry {
  const entry = kindEntry(kind, registry).driver;
  if (!entry) throw new NoDriverError(kind, true);
  return entry;
}

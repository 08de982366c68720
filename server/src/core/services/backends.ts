// Builds the driver for a node from its row: endpoint, sealed credentials and settings, through
// the driver registry (upstreams/registry.ts). Drivers keep connections open, so one is kept per
// node and replaced when the node's row changes. Each node's call budget (upstreams/budgets.ts,
// taken by every HTTP call its driver makes) is set here from the row's settings.

import type WebSocket from 'ws';
import type { NodeRow } from '../../db/tables.ts';
import type { BareMetal } from '../../upstreams/bare-metal.ts';
import { budgetOf, nodeBudgets } from '../../upstreams/budgets.ts';
import type {
  ConsoleDialOptions,
  ConsoleEvents,
  DriverTiming,
  NodeDriver,
  UpstreamConsoleTicket,
} from '../../upstreams/driver.ts';
import type { GamePanel } from '../../upstreams/game-panel.ts';
import type { Hypervisor } from '../../upstreams/hypervisor.ts';
import {
  DRIVERS,
  type DriverEntry,
  type DriverRegistry,
  driverEntry,
  NoDriverError,
} from '../../upstreams/registry.ts';
import type { WebPanel } from '../../upstreams/web-panel.ts';
import { AppError } from '../errors.ts';
import type { NodeService } from '../nodes/node.service.ts';

export type { DriverTiming } from '../../upstreams/driver.ts';

export interface Backends {
  /** The hypervisor driver of an active node whose kind has one; 409 hypervisor_not_configured for anything else. */
  hypervisor(node: NodeRow | undefined | null): Hypervisor;
  /** The game-panel driver of an active node; 503 node_unreachable when the node cannot be used. */
  gamePanel(node: NodeRow | undefined | null): GamePanel;
  /** The web-hosting panel driver of an active node; 503 node_unreachable when the node cannot be used. */
  webPanel(node: NodeRow | undefined | null): WebPanel;
  /** The BMC driver of an active bare-metal node (one machine); 503 node_unreachable when it cannot be used. */
  bareMetal(node: NodeRow | undefined | null): BareMetal;
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
  close(): void;
  /** The deadlines drivers were built with (steps that poll a node use them too). */
  readonly timing: DriverTiming;
}

export function createBackends(
  nodes: NodeService,
  timing: DriverTiming = {},
  registry: DriverRegistry = DRIVERS,
): Backends {
  const cache = new Map<number, { fingerprint: string; driver: NodeDriver }>();

  /** The node's driver, from the cache while the row is unchanged. */
  function build(node: NodeRow, entry: DriverEntry): NodeDriver {
    // The driver's HTTP client takes its tokens by the node's name (its metrics label).
    nodeBudgets.configure(node.name, budgetOf(node.settings, timing.budget));
    const fingerprint = `${node.kind}|${node.endpoint}|${node.credentials_sealed}|${JSON.stringify(node.settings)}`;
    const cached = cache.get(node.id);
    if (cached?.fingerprint === fingerprint) return cached.driver;
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
    cache.set(node.id, { fingerprint, driver });
    return driver;
  }

  /** The driver of a panel node (game, web) or a machine's BMC: 503 node_unreachable when the node cannot be used. */
  function panelOf(node: NodeRow | undefined | null, role: 'gamePanel' | 'webPanel' | 'bareMetal'): NodeDriver {
    const refuse = () =>
      new AppError('node_unreachable', {
        message:
          role === 'bareMetal'
            ? 'The management controller of this server cannot be reached right now.'
            : 'The panel of this service cannot be reached right now.',
        retryAfter: 30,
      });
    if (!node?.active) throw refuse();
    let entry: DriverEntry;
    try {
      entry = driverEntry(node.kind, registry);
    } catch (error) {
      if (error instanceof NoDriverError) throw refuse();
      throw error;
    }
    if (entry.role !== role) throw refuse();
    return build(node, entry);
  }

  return {
    hypervisor(node) {
      if (!node?.active) throw new AppError('hypervisor_not_configured');
      let entry: DriverEntry;
      try {
        entry = driverEntry(node.kind, registry);
      } catch (error) {
        if (error instanceof NoDriverError) throw new AppError('hypervisor_not_configured');
        throw error;
      }
      if (entry.role !== 'hypervisor') throw new AppError('hypervisor_not_configured');
      return build(node, entry) as Hypervisor;
    },

    gamePanel: (node) => panelOf(node, 'gamePanel') as GamePanel,
    webPanel: (node) => panelOf(node, 'webPanel') as WebPanel,
    bareMetal: (node) => panelOf(node, 'bareMetal') as BareMetal,

    async ping(node) {
      const entry = driverEntry(node.kind, registry);
      if (!node.active) throw new AppError('hypervisor_not_configured');
      const { version } = await build(node, entry).ping();
      return { detail: `${entry.software} ${version}` };
    },

    openConsole(node, ticket, events, options) {
      return build(node, driverEntry(node.kind, registry)).openConsole(ticket, events, options);
    },

    consoleInput(node, ticket) {
      return build(node, driverEntry(node.kind, registry)).consoleInput?.(ticket) ?? null;
    },

    timing,

    close() {
      for (const { driver } of cache.values()) driver.close();
      cache.clear();
    },
  };
}

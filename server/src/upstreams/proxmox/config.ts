// What the Proxmox VE driver needs to reach a node, with its defaults, and the check that the
// configuration can work at all (an http(s) endpoint without credentials in it, a token id of
// the form USER@REALM!TOKENID). Problems are reported without echoing the values.

import type { DriverTiming, NodeAccess } from '../driver.ts';
import { checkEndpoint, configProblem, type EndpointConfig, settingsOf } from '../driver-config.ts';
import type { UpstreamError } from '../errors.ts';
import type { TlsOptions } from '../http.ts';
import type { SnippetStorage } from './snippets.ts';

export interface ProxmoxConfig extends EndpointConfig {
  /** Where pveproxy listens, e.g. https://pve1.example.in:8006 (or http://127.0.0.1:PORT for the emulator). */
  endpoint: string;
  /** The PVE node name VMs live on (e.g. pve1). */
  node: string;
  /** `USER@REALM!TOKENID` */
  tokenId: string;
  /** The token's secret (a UUID); sent only in the Authorization header, never logged or put in an error. */
  tokenSecret: string;
  /** Self-signed node certificates: pin the CA (preferred) or skip verification. */
  tls?: TlsOptions;
  /** Storage for cloned disks (default: the template's). */
  storage?: string;
  /** Where cloud-init user data snippets go (./snippets.ts); without it, user data is refused. */
  snippets?: SnippetStorage;
  /** Bridge for the first NIC (default: the template's). */
  bridge?: string;
  /** Deadline of one HTTP request (default 15 s). */
  requestTimeoutMs?: number;
  /** Deadline of one task, e.g. a clone (default 10 min). */
  taskTimeoutMs?: number;
  /** First task-poll interval; it grows to 2 s for long tasks (default 250 ms). */
  pollIntervalMs?: number;
}

export interface ResolvedConfig extends ProxmoxConfig {
  base: string;
  requestTimeoutMs: number;
  taskTimeoutMs: number;
  pollIntervalMs: number;
}

/** The configuration with defaults, or the reason it cannot work (thrown by every call, never at creation). */
export function resolveConfig(config: ProxmoxConfig): { resolved: ResolvedConfig; problem: UpstreamError | null } {
  const endpoint = checkEndpoint(config.endpoint);
  let problem = endpoint.problem;
  const base = endpoint.url ? `${endpoint.base}/api2/json` : '';
  if (!problem && !/^[^@\s]+@[^!\s]+![A-Za-z0-9][A-Za-z0-9_.-]*$/.test(config.tokenId)) {
    problem = 'the token id must look like USER@REALM!TOKENID';
  }
  if (!problem && !/^[\x21-\x7e]+$/.test(config.tokenSecret)) problem = 'the token secret is empty or malformed';
  if (!problem && !/^[A-Za-z0-9][A-Za-z0-9.-]*$/.test(config.node)) problem = 'the node name is not a host name';
  return {
    resolved: {
      ...config,
      base,
      requestTimeoutMs: config.requestTimeoutMs ?? 15_000,
      taskTimeoutMs: config.taskTimeoutMs ?? 600_000,
      pollIntervalMs: config.pollIntervalMs ?? 250,
    },
    problem: configProblem(`Proxmox node ${config.node}`, problem),
  };
}

/** A node row's endpoint, credentials ({token_id, token_secret}) and settings as a driver configuration. */
export function parseProxmoxNode(node: NodeAccess, timing: DriverTiming = {}): ProxmoxConfig {
  // The settings a node row may carry for Proxmox VE (`nodes add --settings`): node, storage,
  // tls_insecure, ca, snippets_storage with snippets_dir (./snippets.ts); a value of another
  // type reads as not given.
  const settings = settingsOf(node);
  const text = (key: string): string | undefined => {
    const value = settings[key];
    return typeof value === 'string' ? value : undefined;
  };
  const storage = text('storage');
  const ca = text('ca');
  const snippetsStorage = text('snippets_storage');
  const snippetsDir = text('snippets_dir');
  return {
    metricsNode: node.name,
    endpoint: node.endpoint,
    node: text('node') ?? 'pve',
    tokenId: node.credentials.token_id ?? '',
    tokenSecret: node.credentials.token_secret ?? '',
    ...(storage ? { storage } : {}),
    ...(snippetsStorage && snippetsDir ? { snippets: { storage: snippetsStorage, dir: snippetsDir } } : {}),
    tls: { insecure: settings.tls_insecure === true, ...(ca ? { ca } : {}) },
    ...timing,
  };
}

// Demo mode (DEMO=1, the default when embedded): the emulated upstream panels start on
// loopback inside this process (Proxmox VE for virtual servers, Pterodactyl for game servers, cPanel/WHM for web hosting),
// and one node of each per demo region points at them, so an order really runs through the real
// drivers. Bare metal: one Redfish emulator with three machines (each its own BMC on its own
// port), each a `redfish` node in mum1 where the demo's bare-metal plan is sold. The emulators
// keep their state in DATA_DIR/emulators/, and their API tokens and the BMC password are derived
// from SECRET_KEY, so restarts keep everything consistent (machine i stays node demo-bmc-mum1-<i+1>).

import { join } from 'node:path';
import { startCpanelEmulator } from '../../emulators/src/cpanel/index.ts';
import { startPowerDnsEmulator } from '../../emulators/src/powerdns/index.ts';
import { startProxmoxEmulator } from '../../emulators/src/proxmox/index.ts';
import { startPterodactylEmulator } from '../../emulators/src/pterodactyl/index.ts';
import { startRazorpayEmulator } from '../../emulators/src/razorpay/index.ts';
import { startRedfishEmulator } from '../../emulators/src/redfish/index.ts';
import { hmacHex } from './core/crypto/secrets.ts';
import type { Deps } from './core/deps.ts';
import type { PutNode } from './core/nodes/node.service.ts';
import { ensurePrivateDir } from './db/lock.ts';
import { zoneOf24 } from './upstreams/dns.ts';

const DEMO_REGIONS = ['mum1', 'blr1', 'del1'];
/** Where the demo's bare-metal machines are (the demo catalog sells its bare-metal plan there). */
const BARE_METAL_REGION = 'mum1';
const BARE_METAL_MACHINES = 3;

export interface DemoUpstreams {
  proxmoxUrl: string;
  pterodactylUrl: string;
  cpanelUrl: string;
  /** The BMC of each emulated bare-metal machine. */
  bmcUrls: string[];
  /** The Razorpay emulator online deposits go through, or null when RAZORPAY_* names a real account. */
  razorpayUrl: string | null;
  /** The PowerDNS emulator reverse DNS goes through, or null when PDNS_* names a real server. */
  powerdnsUrl: string | null;
  stop(): Promise<void>;
}

/** A Pterodactyl API key (`ptla_`/`ptlc_` + 43 characters) that stays the same for this installation. */
function demoPanelKey(secretKey: Buffer, prefix: 'ptla_' | 'ptlc_'): string {
  return `${prefix}${hmacHex(secretKey, 'demo-upstream', prefix).slice(0, 43)}`;
}

/** Add or refresh a demo node (credentials sealed as staff's `nodes add` seals them). */
async function upsertNode(
  deps: Deps,
  /** `capacity`: 40 unless given; a bare-metal node is one machine (1). */
  row: Omit<PutNode, 'capacity'> & { capacity?: number },
): Promise<void> {
  await deps.nodes.put({ ...row, capacity: row.capacity ?? 40 });
}

/** A UUID-shaped token secret that stays the same for this installation. */
function demoSecret(secretKey: Buffer, purpose: string): string {
  const hex = hmacHex(secretKey, 'demo-upstream', purpose);
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-4${hex.slice(13, 16)}-8${hex.slice(17, 20)}-${hex.slice(20, 32)}`;
}

export async function startDemoUpstreams(deps: Deps): Promise<DemoUpstreams> {
  const dir = join(deps.config.dataDir, 'emulators');
  ensurePrivateDir(dir); // 0700, like the rest of DATA_DIR (F4)
  const proxmox = await startProxmoxEmulator({
    node: 'pve',
    tokenId: 'hostplane@pve!demo',
    tokenSecret: demoSecret(deps.secretKey, 'proxmox'),
    stateFile: join(dir, 'proxmox.json'),
    // Its `local` storage: the demo's nodes write cloud-init snippets there, as a real
    // installation writes them to a snippets storage shared with its nodes.
    storageDir: join(dir, 'proxmox-local'),
    taskDelayMs: 400,
  });
  const pterodactyl = await startPterodactylEmulator({
    appKey: demoPanelKey(deps.secretKey, 'ptla_'),
    clientKey: demoPanelKey(deps.secretKey, 'ptlc_'),
    stateFile: join(dir, 'pterodactyl.json'),
    installDelayMs: 3000,
  });
  const cpanel = await startCpanelEmulator({
    whmToken: hmacHex(deps.secretKey, 'demo-upstream', 'cpanel').slice(0, 32).toUpperCase(),
    stateFile: join(dir, 'cpanel.json'),
    autosslDelayMs: 5000,
  });
  // Installs take a few seconds, as the issue asks of the demo.
  const redfish = await startRedfishEmulator({
    machines: BARE_METAL_MACHINES,
    password: demoSecret(deps.secretKey, 'redfish'),
    stateFile: join(dir, 'redfish.json'),
    installDelayMs: 8000,
  });
  const razorpay = await startDemoRazorpay(deps);
  const powerdns = await startDemoPowerDns(deps, dir);
  const db = deps.database.db;
  const locations = await db.selectFrom('locations').select(['id', 'code']).where('code', 'in', DEMO_REGIONS).execute();
  for (const location of locations) {
    await upsertNode(deps, {
      name: `demo-pve-${location.code}`,
      kind: 'proxmox',
      locationId: location.id,
      endpoint: proxmox.url,
      credentials: { token_id: proxmox.tokenId, token_secret: proxmox.tokenSecret },
      settings: { node: proxmox.node, snippets_storage: 'local', snippets_dir: proxmox.storageDir, demo: true },
    });
    await upsertNode(deps, {
      name: `demo-ptero-${location.code}`,
      kind: 'pterodactyl',
      locationId: location.id,
      endpoint: pterodactyl.url,
      credentials: { app_key: pterodactyl.appKey, client_key: pterodactyl.clientKey },
      settings: { panel_node: pterodactyl.panelNodeId, demo: true },
    });
    await upsertNode(deps, {
      name: `demo-cpanel-${location.code}`,
      kind: 'cpanel',
      locationId: location.id,
      endpoint: cpanel.url,
      credentials: { username: cpanel.whmUser, api_token: cpanel.whmToken },
      settings: { demo: true },
    });
  }
  const bareMetal = locations.find((l) => l.code === BARE_METAL_REGION);
  const bmcNodes: string[] = [];
  if (bareMetal) {
    for (const [i, machine] of redfish.machines.entries()) {
      const name = `demo-bmc-${bareMetal.code}-${i + 1}`;
      await upsertNode(deps, {
        name,
        kind: 'redfish',
        locationId: bareMetal.id,
        endpoint: machine.url,
        credentials: { username: redfish.username, password: redfish.password },
        settings: { demo: true },
        capacity: 1,
      });
      bmcNodes.push(name);
    }
  }
  deps.logger.info(
    {
      proxmox: proxmox.url,
      pterodactyl: pterodactyl.url,
      cpanel: cpanel.url,
      bmcs: redfish.machines.map((m) => m.url),
      nodes: [
        ...locations.flatMap((l) => [`demo-pve-${l.code}`, `demo-ptero-${l.code}`, `demo-cpanel-${l.code}`]),
        ...bmcNodes,
      ],
    },
    'demo upstreams: Proxmox VE, Pterodactyl, cPanel/WHM and Redfish (bare metal) emulators started',
  );
  return {
    proxmoxUrl: proxmox.url,
    pterodactylUrl: pterodactyl.url,
    cpanelUrl: cpanel.url,
    bmcUrls: redfish.machines.map((m) => m.url),
    razorpayUrl: razorpay?.url ?? null,
    powerdnsUrl: powerdns?.url ?? null,
    stop: async () => {
      await Promise.all([
        proxmox.stop(),
        pterodactyl.stop(),
        cpanel.stop(),
        redfish.stop(),
        razorpay?.stop(),
        powerdns?.stop(),
      ]);
    },
  };
}

/**
 * Online deposits in the demo: the Razorpay emulator (keys derived from SECRET_KEY), its webhooks
 * sent to this server's own endpoint on PUBLIC_URL. Configured RAZORPAY_* keys win: then none.
 */
async function startDemoRazorpay(deps: Deps) {
  if (deps.config.razorpay !== null) return null;
  const emulator = await startRazorpayEmulator({
    keyId: `rzp_test_${hmacHex(deps.secretKey, 'demo-upstream', 'razorpay-id').slice(0, 14)}`,
    keySecret: hmacHex(deps.secretKey, 'demo-upstream', 'razorpay-secret').slice(0, 24),
    webhookSecret: hmacHex(deps.secretKey, 'demo-upstream', 'razorpay-webhook').slice(0, 24),
    webhookUrl: `${deps.config.publicUrl}/api/v1/webhooks/razorpay`,
  });
  deps.razorpay.configure({
    keyId: emulator.keyId,
    keySecret: emulator.keySecret,
    webhookSecret: emulator.webhookSecret,
    apiUrl: emulator.url,
  });
  deps.logger.info({ razorpay: emulator.url }, 'demo upstreams: Razorpay emulator started (online deposits)');
  return emulator;
}

/**
 * Reverse DNS in the demo: the PowerDNS emulator (its key derived from SECRET_KEY, its zones kept
 * in DATA_DIR/emulators/), holding the /24 reverse zone of every address of the pool, which is
 * also the zone the driver picks when no PDNS_REVERSE_ZONES rule says otherwise. Configured
 * PDNS_* variables win: then none.
 */
async function startDemoPowerDns(deps: Deps, dir: string) {
  if (deps.config.reverseDns !== null) return null;
  const pool = await deps.database.db.selectFrom('ipv4_addresses').select('address').distinct().execute();
  const zones = [...new Set(pool.map((row) => zoneOf24(row.address)))];
  const emulator = await startPowerDnsEmulator({
    apiKey: hmacHex(deps.secretKey, 'demo-upstream', 'powerdns').slice(0, 32),
    stateFile: join(dir, 'powerdns.json'),
    zones,
  });
  deps.drivers.configureReverseDns({
    kind: 'powerdns',
    access: { name: 'demo-powerdns', endpoint: emulator.url, credentials: { api_key: emulator.apiKey }, settings: {} },
  });
  deps.logger.info({ powerdns: emulator.url, zones }, 'demo upstreams: PowerDNS emulator started (reverse DNS)');
  return emulator;
}

// A test app wired to an emulated Proxmox VE node (and, with `game`, an emulated Pterodactyl
// panel; with `web`, cPanel/WHM; with `redfish`, bare-metal machines behind Redfish BMCs): the
// demo catalog, one node per demo region pointing at each emulator (bare metal: one redfish node
// per machine, all in mum1 where the demo's bare-metal plan is sold), fast task polling, and
// short retry delays.

import {
  type CpanelEmulator,
  type CpanelEmulatorOptions,
  startCpanelEmulator,
} from '../../../emulators/src/cpanel/index.ts';
import { type ProxmoxEmulator, startProxmoxEmulator } from '../../../emulators/src/proxmox/index.ts';
import {
  type PterodactylEmulator,
  type PterodactylEmulatorOptions,
  startPterodactylEmulator,
} from '../../../emulators/src/pterodactyl/index.ts';
import {
  type RedfishEmulator,
  type RedfishEmulatorOptions,
  startRedfishEmulator,
} from '../../../emulators/src/redfish/index.ts';
import { seedDemoCatalog } from '../../src/core/catalog/demo-seed.ts';
import { createTestApp, type TestApp, type TestAppOptions } from './harness.ts';
import { TEST_DRIVER_TIMING, testQueues } from './timing.ts';

export interface UpstreamApp {
  t: TestApp;
  pve: ProxmoxEmulator;
  /** The game panel, when asked for with `game`. */
  ptero: PterodactylEmulator | null;
  /** The web hosting server, when asked for with `web`. */
  cpanel: CpanelEmulator | null;
  /** The bare-metal machines, when asked for with `redfish`: machine i is node `bmc-mum1-<i+1>`. */
  redfish: RedfishEmulator | null;
  close(): Promise<void>;
}

export async function createUpstreamApp(
  options: TestAppOptions & {
    capacity?: number;
    retryLimit?: number;
    /** Start a Pterodactyl emulator too (these options, fast delays by default) with a node per region. */
    game?: boolean | PterodactylEmulatorOptions;
    /** Start a cPanel/WHM emulator too (these options, fast AutoSSL by default) with a node per region. */
    web?: boolean | CpanelEmulatorOptions;
    /** Start a Redfish emulator too (these options; 3 machines and fast delays by default), one node per machine in mum1. */
    redfish?: boolean | RedfishEmulatorOptions;
  } = {},
): Promise<UpstreamApp> {
  const pve = await startProxmoxEmulator({ taskDelayMs: 15 });
  const ptero = options.game
    ? await startPterodactylEmulator({
        installDelayMs: 150,
        startDelayMs: 50,
        backupDelayMs: 50,
        ...(typeof options.game === 'object' ? options.game : {}),
      })
    : null;
  const cpanel = options.web
    ? await startCpanelEmulator({ autosslDelayMs: 200, ...(typeof options.web === 'object' ? options.web : {}) })
    : null;
  const redfish = options.redfish
    ? await startRedfishEmulator({
        machines: 3,
        installDelayMs: 150,
        powerDelayMs: 30,
        taskDelayMs: 20,
        ...(typeof options.redfish === 'object' ? options.redfish : {}),
      })
    : null;
  const stopEmulators = async () => {
    await pve.stop();
    await ptero?.stop();
    await cpanel?.stop();
    await redfish?.stop();
  };
  const t = await createTestApp({
    worker: true,
    ...options,
    overrides: {
      // Tests poll fast and walk one account through many actions: the nodes' call budget and the
      // per-account panel limits are raised (security-budgets.test.ts runs with the real ones).
      driverTiming: TEST_DRIVER_TIMING,
      limits: {
        panel_read_account: { points: 100_000 },
        panel_write_account: { points: 100_000 },
        panel_sso_account: { points: 100_000 },
      },
      queues: testQueues(options.retryLimit ?? 3),
      ...options.overrides,
    },
  }).catch(async (error: unknown) => {
    await stopEmulators();
    throw error;
  });
  await seedDemoCatalog(t.deps.database.db);
  for (const code of ['mum1', 'blr1', 'del1']) {
    await t.deps.nodes.add({
      name: `pve-${code}`,
      kind: 'proxmox',
      locationCode: code,
      endpoint: pve.url,
      credentials: { token_id: pve.tokenId, token_secret: pve.tokenSecret },
      // The emulator's `local` storage doubles as the snippets storage shared with this host.
      settings: { node: pve.node, snippets_storage: 'local', snippets_dir: pve.storageDir },
      capacity: options.capacity ?? 100,
    });
    if (ptero) {
      await t.deps.nodes.add({
        name: `ptero-${code}`,
        kind: 'pterodactyl',
        locationCode: code,
        endpoint: ptero.url,
        credentials: { app_key: ptero.appKey, client_key: ptero.clientKey },
        settings: { panel_node: ptero.panelNodeId },
        capacity: options.capacity ?? 100,
      });
    }
    if (cpanel) {
      await t.deps.nodes.add({
        name: `cpanel-${code}`,
        kind: 'cpanel',
        locationCode: code,
        endpoint: cpanel.url,
        credentials: { username: cpanel.whmUser, api_token: cpanel.whmToken },
        capacity: options.capacity ?? 100,
      });
    }
  }
  for (const [i, machine] of (redfish?.machines ?? []).entries()) {
    await t.deps.nodes.add({
      name: `bmc-mum1-${i + 1}`,
      kind: 'redfish',
      locationCode: 'mum1',
      endpoint: machine.url,
      credentials: { username: redfish?.username, password: redfish?.password },
      capacity: 1,
    });
  }
  return {
    t,
    pve,
    ptero,
    cpanel,
    redfish,
    async close() {
      await t.close();
      await stopEmulators();
    },
  };
}

export { waitFor } from './wait.ts';

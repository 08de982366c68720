// A test app wired to an emulated Proxmox VE node: the demo catalog, one node per demo region
// pointing at the emulator, fast task polling, and short retry delays.

import { type ProxmoxEmulator, startProxmoxEmulator } from '../../../emulators/src/proxmox/index.ts';
import { seedDemoCatalog } from '../../src/core/catalog/demo-seed.ts';
import { createTestApp, type TestApp, type TestAppOptions } from './harness.ts';

export interface UpstreamApp {
  t: TestApp;
  pve: ProxmoxEmulator;
  close(): Promise<void>;
}

export async function createUpstreamApp(
  options: TestAppOptions & { capacity?: number; retryLimit?: number } = {},
): Promise<UpstreamApp> {
  const pve = await startProxmoxEmulator({ taskDelayMs: 15 });
  const t = await createTestApp({
    worker: true,
    ...options,
    overrides: {
      driverTiming: { pollIntervalMs: 10, requestTimeoutMs: 1500, taskTimeoutMs: 5000 },
      queues: {
        'service.provision': { retryDelay: 1, retryBackoff: false, retryLimit: options.retryLimit ?? 3 },
        'service.action': { retryDelay: 1, retryBackoff: false, retryLimit: 1 },
      },
      ...options.overrides,
    },
  });
  await seedDemoCatalog(t.deps.database.db);
  for (const code of ['mum1', 'blr1', 'del1']) {
    await t.deps.nodes.add({
      name: `pve-${code}`,
      kind: 'proxmox',
      locationCode: code,
      endpoint: pve.url,
      credentials: { token_id: pve.tokenId, token_secret: pve.tokenSecret },
      settings: { node: pve.node },
      capacity: options.capacity ?? 100,
    });
  }
  return {
    t,
    pve,
    async close() {
      await t.close();
      await pve.stop();
    },
  };
}

export { waitFor } from './wait.ts';

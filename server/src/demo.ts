// Demo mode (DEMO=1, the default when embedded): the emulated upstream panels start on
// loopback inside this process, and one node per demo region points at them, so an order
// really runs through the real drivers. The emulator keeps its VMs in DATA_DIR/emulators/, and
// its API token is derived from SECRET_KEY, so restarts keep everything consistent.

import { join } from 'node:path';
import { startProxmoxEmulator } from '../../emulators/src/proxmox/index.ts';
import { encryptSecret, hmacHex } from './core/crypto/secrets.ts';
import type { Deps } from './core/deps.ts';
import { ensurePrivateDir } from './db/lock.ts';

const DEMO_REGIONS = ['mum1', 'blr1', 'del1'];

export interface DemoUpstreams {
  proxmoxUrl: string;
  stop(): Promise<void>;
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
    taskDelayMs: 400,
  });
  const db = deps.database.db;
  const locations = await db.selectFrom('locations').select(['id', 'code']).where('code', 'in', DEMO_REGIONS).execute();
  for (const location of locations) {
    const name = `demo-pve-${location.code}`;
    const credentials = JSON.stringify({ token_id: proxmox.tokenId, token_secret: proxmox.tokenSecret });
    await db
      .insertInto('nodes')
      .values({
        name,
        kind: 'proxmox',
        location_id: location.id,
        endpoint: proxmox.url,
        credentials_sealed: encryptSecret(deps.secretKey, credentials, `node-credentials:${name}`),
        settings: JSON.stringify({ node: proxmox.node, demo: true }),
        capacity: 40,
        health: 'up',
      })
      .onConflict((oc) =>
        oc.column('name').doUpdateSet({
          endpoint: proxmox.url,
          credentials_sealed: encryptSecret(deps.secretKey, credentials, `node-credentials:${name}`),
          health: 'up',
        }),
      )
      .execute();
  }
  deps.logger.info(
    { proxmox: proxmox.url, nodes: locations.map((l) => `demo-pve-${l.code}`) },
    'demo upstreams: Proxmox VE emulator started',
  );
  return { proxmoxUrl: proxmox.url, stop: () => proxmox.stop() };
}

// Run the Proxmox VE emulator on its own process (e.g. so it outlives an app killed in a test):
//   node emulators/src/proxmox/main.ts [--port 8006] [--state FILE] [--node pve]
//        [--token-id USER@REALM!TOKENID] [--token-secret UUID] [--task-delay MS] [--storage-dir DIR]
// Prints one JSON line with its URL and credentials, and stops on SIGTERM/SIGINT.

import { parseArgs } from 'node:util';
import { startProxmoxEmulator } from './index.ts';

const { values } = parseArgs({
  options: {
    port: { type: 'string', default: '0' },
    state: { type: 'string' },
    node: { type: 'string', default: 'pve' },
    'token-id': { type: 'string' },
    'token-secret': { type: 'string' },
    'task-delay': { type: 'string', default: '300' },
    'storage-dir': { type: 'string' },
  },
});

function whole(name: string, text: string): number {
  const value = Number(text);
  if (!Number.isInteger(value) || value < 0) {
    console.error(`--${name} must be a whole number, not ${JSON.stringify(text)}`);
    process.exit(2);
  }
  return value;
}

const emulator = await startProxmoxEmulator({
  port: whole('port', values.port),
  node: values.node,
  stateFile: values.state ?? null,
  taskDelayMs: whole('task-delay', values['task-delay']),
  ...(values['token-id'] ? { tokenId: values['token-id'] } : {}),
  ...(values['storage-dir'] ? { storageDir: values['storage-dir'] } : {}),
  ...(values['token-secret'] ? { tokenSecret: values['token-secret'] } : {}),
});
process.stdout.write(
  `${JSON.stringify({
    url: emulator.url,
    node: emulator.node,
    token_id: emulator.tokenId,
    token_secret: emulator.tokenSecret,
    storage_dir: emulator.storageDir,
    authorization: `PVEAPIToken=${emulator.tokenId}=${emulator.tokenSecret}`,
  })}\n`,
);
const stop = () => void emulator.stop().then(() => process.exit(0));
process.once('SIGTERM', stop);
process.once('SIGINT', stop);

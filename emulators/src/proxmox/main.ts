// Run the Proxmox VE emulator on its own:
//   node --import tsx emulators/src/proxmox/main.ts [--port 8006] [--state FILE] [--token-secret UUID] [--task-delay MS]
// It prints its URL and credentials and stops on SIGTERM/SIGINT.

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
  },
});

const emulator = await startProxmoxEmulator({
  port: Number(values.port),
  node: values.node,
  stateFile: values.state ?? null,
  taskDelayMs: Number(values['task-delay']),
  ...(values['token-id'] ? { tokenId: values['token-id'] } : {}),
  ...(values['token-secret'] ? { tokenSecret: values['token-secret'] } : {}),
});
process.stdout.write(
  `${JSON.stringify({ url: emulator.url, node: emulator.node, token_id: emulator.tokenId, token_secret: emulator.tokenSecret })}\n`,
);
const stop = () => void emulator.stop().then(() => process.exit(0));
process.once('SIGTERM', stop);
process.once('SIGINT', stop);

// Run the Pterodactyl Panel + Wings emulator on its own process:
//   node emulators/src/pterodactyl/main.ts [--port 8080] [--wings-port 8443]
//        [--state FILE] [--app-key ptla_…] [--client-key ptlc_…] [--install-delay MS]
//        [--start-delay MS] [--backup-delay MS] [--token-ttl S]
// Prints one JSON line with its URLs and keys, and stops on SIGTERM/SIGINT.

import { parseArgs } from 'node:util';
import { startPterodactylEmulator } from './index.ts';

const { values } = parseArgs({
  options: {
    port: { type: 'string', default: '0' },
    'wings-port': { type: 'string', default: '0' },
    state: { type: 'string' },
    'app-key': { type: 'string' },
    'client-key': { type: 'string' },
    'install-delay': { type: 'string', default: '3000' },
    'start-delay': { type: 'string', default: '1500' },
    'backup-delay': { type: 'string', default: '500' },
    'token-ttl': { type: 'string', default: '600' },
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

const emulator = await startPterodactylEmulator({
  port: whole('port', values.port),
  wingsPort: whole('wings-port', values['wings-port']),
  stateFile: values.state ?? null,
  installDelayMs: whole('install-delay', values['install-delay']),
  startDelayMs: whole('start-delay', values['start-delay']),
  backupDelayMs: whole('backup-delay', values['backup-delay']),
  tokenTtlSeconds: whole('token-ttl', values['token-ttl']),
  ...(values['app-key'] ? { appKey: values['app-key'] } : {}),
  ...(values['client-key'] ? { clientKey: values['client-key'] } : {}),
});
process.stdout.write(
  `${JSON.stringify({
    url: emulator.url,
    wings_url: emulator.wingsUrl,
    app_key: emulator.appKey,
    client_key: emulator.clientKey,
    node_id: emulator.panelNodeId,
  })}\n`,
);
const stop = () => void emulator.stop().then(() => process.exit(0));
process.once('SIGTERM', stop);
process.once('SIGINT', stop);

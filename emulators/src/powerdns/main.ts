// Run the PowerDNS emulator on its own process:
//   node emulators/src/powerdns/main.ts [--port 8081] [--api-key KEY]
//        [--zone 113.0.203.in-addr.arpa.]... [--state FILE]
// Prints one JSON line with the url and the API key, and stops on SIGTERM/SIGINT.

import { parseArgs } from 'node:util';
import { startPowerDnsEmulator } from './index.ts';

const { values } = parseArgs({
  options: {
    port: { type: 'string', default: '0' },
    'api-key': { type: 'string' },
    zone: { type: 'string', multiple: true },
    state: { type: 'string' },
  },
});

const port = Number(values.port);
if (!Number.isInteger(port) || port < 0 || port > 65535) {
  console.error(`--port must be a port number, not ${JSON.stringify(values.port)}`);
  process.exit(2);
}

const emulator = await startPowerDnsEmulator({
  port,
  ...(values['api-key'] ? { apiKey: values['api-key'] } : {}),
  zones: values.zone ?? [],
  stateFile: values.state ?? null,
});
process.stdout.write(
  `${JSON.stringify({ url: emulator.url, api_key: emulator.apiKey, zones: [...emulator.state.zones.keys()] })}\n`,
);
const stop = () => void emulator.stop().then(() => process.exit(0));
process.once('SIGTERM', stop);
process.once('SIGINT', stop);

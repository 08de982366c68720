// Run the Redfish emulator on its own process (e.g. for the demo, or so it outlives an app
// killed in a test):
//   node emulators/src/redfish/main.ts [--port 8443] [--machines 3] [--state FILE]
//        [--username root] [--password SECRET] [--install-delay MS] [--power-delay MS]
//        [--task-delay MS] [--ids dell|random] [--require-if-match]
// With --port N, machine i listens on N + i. Prints one JSON line with each machine's BMC URL
// and the account, and stops on SIGTERM/SIGINT.

import { parseArgs } from 'node:util';
import { startRedfishEmulator } from './index.ts';

const { values } = parseArgs({
  options: {
    port: { type: 'string', default: '0' },
    machines: { type: 'string', default: '3' },
    state: { type: 'string' },
    username: { type: 'string', default: 'root' },
    password: { type: 'string', default: 'calvin-emulated' },
    'install-delay': { type: 'string', default: '5000' },
    'power-delay': { type: 'string', default: '1000' },
    'task-delay': { type: 'string', default: '500' },
    ids: { type: 'string', default: 'dell' },
    'require-if-match': { type: 'boolean', default: false },
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

if (values.ids !== 'dell' && values.ids !== 'random') {
  console.error('--ids must be dell or random');
  process.exit(2);
}

const emulator = await startRedfishEmulator({
  port: whole('port', values.port),
  machines: Math.max(1, whole('machines', values.machines)),
  stateFile: values.state ?? null,
  username: values.username,
  password: values.password,
  installDelayMs: whole('install-delay', values['install-delay']),
  powerDelayMs: whole('power-delay', values['power-delay']),
  taskDelayMs: whole('task-delay', values['task-delay']),
  ids: values.ids,
  requireIfMatch: values['require-if-match'],
});
process.stdout.write(
  `${JSON.stringify({
    machines: emulator.machines.map((m) => ({ url: m.url, serial: m.serial })),
    username: emulator.username,
    password: emulator.password,
  })}\n`,
);
const stop = () => void emulator.stop().then(() => process.exit(0));
process.once('SIGTERM', stop);
process.once('SIGINT', stop);

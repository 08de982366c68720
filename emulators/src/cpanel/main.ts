// Run the cPanel & WHM emulator on its own process (e.g. for the demo, or so it outlives an app
// killed in a test):
//   node emulators/src/cpanel/main.ts [--port 2087] [--state FILE] [--whm-token TOKEN]
//        [--autossl-delay MS] [--min-password-strength N] [--prefix-size 8|16] [--ip 192.0.2.10]
// Prints one JSON line with its URL and credentials, and stops on SIGTERM/SIGINT.

import { parseArgs } from 'node:util';
import { startCpanelEmulator } from './index.ts';

const { values } = parseArgs({
  options: {
    port: { type: 'string', default: '0' },
    state: { type: 'string' },
    'whm-user': { type: 'string', default: 'root' },
    'whm-token': { type: 'string' },
    'autossl-delay': { type: 'string', default: '3000' },
    'min-password-strength': { type: 'string', default: '65' },
    'prefix-size': { type: 'string', default: '8' },
    ip: { type: 'string', default: '192.0.2.10' },
    nameservers: { type: 'string', default: 'ns1.hostplane.test,ns2.hostplane.test' },
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

const prefixSize = whole('prefix-size', values['prefix-size']);
if (prefixSize !== 8 && prefixSize !== 16) {
  console.error('--prefix-size must be 8 or 16');
  process.exit(2);
}

const emulator = await startCpanelEmulator({
  port: whole('port', values.port),
  stateFile: values.state ?? null,
  whmUser: values['whm-user'],
  autosslDelayMs: whole('autossl-delay', values['autossl-delay']),
  minPasswordStrength: whole('min-password-strength', values['min-password-strength']),
  prefixSize,
  ip: values.ip,
  nameservers: values.nameservers.split(',').filter((n) => n !== ''),
  ...(values['whm-token'] ? { whmToken: values['whm-token'] } : {}),
});
process.stdout.write(
  `${JSON.stringify({
    url: emulator.url,
    whm_user: emulator.whmUser,
    whm_token: emulator.whmToken,
    authorization: `whm ${emulator.whmUser}:${emulator.whmToken}`,
  })}\n`,
);
const stop = () => void emulator.stop().then(() => process.exit(0));
process.once('SIGTERM', stop);
process.once('SIGINT', stop);

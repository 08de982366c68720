// Run the Razorpay emulator on its own process (e.g. for the demo):
//   node emulators/src/razorpay/main.ts [--port 8181] [--key-id rzp_test_X]
//        [--key-secret S] [--webhook-url URL] [--webhook-secret S] [--manual-capture]
//        [--callback-method post|get]
// Prints one JSON line with the url, the key pair and the webhook secret, and stops on SIGTERM/SIGINT.

import { parseArgs } from 'node:util';
import { startRazorpayEmulator } from './index.ts';

const { values } = parseArgs({
  options: {
    port: { type: 'string', default: '0' },
    'key-id': { type: 'string' },
    'key-secret': { type: 'string' },
    'webhook-url': { type: 'string' },
    'webhook-secret': { type: 'string' },
    'manual-capture': { type: 'boolean', default: false },
    'callback-method': { type: 'string', default: 'post' },
  },
});

const port = Number(values.port);
if (!Number.isInteger(port) || port < 0 || port > 65535) {
  console.error(`--port must be a port number, not ${JSON.stringify(values.port)}`);
  process.exit(2);
}
const callbackMethod = values['callback-method'];
if (callbackMethod !== 'post' && callbackMethod !== 'get') {
  console.error('--callback-method must be post or get');
  process.exit(2);
}

const emulator = await startRazorpayEmulator({
  port,
  ...(values['key-id'] ? { keyId: values['key-id'] } : {}),
  ...(values['key-secret'] ? { keySecret: values['key-secret'] } : {}),
  ...(values['webhook-secret'] ? { webhookSecret: values['webhook-secret'] } : {}),
  webhookUrl: values['webhook-url'] ?? null,
  autoCapture: !values['manual-capture'],
  callbackMethod,
});
process.stdout.write(
  `${JSON.stringify({
    url: emulator.url,
    key_id: emulator.keyId,
    key_secret: emulator.keySecret,
    webhook_secret: emulator.webhookSecret,
    account_id: emulator.accountId,
  })}\n`,
);
const stop = () => void emulator.stop().then(() => process.exit(0));
process.once('SIGTERM', stop);
process.once('SIGINT', stop);

// A terminal for a game server's console WebSocket (the URL `console_ws` gives, valid 60 s):
//   npm run -s console -- 'ws://127.0.0.1:8080/ws/console/?t=<ticket>'
// Prints what the server says (console lines, status changes) and sends each line you type as a
// console command (Wings' `send command`). Ctrl-D or Ctrl-C ends it.

import { createInterface } from 'node:readline';
import WebSocket from 'ws';

const say = (line: string) => process.stdout.write(`${line}\n`);
const url = process.argv[2];
if (!url || !/^wss?:\/\//.test(url)) {
  console.error("usage: npm run -s console -- 'ws://HOST/ws/console/?t=TICKET'");
  process.exit(2);
}

const ws = new WebSocket(url);
ws.on('unexpected-response', (_request, response) => {
  console.error(`refused: HTTP ${response.statusCode} (a ticket works once, within 60 seconds)`);
  process.exit(1);
});
ws.on('error', (error) => {
  console.error(`console: ${error.message}`);
  process.exit(1);
});
ws.on('message', (data) => {
  let frame: { event?: string; args?: unknown[] };
  try {
    frame = JSON.parse(String(data));
  } catch {
    process.stdout.write(String(data));
    return;
  }
  const args = (frame.args ?? []).map(String);
  if (frame.event === 'console output' || frame.event === 'install output') say(args[0] ?? '');
  else if (frame.event === 'status') say(`[status: ${args[0]}]`);
  else if (frame.event === 'stats') return;
  else say(`[${frame.event}${args.length ? `: ${args.join(' ')}` : ''}]`);
});
ws.on('open', () => {
  say('[connected: type a command, Ctrl-D to leave]');
  ws.send(JSON.stringify({ event: 'send logs', args: [] }));
  const input = createInterface({ input: process.stdin });
  input.on('line', (line) => ws.send(JSON.stringify({ event: 'send command', args: [line] })));
  input.on('close', () => ws.close());
});
ws.on('close', (code, reason) => {
  say(`[closed ${code}${reason.length ? `: ${reason}` : ''}]`);
  process.exit(0);
});

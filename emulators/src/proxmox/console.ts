// The node's console WebSocket, GET …/qemu/{vmid}/vncwebsocket?port=&vncticket= (upstreams.md
// §2.4, §2.7): API-token auth like any path, then the ticket from vncproxy/termproxy. VNC answers
// with an RFB greeting, then serves a VNC client the guest's screen (rfb.ts) and echoes anything else; a serial (termproxy) session first needs `<user>:<ticket>\n`,
// answers `OK`, then echoes what is typed (frames `0:<length>:<data>`).
//
// Test knobs (ConsoleKnobs): `hold` leaves console upgrades unanswered until it is cleared (a
// slow node: what a client sends meanwhile waits in the relay); `flood` makes a VNC console send
// that many bytes after its greeting, 64 KiB at a time, each only once the previous one was
// written (a guest flooding its console, at the pace the reader takes it); `flushed` counts them.

import type { IncomingMessage } from 'node:http';
import type { Duplex } from 'node:stream';
import { WebSocketServer } from 'ws';
import { rfbSession } from './rfb.ts';
import type { NodeState } from './state.ts';

export interface ConsoleKnobs {
  hold: boolean;
  flood: number;
  flushed: number;
}

export function consoleKnobs(): ConsoleKnobs {
  return { hold: false, flood: 0, flushed: 0 };
}

const FLOOD_CHUNK = 64 * 1024;

export function consoleUpgrade(
  state: NodeState,
  authOk: (req: IncomingMessage) => boolean,
  knobs: ConsoleKnobs = consoleKnobs(),
) {
  const wss = new WebSocketServer({ noServer: true });
  const upgrade = (req: IncomingMessage, socket: Duplex, head: Buffer) => {
    if (knobs.hold) {
      const wait = setInterval(() => {
        if (knobs.hold) return;
        clearInterval(wait);
        upgrade(req, socket, head);
      }, 20);
      socket.once('close', () => clearInterval(wait));
      return;
    }
    const url = new URL(req.url ?? '/', 'http://emulator');
    const match = /^\/api2\/json\/nodes\/[^/]+\/qemu\/(\d+)\/vncwebsocket$/.exec(url.pathname);
    const ticket = url.searchParams.get('vncticket') ?? '';
    const grant = state.consoles.get(ticket);
    const refuse = (status: string) => {
      socket.end(`HTTP/1.1 ${status}\r\nConnection: close\r\n\r\n`);
    };
    if (!match) return refuse('404 Not Found');
    if (!authOk(req)) return refuse('401 No ticket');
    if (
      !grant ||
      grant.expires < Date.now() ||
      grant.vmid !== Number(match[1]) ||
      String(grant.port) !== url.searchParams.get('port')
    ) {
      return refuse('403 Permission check failed (invalid ticket)');
    }
    state.consoles.delete(ticket);
    wss.handleUpgrade(req, socket, head, (ws) => {
      if (grant.kind === 'vnc') {
        ws.send(Buffer.from('RFB 003.008\n'));
        // A VNC client answers the version with its own and gets the guest's screen (rfb.ts);
        // anything else is echoed, as a raw pipe to the guest (what the relay tests need).
        let rfb: ReturnType<typeof rfbSession> | null = null;
        let first = true;
        ws.on('message', (data, isBinary) => {
          const bytes = Buffer.isBuffer(data) ? data : Buffer.from(data as ArrayBuffer);
          if (first) {
            first = false;
            if (bytes.toString('latin1') === 'RFB 003.008\n') {
              rfb = rfbSession((out) => ws.send(out, { binary: true }));
              return;
            }
          }
          if (rfb === null) return ws.send(data, { binary: isBinary });
          if (!rfb.push(bytes)) ws.close(1002, 'RFB protocol error');
        });
        let left = knobs.flood;
        const more = (error?: Error) => {
          if (error || left <= 0 || ws.readyState !== ws.OPEN) return;
          const n = Math.min(FLOOD_CHUNK, left);
          left -= n;
          ws.send(Buffer.alloc(n, 0x41), { binary: true }, (failed) => {
            if (!failed) knobs.flushed += n;
            more(failed);
          });
        };
        more();
        return;
      }
      let authenticated = false;
      ws.on('message', (data) => {
        const text = data.toString();
        if (!authenticated) {
          if (text !== `${grant.user}:${ticket}\n`) {
            ws.close(1008, 'bad ticket');
            return;
          }
          authenticated = true;
          ws.send('OK');
          return;
        }
        const frame = /^0:(\d+):([\s\S]*)$/.exec(text);
        if (frame) ws.send(frame[2] ?? '');
      });
    });
  };
  return upgrade;
}

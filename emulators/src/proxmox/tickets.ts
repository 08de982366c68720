// Console tickets: POST …/vncproxy (websocket=1) and …/termproxy (upstreams.md §2.4, §2.7).
// Each answers a ticket and a port in 5900–5999 for GET …/vncwebsocket (console.ts) and starts
// the task that would run the proxy on a real node.

import { randomBytes } from 'node:crypto';
import { bool, isTrue, oneOf, verify } from './params.ts';
import { type ApiContext, PveError, startTask } from './tasks.ts';
import { vmOf } from './vms.ts';

/** How long a ticket can be redeemed; a real node's proxy waits about as long for its client. */
const TICKET_MS = 40_000;

function freePort(ctx: ApiContext): number {
  const now = Date.now();
  for (const [ticket, grant] of ctx.state.consoles) if (grant.expires < now) ctx.state.consoles.delete(ticket);
  const taken = new Set([...ctx.state.consoles.values()].map((grant) => grant.port));
  for (let port = 5900; port <= 5999; port++) if (!taken.has(port)) return port;
  throw new PveError(500, 'unable to find free port (5900-5999)');
}

export function consoleTicket(
  ctx: ApiContext,
  vmid: string,
  kind: 'vnc' | 'serial',
  params: Record<string, string>,
): Record<string, unknown> {
  if (kind === 'vnc') verify(params, { websocket: bool, 'generate-password': bool });
  else verify(params, { serial: oneOf('serial0', 'serial1', 'serial2', 'serial3') });
  const vm = vmOf(ctx, vmid);
  if (vm.status !== 'running') throw new PveError(500, `VM ${vmid} not running`);
  if (kind === 'serial' && vm.config[params.serial ?? 'serial0'] === undefined) {
    throw new PveError(500, 'unable to find a serial interface');
  }
  const port = freePort(ctx);
  const ticket = `PVEVNC:${Math.floor(Date.now() / 1000)
    .toString(16)
    .toUpperCase()}::${randomBytes(96).toString('base64')}`;
  ctx.state.consoles.set(ticket, { vmid: vm.vmid, port, kind, user: ctx.user, expires: Date.now() + TICKET_MS });
  const upid = startTask(ctx, {
    type: kind === 'vnc' ? 'vncproxy' : 'vncshell',
    id: vmid,
    durationMs: Math.min(TICKET_MS, 10 * ctx.taskDelayMs),
    work: (log) => log('connection timed out'),
  });
  if (kind === 'serial') return { user: ctx.user, ticket, port: String(port), upid };
  return {
    user: ctx.user,
    ticket,
    cert: '-----BEGIN CERTIFICATE-----\nEMULATED\n-----END CERTIFICATE-----\n',
    port: String(port),
    upid,
    ...(isTrue(params.websocket) || isTrue(params['generate-password'])
      ? { password: randomBytes(6).toString('base64url') }
      : {}),
  };
}

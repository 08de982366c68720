// The API paths the emulated node answers, under /api2/json (upstreams.md §2). Each handler
// returns `data` or throws PveError; paths it does not know are 501 "not implemented", as on a
// real node.

import { storageContent } from './cloudinit.ts';
import { rrdData } from './metrics.ts';
import { currentStatus, powerAction } from './power.ts';
import { createSnapshot, deleteSnapshot, listSnapshots, rollbackSnapshot } from './snapshots.ts';
import { type ApiContext, PveError, taskLog, taskStatus } from './tasks.ts';
import { consoleTicket } from './tickets.ts';
import { cloneVm, destroyVm, listVms, nextId, publicConfig, resizeDisk, updateConfig, vmOf } from './vms.ts';

export const VERSION = { version: '8.2.4', release: '8.2', repoid: 'faa83925c9641325' };

type Params = Record<string, string>;
type Handler = (ctx: ApiContext, match: string[], params: Params) => unknown;

const Q = '/nodes/[^/]+/qemu';
const ROUTES: [string, RegExp, Handler][] = [
  ['GET', /^\/version$/, () => VERSION],
  ['GET', /^\/cluster\/nextid$/, (ctx, _, p) => nextId(ctx, p)],
  ['GET', /^\/nodes$/, (ctx) => [nodeSummary(ctx)]],
  ['GET', new RegExp(`^${Q}$`), (ctx, _, p) => listVms(ctx.state, p)],
  ['POST', new RegExp(`^${Q}/(\\d+)/clone$`), (ctx, m, p) => cloneVm(ctx, m[1] ?? '', p)],
  ['GET', new RegExp(`^${Q}/(\\d+)/config$`), (ctx, m) => publicConfig(vmOf(ctx, m[1] ?? ''))],
  ['PUT', new RegExp(`^${Q}/(\\d+)/config$`), (ctx, m, p) => updateConfig(ctx, m[1] ?? '', p, false)],
  ['POST', new RegExp(`^${Q}/(\\d+)/config$`), (ctx, m, p) => updateConfig(ctx, m[1] ?? '', p, true)],
  ['PUT', new RegExp(`^${Q}/(\\d+)/resize$`), (ctx, m, p) => resizeDisk(ctx, m[1] ?? '', p)],
  ['GET', new RegExp(`^${Q}/(\\d+)/status/current$`), (ctx, m) => currentStatus(vmOf(ctx, m[1] ?? ''))],
  ['POST', new RegExp(`^${Q}/(\\d+)/status/(\\w+)$`), (ctx, m, p) => powerAction(ctx, m[1] ?? '', m[2] ?? '', p)],
  ['GET', new RegExp(`^${Q}/(\\d+)/rrddata$`), (ctx, m, p) => rrdData(vmOf(ctx, m[1] ?? ''), p)],
  ['POST', new RegExp(`^${Q}/(\\d+)/vncproxy$`), (ctx, m, p) => consoleTicket(ctx, m[1] ?? '', 'vnc', p)],
  ['POST', new RegExp(`^${Q}/(\\d+)/termproxy$`), (ctx, m, p) => consoleTicket(ctx, m[1] ?? '', 'serial', p)],
  ['GET', new RegExp(`^${Q}/(\\d+)/snapshot$`), (ctx, m, p) => listSnapshots(ctx, m[1] ?? '', p)],
  ['POST', new RegExp(`^${Q}/(\\d+)/snapshot$`), (ctx, m, p) => createSnapshot(ctx, m[1] ?? '', p)],
  [
    'POST',
    new RegExp(`^${Q}/(\\d+)/snapshot/([^/]+)/rollback$`),
    (ctx, m, p) => rollbackSnapshot(ctx, m[1] ?? '', m[2] ?? '', p),
  ],
  [
    'DELETE',
    new RegExp(`^${Q}/(\\d+)/snapshot/([^/]+)$`),
    (ctx, m, p) => deleteSnapshot(ctx, m[1] ?? '', m[2] ?? '', p),
  ],
  ['DELETE', new RegExp(`^${Q}/(\\d+)$`), (ctx, m, p) => destroyVm(ctx, m[1] ?? '', p)],
  ['GET', /^\/nodes\/[^/]+\/storage\/([^/]+)\/content$/, (ctx, m, p) => storageContent(ctx, m[1] ?? '', p)],
  ['GET', /^\/nodes\/[^/]+\/tasks\/([^/]+)\/status$/, (ctx, m) => taskStatus(ctx, m[1] ?? '')],
  ['GET', /^\/nodes\/[^/]+\/tasks\/([^/]+)\/log$/, (ctx, m, p) => taskLog(ctx, m[1] ?? '', p)],
];

function nodeSummary(ctx: ApiContext): Record<string, unknown> {
  return {
    node: ctx.node,
    id: `node/${ctx.node}`,
    type: 'node',
    status: 'online',
    level: '',
    cpu: 0.07,
    maxcpu: 32,
    mem: 24 * 1024 ** 3,
    maxmem: 128 * 1024 ** 3,
    uptime: Math.floor(process.uptime()),
  };
}

/** Answer one API call (`path` without /api2/json, percent-decoded per segment): returns `data`, or throws PveError. */
export function handle(ctx: ApiContext, method: string, path: string, params: Params): unknown {
  const node = /^\/nodes\/([^/]+)/.exec(path)?.[1];
  if (node !== undefined && node !== ctx.node) {
    throw new PveError(
      500,
      `hostname lookup '${node}' failed - failed to get address info for: ${node}: Name or service not known`,
    );
  }
  for (const [verb, pattern, handler] of ROUTES) {
    const match = pattern.exec(path);
    if (verb === method && match) return handler(ctx, [...match], params);
  }
  throw new PveError(501, `Method '${method} ${path}' not implemented`);
}

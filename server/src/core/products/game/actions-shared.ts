// Game actions on the routes every product shares (spec 4.8 and the token surface): power
// signals as jobs (POST /services/action/, /instances/{id}/{signal}), the live status and graph,
// and the console ticket of /instances/{id}/console. Reinstall is the management route's own
// action, exposed on those routes too (./actions-settings.ts).

import { Type } from 'typebox';
import { TIMEFRAMES, type Timeframe } from '../../../upstreams/hypervisor.ts';
import type { ProductAction } from '../../product-kit/actions.ts';
import { checkTimeframe, PROBE_TIMEOUT_MS, withTimeout } from '../../product-kit/live.ts';
import { NO_PARAMS, powerAction } from '../../product-kit/shared-actions.ts';
import { panelError } from './server.ts';

const live = async <T>(promise: Promise<T>, ms = PROBE_TIMEOUT_MS): Promise<T> => {
  try {
    return await withTimeout(promise, ms);
  } catch (error) {
    throw panelError(error);
  }
};

export const sharedActions: readonly ProductAction[] = [
  powerAction('start', 'start the game server'),
  powerAction('stop', 'stop the game server (it saves and exits)'),
  powerAction('restart', 'stop, then start the game server'),
  powerAction('kill', 'end the game server process at once (unsaved progress is lost)'),
  {
    name: 'console',
    method: 'mutate',
    params: NO_PARAMS,
    states: ['active'],
    description: "a one-time ticket (60 s) for the game server's console WebSocket",
    surfaces: { token: 'action' },
    console: 'serial',
    async handler(ctx) {
      const target = await ctx.live();
      if (ctx.gate) await ctx.gate(ctx.service);
      return { kind: 'console', upstream: await live(target.console('serial'), PROBE_TIMEOUT_MS * 2) };
    },
  },
  {
    name: 'status',
    method: 'read',
    params: NO_PARAMS,
    states: ['active'],
    description: 'live power, CPU, memory, disk, uptime and network counters',
    surfaces: { session: 'status', token: 'stats' },
    async handler(ctx) {
      const target = await ctx.live();
      await ctx.limits.consume('live_status_account', `account:${ctx.accountId}`);
      return { kind: 'status', status: await live(target.status()) };
    },
  },
  {
    name: 'graph',
    method: 'read',
    params: Type.Object({ timeframe: Type.String({ maxLength: 16 }) }, { additionalProperties: false }),
    states: ['active'],
    description: `resources over a timeframe (${TIMEFRAMES.join(', ')}), from the samples the platform took`,
    surfaces: { session: 'graph' },
    check: checkTimeframe,
    async handler(ctx, params) {
      const target = await ctx.live();
      await ctx.limits.consume('live_graph_account', `account:${ctx.accountId}`);
      return {
        kind: 'metrics',
        points: await live(target.metrics(params.timeframe as Timeframe), PROBE_TIMEOUT_MS * 2),
      };
    },
    example: () => ({ timeframe: 'hour' }),
  },
];

/** Actions of other products a game service has no counterpart of (token surface: `vnc`). */
export const gameUnsupported: Readonly<Record<string, string>> = {
  vnc: 'Game servers have no graphical console; use console for the game console.',
};

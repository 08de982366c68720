// What a client may ask of its virtual server (spec 4.1, 4.8): power signals and reinstall
// (queued as jobs, one at a time per service), consoles (a ticket from the node), and live
// reads (power state and metrics), and snapshots (./snapshots.ts), that give up after a few seconds rather than hang a request
// on a slow node. Live reads reach the node every time, so each account has an allowance of
// them a minute (LIMITS live_status_account, live_graph_account), counted on both surfaces alike.

import { Type } from 'typebox';
import type { Service } from '../../../db/tables.ts';
import { UpstreamError } from '../../../upstreams/errors.ts';
import { TIMEFRAMES, type Timeframe } from '../../../upstreams/hypervisor.ts';
import { AppError } from '../../errors.ts';
import type { ProductAction } from '../../product-kit/actions.ts';
import { checkTimeframe, PROBE_TIMEOUT_MS, unreachable, withTimeout } from '../../product-kit/live.ts';
import { rdnsAction } from '../../product-kit/reverse-dns.ts';
import { NO_PARAMS, powerAction } from '../../product-kit/shared-actions.ts';
import { backupScheduleAction } from './backups.ts';
import { osProblem } from './order.ts';
import { resizeActions } from './resize.ts';
import { snapshotActions } from './snapshots.ts';

/** Every state in which a service may have a VM to ask. */
const HAS_VM = ['pending', 'provisioning', 'active', 'suspended'] as const;

function consoleAction(name: string, kind: 'vnc' | 'serial', description: string): ProductAction {
  return {
    name,
    method: 'mutate',
    params: NO_PARAMS,
    states: ['active'],
    description,
    surfaces: { token: 'action' },
    console: kind,
    async handler(ctx) {
      const target = await ctx.live();
      if (ctx.gate) await ctx.gate(ctx.service);
      try {
        return { kind: 'console', upstream: await withTimeout(target.console(kind), PROBE_TIMEOUT_MS * 2) };
      } catch (error) {
        if (error instanceof UpstreamError && /not running/.test(error.message)) {
          throw new AppError('conflict', { message: 'Start the server before opening its console.' });
        }
        throw unreachable(error);
      }
    },
  };
}

const noVm = () => new AppError('no_vm', { message: 'This service has no virtual machine.' });

/** In the order the token surface lists them. */
export const vpsActions: readonly ProductAction[] = [
  powerAction('start', 'power on'),
  powerAction('stop', 'graceful ACPI shutdown, forced off if the guest is still up after 60 s'),
  powerAction('restart', 'ACPI reboot, hard reset if the guest ignores it'),
  powerAction('kill', 'hard power-off at once (the server stays off)'),
  powerAction('power_cycle', 'hard power cycle: reset at once, no shutdown asked of the guest (the server runs again)'),
  {
    name: 'reinstall',
    method: 'mutate',
    params: Type.Object(
      {
        os: Type.Optional(Type.String({ maxLength: 64 })),
        confirm: Type.Optional(Type.String({ maxLength: 128 })),
      },
      { additionalProperties: false },
    ),
    states: ['active'],
    description: '{os, confirm = the label}; both required, the disk is replaced and a new root password set',
    usage: '{os, confirm = label}',
    surfaces: { session: 'action', token: 'action' },
    async check(ctx, params) {
      const confirmed = params.confirm === ctx.service.label;
      if (typeof params.os !== 'string' || params.os.trim() === '') {
        // Missing is a request-shape problem, reported with every other one; unknown is bad_os.
        throw AppError.fields({
          os: 'is required',
          ...(confirmed ? {} : { confirm: 'must equal the service label' }),
        });
      }
      if (!confirmed) {
        throw new AppError('confirmation_mismatch', {
          message: `Type the service's label (${ctx.service.label}) in confirm to reinstall it.`,
          fields: { confirm: 'must equal the service label' },
        });
      }
      const os = await ctx.db
        .selectFrom('os_templates')
        .select('slug')
        .where('slug', '=', params.os.trim().toLowerCase())
        .where('active', '=', true)
        .executeTakeFirst();
      if (!os)
        throw new AppError('bad_os', { fields: { os: await osProblem(ctx.db, params.os.trim().toLowerCase()) } });
      return { os: os.slug };
    },
    async handler(ctx, params) {
      await ctx.live();
      const job = await ctx.startJob('reinstall', { os: params.os });
      return { kind: 'job', job, message: 'Reinstall started.' };
    },
    example: (service: Service) => ({ os: 'ubuntu-24.04', confirm: service.label }),
  },
  consoleAction('vnc', 'vnc', 'a one-time ticket (60 s) for the VNC console WebSocket'),
  consoleAction('console', 'serial', 'a one-time ticket (60 s) for the serial console WebSocket'),
  {
    name: 'status',
    method: 'read',
    params: NO_PARAMS,
    states: HAS_VM,
    description: 'live power, CPU, memory, disk, uptime and network counters',
    surfaces: { session: 'status', token: 'stats' },
    refused: noVm,
    async handler(ctx) {
      const target = await ctx.live();
      await ctx.limits.consume('live_status_account', `account:${ctx.accountId}`);
      try {
        return { kind: 'status', status: await withTimeout(target.status(), PROBE_TIMEOUT_MS) };
      } catch (error) {
        throw unreachable(error);
      }
    },
  },
  {
    name: 'graph',
    method: 'read',
    params: Type.Object({ timeframe: Type.String({ maxLength: 16 }) }, { additionalProperties: false }),
    states: HAS_VM,
    description: `metrics time series: timeframe ${TIMEFRAMES.join(', ')}`,
    surfaces: { session: 'graph' },
    refused: noVm,
    check: checkTimeframe,
    async handler(ctx, params) {
      const target = await ctx.live();
      await ctx.limits.consume('live_graph_account', `account:${ctx.accountId}`);
      try {
        return {
          kind: 'metrics',
          points: await withTimeout(target.metrics(params.timeframe as Timeframe), PROBE_TIMEOUT_MS * 2),
        };
      } catch (error) {
        throw unreachable(error);
      }
    },
    example: () => ({ timeframe: 'hour' }),
  },
  ...snapshotActions,
  ...resizeActions,
  rdnsAction("the server's IPv4 address"),
  backupScheduleAction,
];

/** A mutation refused for the service's state: suspended, or not running. */
export function vpsRefused(service: Service): AppError {
  if (service.status === 'suspended') return new AppError('suspended');
  return new AppError('no_vm', { message: `The service is ${service.status}.` });
}

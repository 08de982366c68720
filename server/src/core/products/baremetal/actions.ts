// What a client may ask of its bare-metal server: power through the BMC's `ComputerSystem.Reset`
// (queued as jobs, one at a time per service, named as the VPS's where they mean the same, plus
// `power_cycle`), and the live status (power, CPUs and memory of the machine; utilisation is not
// known to a BMC and is null). Live reads count against the account's allowance like a VPS's.

import type { Service } from '../../../db/tables.ts';
import { AppError } from '../../errors.ts';
import type { ProductAction } from '../../product-kit/actions.ts';
import { PROBE_TIMEOUT_MS, unreachable, withTimeout } from '../../product-kit/live.ts';
import { rdnsAction } from '../../product-kit/reverse-dns.ts';
import { NO_PARAMS, powerAction } from '../../product-kit/shared-actions.ts';

const noMachine = () => new AppError('no_vm', { message: 'This service has no bare-metal server.' });

/** In the order the token surface lists them. */
export const baremetalActions: readonly ProductAction[] = [
  powerAction('start', 'power on (ComputerSystem.Reset On)'),
  powerAction('stop', 'ACPI shutdown (GracefulShutdown), forced off if the machine is still on after 60 s'),
  powerAction('restart', 'ACPI reboot (GracefulRestart); an OS that hangs needs power_cycle'),
  powerAction('kill', 'hard power-off at once (ForceOff; the server stays off)'),
  powerAction(
    'power_cycle',
    'hard power cycle of a bare-metal server (PowerCycle, or ForceRestart): off and on again at once',
  ),
  {
    name: 'status',
    method: 'read',
    params: NO_PARAMS,
    states: ['active', 'suspended'],
    description:
      'live power, CPU count and memory size from the BMC; utilisation, uptime and network counters are null',
    surfaces: { session: 'status', token: 'stats' },
    refused: noMachine,
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
  rdnsAction("the server's IPv4 address"),
];

/** A mutation refused for the service's state: suspended, or not running. */
export function baremetalRefused(service: Service): AppError {
  if (service.status === 'suspended') return new AppError('suspended');
  return new AppError('no_vm', { message: `The service is ${service.status}.` });
}

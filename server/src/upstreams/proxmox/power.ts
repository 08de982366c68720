// Power actions with the outcomes the platform wants rather than PVE's errors: start of a
// running VM and stop of a stopped one succeed, a paused VM is resumed, a guest that ignores
// ACPI is stopped or reset after its timeout, reboot/reset of a stopped VM start it.

import { UpstreamError } from '../errors.ts';
import type { VmRef } from '../hypervisor.ts';
import type { Params, ProxmoxClient } from './client.ts';
import { run } from './tasks.ts';
import { unlocked, vmPath } from './vm.ts';

/** How long past the guest's own timeout the shutdown/reboot task may take before we stop waiting. */
const GRACE_MS = 30_000;

const isConflict = (error: unknown, text: RegExp) =>
  error instanceof UpstreamError && error.kind === 'conflict' && text.test(error.message);

function action(
  client: ProxmoxClient,
  vm: VmRef,
  name: string,
  params: Params = {},
  timeoutMs?: number,
): Promise<void> {
  return run(client, 'POST', `${vmPath(client, vm)}/status/${name}`, params, timeoutMs);
}

function guestTimeoutMs(client: ProxmoxClient, seconds: number): number {
  return Math.max(client.config.taskTimeoutMs, seconds * 1000 + GRACE_MS);
}

export async function start(client: ProxmoxClient, vm: VmRef): Promise<void> {
  const current = await unlocked(client, vm);
  if (current.status === 'running') {
    if (current.qmpstatus === 'paused') await action(client, vm, 'resume');
    return;
  }
  try {
    await action(client, vm, 'start');
  } catch (error) {
    // Someone (or our own lost request) started it meanwhile: the outcome we wanted.
    if (!isConflict(error, /already running/)) throw error;
  }
}

export async function stop(client: ProxmoxClient, vm: VmRef): Promise<void> {
  const current = await unlocked(client, vm);
  if (current.status !== 'running') return;
  await action(client, vm, 'stop');
}

export async function shutdown(client: ProxmoxClient, vm: VmRef, timeoutSeconds: number): Promise<void> {
  const current = await unlocked(client, vm);
  if (current.status !== 'running') return;
  try {
    // forceStop: the node itself stops the guest once the timeout passes (and a paused one at once).
    await action(
      client,
      vm,
      'shutdown',
      { timeout: timeoutSeconds, forceStop: true },
      guestTimeoutMs(client, timeoutSeconds),
    );
  } catch (error) {
    if (!(error instanceof UpstreamError) || error.kind === 'unreachable' || error.kind === 'auth') throw error;
    if (isConflict(error, /not running/)) return;
    // The shutdown task failed or outlived its grace (a guest ignoring ACPI on a node that does
    // not force): pull the plug.
    await action(client, vm, 'stop');
  }
}

export async function reset(client: ProxmoxClient, vm: VmRef): Promise<void> {
  const current = await unlocked(client, vm);
  if (current.status !== 'running') return start(client, vm);
  try {
    await action(client, vm, 'reset');
  } catch (error) {
    // PVE answers "VM … not running" at once when the VM stopped since we looked.
    if (!isConflict(error, /not running/)) throw error;
    await start(client, vm);
  }
}

export async function reboot(client: ProxmoxClient, vm: VmRef, timeoutSeconds: number): Promise<void> {
  const current = await unlocked(client, vm);
  if (current.status !== 'running') return start(client, vm);
  try {
    await action(client, vm, 'reboot', { timeout: timeoutSeconds }, guestTimeoutMs(client, timeoutSeconds));
  } catch (error) {
    if (isConflict(error, /not running/)) return start(client, vm);
    // The guest ignored the ACPI request: a hard reset, as a person at the console would do.
    if (error instanceof UpstreamError && /got timeout/.test(error.message)) return reset(client, vm);
    throw error;
  }
}

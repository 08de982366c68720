// Power through `#ComputerSystem.Reset` and the system's `PowerState` (On, Off, PoweringOn,
// PoweringOff; Paused counts as on). A reset waits out a transition under way, then sends only
// what is needed to reach the state the action leads to: nothing when the machine is there
// already (On when on, ForceOff/GracefulShutdown when off, so a repeat after a lost answer is
// harmless), On for a restart of a machine that is off. The ResetType must be one the system
// allows (`ResetType@Redfish.AllowableValues` or its `@Redfish.ActionInfo`): PowerCycle and
// ForceRestart stand in for each other, ForceOn for On. Then it polls until the power state is
// reached, up to the task deadline.

import type { BareMetalPowerAction } from '../bare-metal.ts';
import { UpstreamError } from '../errors.ts';
import type { PowerState } from '../hypervisor.ts';
import { isObject, type Json, type RedfishClient } from './client.ts';
import { system } from './discovery.ts';
import { act, actionTarget } from './tasks.ts';

const RESET = '#ComputerSystem.Reset';
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** The platform's power state of a system's `PowerState`; anything else is a protocol error. */
export function powerOf(client: RedfishClient, sys: Json): PowerState {
  switch (sys.PowerState) {
    case 'On':
    case 'Paused':
      return 'running';
    case 'Off':
      return 'stopped';
    case 'PoweringOn':
      return 'starting';
    case 'PoweringOff':
      return 'stopping';
    default:
      throw client.garbled(`a known PowerState (${JSON.stringify(sys.PowerState ?? null)})`);
  }
}

/** Live power state. */
export async function power(client: RedfishClient): Promise<PowerState> {
  return powerOf(client, (await system(client)).body);
}

/** The ResetTypes the system takes, or null when it does not say (then any is tried). */
async function allowedResetTypes(client: RedfishClient, sys: Json): Promise<string[] | null> {
  const action = isObject(sys.Actions) ? sys.Actions[RESET] : undefined;
  if (!isObject(action)) return null;
  const inline = action['ResetType@Redfish.AllowableValues'];
  if (Array.isArray(inline)) return inline.filter((v): v is string => typeof v === 'string');
  const info = action['@Redfish.ActionInfo'];
  if (typeof info !== 'string') return null;
  const body = await client.get(info, 'the reset action’s parameters');
  const parameters = Array.isArray(body.Parameters) ? body.Parameters : [];
  const param = parameters.find((p) => isObject(p) && p.Name === 'ResetType');
  return isObject(param) && Array.isArray(param.AllowableValues)
    ? param.AllowableValues.filter((v): v is string => typeof v === 'string')
    : null;
}

/** Stand-ins for a ResetType the system does not offer. */
const SUBSTITUTES: Partial<Record<string, string[]>> = {
  On: ['ForceOn', 'PushPowerButton'],
  PowerCycle: ['ForceRestart'],
  ForceRestart: ['PowerCycle'],
};

function choose(client: RedfishClient, wanted: string, allowed: string[] | null): string {
  if (allowed === null || allowed.includes(wanted)) return wanted;
  const substitute = (SUBSTITUTES[wanted] ?? []).find((s) => allowed.includes(s));
  if (substitute) return substitute;
  throw new UpstreamError('rejected', `${client.label}: the system does not offer ResetType ${wanted}`, {
    retryable: false,
    reason: 'not_supported',
    detail: `ResetType ${wanted} is not among ${allowed.join(', ') || 'none'}`,
  });
}

/** Poll the system until `done` holds; timeout at the task deadline (or `withinMs`, when shorter). */
async function until(
  client: RedfishClient,
  done: (sys: Json) => boolean,
  what: string,
  withinMs = client.config.taskTimeoutMs,
): Promise<Json> {
  const waitMs = Math.min(withinMs, client.config.taskTimeoutMs);
  const deadline = Date.now() + waitMs;
  for (;;) {
    const { body } = await system(client);
    powerOf(client, body);
    if (done(body)) return body;
    if (Date.now() > deadline) {
      throw new UpstreamError(
        'timeout',
        `${client.label}: ${what}: still ${String(body.PowerState)} after ${Math.round(waitMs / 1000)} s`,
      );
    }
    await sleep(client.config.pollIntervalMs);
  }
}

const settled = (sys: Json) => sys.PowerState !== 'PoweringOn' && sys.PowerState !== 'PoweringOff';
const OFF_ACTIONS: ReadonlySet<BareMetalPowerAction> = new Set(['ForceOff', 'GracefulShutdown']);

/**
 * `ComputerSystem.Reset` with this ResetType, then wait for the power state it leads to (at most
 * the task deadline, or `withinMs` when shorter).
 */
export async function reset(
  client: RedfishClient,
  action: BareMetalPowerAction,
  withinMs = client.config.taskTimeoutMs,
): Promise<void> {
  const what = `ComputerSystem.Reset ${action}`;
  const sys = await until(client, settled, `waiting for a power transition before ${what}`);
  const on = sys.PowerState !== 'Off';
  const goal = OFF_ACTIONS.has(action) ? 'Off' : 'On';
  let send: string | null;
  if (goal === 'Off') send = on ? action : null;
  else if (action === 'On') send = on ? null : 'On';
  else send = on ? action : 'On';
  if (send !== null) {
    const target = actionTarget(sys, RESET);
    if (!target) throw client.garbled('a system with a #ComputerSystem.Reset action');
    const type = choose(client, send, await allowedResetTypes(client, sys));
    try {
      await act(client, target, { ResetType: type }, `ComputerSystem.Reset ${type}`);
    } catch (error) {
      // "Already on/off": the machine got there meanwhile (a repeat after a lost answer).
      if (!(error instanceof UpstreamError && error.kind === 'conflict')) throw error;
      const now = await until(client, settled, what);
      const there = (now.PowerState === 'Off') === (goal === 'Off');
      // A refused restart of a machine that is on did not happen: that stays an error.
      if (!there || (goal === 'On' && send !== 'On')) throw error;
    }
  }
  await until(
    client,
    (s) => (goal === 'Off' ? s.PowerState === 'Off' : s.PowerState === 'On' || s.PowerState === 'Paused'),
    what,
    withinMs,
  );
}

/**
 * ACPI shutdown, forced off when the OS has not powered the machine down within `graceMs` (it
 * ignores ACPI, or hangs shutting down). A machine that is off already is left alone.
 */
export async function shutdown(client: RedfishClient, graceMs: number): Promise<void> {
  try {
    await reset(client, 'GracefulShutdown', graceMs);
  } catch (error) {
    if (!(error instanceof UpstreamError && error.kind === 'timeout')) throw error;
    await reset(client, 'ForceOff');
  }
}

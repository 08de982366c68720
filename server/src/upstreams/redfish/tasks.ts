// Long operations (DSP0266 §7.8 "Asynchronous operations"): an action or PATCH may answer
// 202 Accepted with a task monitor in `Location` (and often the Task in its body). The monitor
// answers 202 while the task runs; once it is over it answers the operation's own result:
// 200/201/204 when it succeeded, an error status with a Redfish error when it failed, or (as
// several BMCs do) 200 with the Task whose `TaskState` is `Completed`, or `Exception`, `Killed`,
// `Cancelled` with `Messages`. A monitor that is gone (404/410) is replaced by the Task itself
// when its URI is known. Polling respects Retry-After (capped), shrugs off a few passing
// failures, and gives up at the task deadline.

import { UpstreamError } from '../errors.ts';
import { idOf, isObject, type Json, type RedfishClient, type RedfishResponse } from './client.ts';
import { classify, describe, readMessages, retryAfter } from './errors.ts';

/** Consecutive failed polls tolerated (the task runs on regardless). */
const POLL_FAILURES = 3;
/** The longest pause between polls, whatever Retry-After says. */
const MAX_PAUSE_MS = 10_000;

const RUNNING = new Set([
  'New',
  'Starting',
  'Running',
  'Pending',
  'Stopping',
  'Cancelling',
  'Suspended',
  'Interrupted',
  'Service',
]);
const FAILED = new Set(['Exception', 'Killed', 'Cancelled']);

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** What a task resource says: still running, completed, or failed (with its messages). */
function taskOutcome(task: Json): 'running' | 'done' | { failed: string; detail: string | undefined } | null {
  const state = task.TaskState;
  if (typeof state !== 'string') return null;
  if (state === 'Completed') return 'done';
  if (RUNNING.has(state)) return 'running';
  if (FAILED.has(state)) {
    const { detail } = describe(readMessages(task.Messages), '');
    return { failed: state, detail };
  }
  return null;
}

function failure(client: RedfishClient, what: string, state: string, detail: string | undefined): UpstreamError {
  // A task that failed for a reason we do not recognise may well succeed on a later attempt;
  // the job system bounds the attempts.
  return new UpstreamError(
    'rejected',
    `${client.label}: ${what} failed (task ${state}${detail ? `: ${detail}` : ''})`,
    { retryable: true, ...(detail ? { detail } : {}), reason: `Task${state}` },
  );
}

/**
 * Wait for the operation an answer started: nothing to do unless it is a 202. Resolves when the
 * operation completed; throws its failure, or `timeout` at the task deadline.
 */
export async function settle(client: RedfishClient, answer: RedfishResponse, what: string): Promise<void> {
  if (answer.status !== 202) return;
  const location = typeof answer.headers.location === 'string' ? answer.headers.location : null;
  let taskUri = answer.body && typeof answer.body.TaskState === 'string' ? idOf(answer.body) : null;
  // Some BMCs put the monitor only in the Task's TaskMonitor; without either, the Task itself is polled.
  let poll: string | null =
    location ?? (answer.body && typeof answer.body.TaskMonitor === 'string' ? answer.body.TaskMonitor : taskUri);
  if (!poll) throw client.garbled(`a task monitor for ${what} (202 without Location)`);
  const { taskTimeoutMs, pollIntervalMs } = client.config;
  const deadline = Date.now() + taskTimeoutMs;
  let pause = pollIntervalMs;
  let failures = 0;
  for (;;) {
    if (Date.now() > deadline) {
      throw new UpstreamError(
        'timeout',
        `${client.label}: ${what} still running after ${Math.round(taskTimeoutMs / 1000)} s`,
      );
    }
    await sleep(pause);
    pause = pollIntervalMs;
    let res: RedfishResponse;
    try {
      res = await client.send('GET', poll);
      failures = 0;
    } catch (error) {
      const passing = error instanceof UpstreamError && error.retryable && ++failures <= POLL_FAILURES;
      if (!passing) throw error;
      continue;
    }
    if (res.status === 202) {
      const seconds = retryAfter(res.headers);
      if (seconds !== undefined) pause = Math.min(Math.max(seconds * 1000, pollIntervalMs), MAX_PAUSE_MS);
      if (!taskUri && res.body && typeof res.body.TaskState === 'string') taskUri = idOf(res.body);
      continue;
    }
    if (res.status >= 200 && res.status < 300) {
      const outcome = res.body ? taskOutcome(res.body) : null;
      if (outcome === null || outcome === 'done') return;
      if (outcome === 'running') continue;
      throw failure(client, what, outcome.failed, outcome.detail);
    }
    if ((res.status === 404 || res.status === 410) && taskUri && poll !== taskUri) {
      // The monitor is gone (some BMCs drop it once read); the Task says how it ended.
      poll = taskUri;
      pause = 0;
      continue;
    }
    const error = classify(res.status, res.reason, res.text, res.headers, client.label, what);
    if (error.retryable && ++failures <= POLL_FAILURES) continue;
    throw error;
  }
}

/** POST an action (`target` from the resource's `Actions`) and wait until the operation is over. */
export async function act(client: RedfishClient, target: string, body: Json, what: string): Promise<void> {
  const res = await client.request('POST', target, { body }, what);
  await settle(client, res, what);
}

/** An action's target URI from a resource's `Actions` (e.g. `#ComputerSystem.Reset`), or null. */
export function actionTarget(resource: Json, name: string): string | null {
  const actions = resource.Actions;
  if (!isObject(actions)) return null;
  const action = actions[name];
  return isObject(action) && typeof action.target === 'string' && action.target !== '' ? action.target : null;
}

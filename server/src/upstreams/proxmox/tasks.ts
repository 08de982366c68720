// Waiting for PVE tasks (upstreams.md §2.3): a mutating call answers a UPID at once; the task's
// status is polled on the node that runs it until it stops, then its exit status decides.
// Polling backs off to 2 s, shrugs off a few passing failures, and gives up at a deadline.

import { UpstreamError } from '../errors.ts';
import type { Method, Params, ProxmoxClient } from './client.ts';
import { taskFailure } from './errors.ts';

/** Consecutive failed polls tolerated before the failure is reported (the task runs on regardless). */
const POLL_FAILURES = 3;
const MAX_POLL_MS = 2_000;

interface TaskStatus {
  status: string;
  exitstatus?: string;
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** `UPID:node:pid:pstart:starttime:type:id:user:` → its parts (node, type, id). */
export function parseUpid(upid: string): { node: string; type: string; id: string } | null {
  const parts = upid.split(':');
  if (parts[0] !== 'UPID' || parts.length < 9 || !parts[1] || !parts[5]) return null;
  return { node: parts[1], type: parts[5], id: parts[6] ?? '' };
}

/** Wait until the task stops; OK and WARNINGS are success, any other exit status an UpstreamError. */
export async function waitTask(client: ProxmoxClient, upid: string, timeoutMs?: number): Promise<void> {
  const task = parseUpid(upid);
  if (!task) throw new UpstreamError('protocol', `${client.label}: answered a malformed task id`, { retryable: false });
  const limit = timeoutMs ?? client.config.taskTimeoutMs;
  const deadline = Date.now() + limit;
  const path = `/nodes/${encodeURIComponent(task.node)}/tasks/${encodeURIComponent(upid)}/status`;
  let interval = client.config.pollIntervalMs;
  let failures = 0;
  for (;;) {
    let status: TaskStatus | null = null;
    try {
      status = await client.call<TaskStatus>('GET', path);
      failures = 0;
    } catch (error) {
      const passing = error instanceof UpstreamError && error.retryable && ++failures <= POLL_FAILURES;
      if (!passing || Date.now() > deadline) throw error;
    }
    if (status?.status === 'stopped') {
      const exit = status.exitstatus ?? 'unexpected status';
      if (exit === 'OK' || exit.startsWith('WARNINGS')) return;
      throw taskFailure(task.type, exit, client.label);
    }
    if (Date.now() > deadline) {
      throw new UpstreamError(
        'timeout',
        `${client.label}: task ${task.type} ${task.id} still running after ${Math.round(limit / 1000)} s`,
      );
    }
    await sleep(interval);
    interval = Math.min(Math.ceil(interval * 1.5), Math.max(client.config.pollIntervalMs, MAX_POLL_MS));
  }
}

/** Call, and when the answer is a UPID wait for its task (calls such as resize are sync on older nodes). */
export async function run(
  client: ProxmoxClient,
  method: Method,
  path: string,
  params: Params = {},
  timeoutMs?: number,
): Promise<void> {
  const data = await client.call<unknown>(method, path, params);
  if (typeof data === 'string' && data.startsWith('UPID:')) await waitTask(client, data, timeoutMs);
}

// A server's schedules through the client API (upstreams.md §1.6). The panel creates a schedule
// and its tasks in separate calls: a schedule is created, then its tasks one by one in order;
// an update that brings tasks deletes the old ones first (the panel caps tasks per schedule),
// then creates the new. Should a task be refused while creating, the half-made schedule is
// removed again (best effort) so that a retry does not leave a twin behind.

import { UpstreamError } from '../errors.ts';
import type { GameSchedule, GameScheduleTask, GameServerRef, ScheduleInput, ScheduleTaskInput } from '../game-panel.ts';
import type { PterodactylClient } from './client.ts';
import { toSchedule, toTask } from './mapping.ts';
import { serverPath } from './servers.ts';

type Attrs = Record<string, unknown>;

const schedules = (ref: GameServerRef) => `${serverPath(ref)}/schedules`;

function scheduleBody(input: ScheduleInput): Record<string, unknown> {
  return {
    name: input.name,
    minute: input.cron.minute,
    hour: input.cron.hour,
    day_of_month: input.cron.dayOfMonth,
    // Not among the panel's request rules but read by it (and always sent by its own UI).
    month: input.cron.month,
    day_of_week: input.cron.dayOfWeek,
    is_active: input.isActive,
    only_when_online: input.onlyWhenOnline,
  };
}

async function createTasks(
  client: PterodactylClient,
  ref: GameServerRef,
  id: number,
  tasks: ScheduleTaskInput[],
): Promise<GameScheduleTask[]> {
  const made: GameScheduleTask[] = [];
  for (const task of tasks) {
    const attrs = await client.item<Attrs>('client', 'POST', `${schedules(ref)}/${id}/tasks`, {
      json: {
        action: task.action,
        payload: task.payload,
        time_offset: task.timeOffset,
        continue_on_failure: task.continueOnFailure,
      },
    });
    made.push(toTask(attrs));
  }
  return made;
}

export async function listSchedules(client: PterodactylClient, ref: GameServerRef): Promise<GameSchedule[]> {
  return (await client.list<Attrs>('client', schedules(ref))).items.map((a) => toSchedule(a));
}

export async function createSchedule(
  client: PterodactylClient,
  ref: GameServerRef,
  input: ScheduleInput,
  tasks: ScheduleTaskInput[],
): Promise<GameSchedule> {
  const created = await client.item<Attrs>('client', 'POST', schedules(ref), { json: scheduleBody(input) });
  const id = Number(created.id);
  try {
    return toSchedule(created, await createTasks(client, ref, id, tasks));
  } catch (error) {
    await client.json('client', 'DELETE', `${schedules(ref)}/${id}`).catch(() => undefined);
    throw error;
  }
}

export async function updateSchedule(
  client: PterodactylClient,
  ref: GameServerRef,
  id: number,
  input: ScheduleInput,
  tasks: ScheduleTaskInput[] | null,
): Promise<GameSchedule> {
  const updated = await client.item<Attrs>('client', 'POST', `${schedules(ref)}/${id}`, { json: scheduleBody(input) });
  if (tasks === null) return toSchedule(updated);
  // The tasks as they are now, read again: the update's answer need not include them.
  const current = toSchedule(await client.item<Attrs>('client', 'GET', `${schedules(ref)}/${id}`)).tasks;
  for (const old of current) {
    try {
      await client.json('client', 'DELETE', `${schedules(ref)}/${id}/tasks/${old.id}`);
    } catch (error) {
      // Gone already (an earlier attempt of this update): what we wanted.
      if (!(error instanceof UpstreamError && error.kind === 'not_found')) throw error;
    }
  }
  return toSchedule(updated, await createTasks(client, ref, id, tasks));
}

export async function deleteSchedule(client: PterodactylClient, ref: GameServerRef, id: number): Promise<void> {
  await client.json('client', 'DELETE', `${schedules(ref)}/${id}`);
}

export async function executeSchedule(client: PterodactylClient, ref: GameServerRef, id: number): Promise<void> {
  await client.json('client', 'POST', `${schedules(ref)}/${id}/execute`);
}

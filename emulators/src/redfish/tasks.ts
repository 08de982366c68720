// Long actions as DSP0266 runs them asynchronously: the action answers 202 Accepted with a
// `Location` task monitor (`/redfish/v1/TaskService/Tasks/<id>/Monitor`) and the Task resource
// as its body. The monitor answers 202 (the Task) while it runs, then 204 No Content when the
// operation completed, or 200 with the Task (TaskState `Exception`, its Messages) when it
// failed. The `failTasks` knob makes the next tasks fail having done nothing.

import { type Ctx, later, type Runtime, type Task } from './context.ts';
import { takeCount } from './faults.ts';
import { type Message, message, RedfishError } from './http.ts';

export const TASKS = '/redfish/v1/TaskService/Tasks';

export function taskPath(task: Pick<Task, 'id'>): string {
  return `${TASKS}/${encodeURIComponent(task.id)}`;
}

export function monitorPath(task: Pick<Task, 'id'>): string {
  return `${taskPath(task)}/Monitor`;
}

/** Tasks kept per machine (the oldest completed ones are dropped, CompletedTaskOverWritePolicy Oldest). */
const MAX_TASKS = 64;

/**
 * Start a task that runs `work` after taskDelayMs. `work` throws (a RedfishError or any Error)
 * to fail the task with that reason.
 */
export function startTask(
  ctx: Ctx,
  rt: Runtime,
  spec: { name: string; targetUri: string; work: () => void; settle?: () => void },
): Task {
  const id = ctx.settings.ids === 'dell' ? `JID_${String(100_000_000 + rt.nextTask++)}` : String(rt.nextTask++);
  const task: Task = {
    id,
    name: spec.name,
    state: 'Running',
    targetUri: spec.targetUri,
    startedAt: new Date().toISOString(),
    endedAt: null,
    failure: null,
  };
  rt.tasks.set(id, task);
  if (rt.tasks.size > MAX_TASKS) {
    for (const [key, old] of rt.tasks) {
      if (rt.tasks.size <= MAX_TASKS) break;
      if (old.state !== 'Running') rt.tasks.delete(key);
    }
  }
  const failing = takeCount(ctx.faults, 'failTasks');
  later(ctx, ctx.settings.taskDelayMs, () => {
    try {
      if (failing) throw new Error('The operation failed on the management controller (simulated fault).');
      spec.work();
      task.state = 'Completed';
    } catch (error) {
      task.state = 'Exception';
      task.failure = error instanceof Error ? error.message : String(error);
    }
    task.endedAt = new Date().toISOString();
    spec.settle?.();
    ctx.changed();
  });
  return task;
}

function taskMessages(task: Task): Message[] {
  if (task.state === 'Running') return [];
  if (task.state === 'Completed') {
    return [
      {
        ...message('Success'),
        MessageId: 'TaskEvent.1.0.TaskCompletedOK',
        Message: `The task with Id '${task.id}' has completed.`,
        MessageArgs: [task.id],
      },
    ];
  }
  return [
    {
      ...message('GeneralError', [], [], task.failure ?? 'The task failed.'),
    },
    {
      ...message('GeneralError'),
      MessageId: 'TaskEvent.1.0.TaskAborted',
      Message: `The task with Id '${task.id}' has been aborted.`,
      MessageArgs: [task.id],
    },
  ];
}

export function taskResource(task: Task): Record<string, unknown> {
  return {
    '@odata.id': taskPath(task),
    '@odata.type': '#Task.v1_7_0.Task',
    Id: task.id,
    Name: task.name,
    TaskState: task.state,
    TaskStatus: task.state === 'Exception' ? 'Critical' : 'OK',
    PercentComplete: task.state === 'Running' ? 50 : 100,
    StartTime: task.startedAt,
    ...(task.endedAt ? { EndTime: task.endedAt } : {}),
    TaskMonitor: monitorPath(task),
    Payload: { TargetUri: task.targetUri, HttpOperation: 'POST' },
    Messages: taskMessages(task),
  };
}

/** The monitor's answer: status and body (null: no body). */
export function monitorAnswer(task: Task): { status: number; body: unknown | null; headers: Record<string, string> } {
  if (task.state === 'Running') {
    return { status: 202, body: taskResource(task), headers: { location: monitorPath(task) } };
  }
  if (task.state === 'Completed') return { status: 204, body: null, headers: {} };
  return { status: 200, body: taskResource(task), headers: {} };
}

export function findTask(rt: Runtime, id: string, path: string): Task {
  const task = rt.tasks.get(id);
  if (!task) throw new RedfishError(404, message('ResourceMissingAtURI', [path]));
  return task;
}

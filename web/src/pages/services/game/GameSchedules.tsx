// Schedules: cron fields in UTC (the panel's clock), each with its tasks (a console command, a
// power signal or a backup), run in order with a delay. A list with run now, pause/resume, edit
// and delete; one form creates and edits (schedule_create / schedule_update), with the server's
// reasons beside each field, tasks included (`tasks.0.payload`).

import { type FormEvent, useState } from 'react';
import {
  Alert,
  Button,
  Checkbox,
  Empty,
  ErrorAlert,
  fieldError,
  Loading,
  SelectField,
  Status,
  TextField,
} from '../../../components/ui.tsx';
import { when } from '../../../lib/format.ts';
import { type GameSchedule, type GameTask, useGame, useGameAction } from './gameApi.ts';

const CRON = [
  ['minute', 'Minute'],
  ['hour', 'Hour'],
  ['day_of_month', 'Day of month'],
  ['month', 'Month'],
  ['day_of_week', 'Day of week'],
] as const;

type Cron = GameSchedule['cron'];

type DraftTask = GameTask & { uid: number };

interface Draft {
  name: string;
  cron: Cron;
  is_active: boolean;
  only_when_online: boolean;
  tasks: DraftTask[];
}

let nextUid = 1;
const uid = () => nextUid++;

const blank = (): Draft => ({
  name: '',
  cron: { minute: '0', hour: '4', day_of_month: '*', month: '*', day_of_week: '*' },
  is_active: true,
  only_when_online: false,
  tasks: [{ uid: uid(), action: 'power', payload: 'restart', time_offset: 0 }],
});

const cronText = (c: Cron) => `${c.minute} ${c.hour} ${c.day_of_month} ${c.month} ${c.day_of_week}`;

export default function GameSchedules({ serviceId }: { serviceId: number }) {
  const list = useGame<{ schedules: GameSchedule[] }>(serviceId, 'schedules');
  const create = useGameAction<{ schedule: GameSchedule }>(serviceId, 'schedule_create', ['schedules']);
  const update = useGameAction<{ schedule: GameSchedule }>(serviceId, 'schedule_update', ['schedules']);
  const run = useGameAction(serviceId, 'schedule_execute', ['schedules']);
  const remove = useGameAction(serviceId, 'schedule_delete', ['schedules']);
  const [editing, setEditing] = useState<{ id: number | null; draft: Draft } | null>(null);
  const [confirm, setConfirm] = useState<GameSchedule | null>(null);
  const [notice, setNotice] = useState<string | null>(null);
  const [rowError, setRowError] = useState<unknown>(null);

  const saving = editing?.id ? update : create;

  const submit = (event: FormEvent) => {
    event.preventDefault();
    if (!editing) return;
    const { draft, id } = editing;
    const body = {
      name: draft.name.trim(),
      ...draft.cron,
      is_active: draft.is_active,
      only_when_online: draft.only_when_online,
      tasks: draft.tasks.map((t) => ({
        action: t.action,
        payload: t.action === 'backup' ? '' : t.payload,
        time_offset: Number(t.time_offset) || 0,
      })),
    };
    const onSuccess = (a: { schedule: GameSchedule }) => {
      setNotice(`Schedule ${a.schedule.name} ${id ? 'saved' : 'created'}.`);
      setEditing(null);
    };
    if (id) update.mutate({ id, ...body }, { onSuccess });
    else create.mutate(body, { onSuccess });
  };

  const set = (change: Partial<Draft>) => setEditing((e) => (e ? { ...e, draft: { ...e.draft, ...change } } : e));
  const setTask = (index: number, change: Partial<GameTask>) =>
    setEditing((e) =>
      e
        ? {
            ...e,
            draft: { ...e.draft, tasks: e.draft.tasks.map((t, i) => (i === index ? { ...t, ...change } : t)) },
          }
        : e,
    );

  const act = (message: string) => ({
    onSuccess: () => {
      setNotice(message);
      setRowError(null);
    },
    onError: (error: unknown) => {
      setNotice(null);
      setRowError(error);
    },
  });

  const err = (name: string) => fieldError(saving.error, name);
  const named = editing
    ? [
        'name',
        ...CRON.map(([f]) => f),
        'tasks',
        ...editing.draft.tasks.flatMap((_, i) => [
          `tasks.${i}.action`,
          `tasks.${i}.payload`,
          `tasks.${i}.time_offset`,
          `tasks.${i}`,
        ]),
      ]
    : [];

  return (
    <div className="game-section">
      <div className="game-section-head">
        <p className="muted">Times are in UTC, the game panel's clock; the next run is shown in your time.</p>
        {!editing ? (
          <Button
            onClick={() => {
              create.reset();
              setEditing({ id: null, draft: blank() });
            }}
          >
            New schedule
          </Button>
        ) : null}
      </div>

      {editing ? (
        <form className="card game-dialog" onSubmit={submit}>
          <h3>{editing.id ? `Edit ${editing.draft.name}` : 'New schedule'}</h3>
          <TextField
            label="Name"
            required
            maxLength={191}
            value={editing.draft.name}
            onChange={(e) => set({ name: e.target.value })}
            error={err('name')}
          />
          <fieldset>
            <legend>When (cron, UTC)</legend>
            <div className="game-cron">
              {CRON.map(([field, label]) => (
                <TextField
                  key={field}
                  label={label}
                  required
                  maxLength={64}
                  value={editing.draft.cron[field]}
                  onChange={(e) => set({ cron: { ...editing.draft.cron, [field]: e.target.value } })}
                  error={err(field)}
                  spellCheck={false}
                  autoCapitalize="off"
                />
              ))}
            </div>
            <p className="hint">
              * means every; */15 every 15; 1-5 a range. Minute 0, hour 4 and the rest * is every day at 04:00 UTC.
            </p>
          </fieldset>
          <Checkbox
            label="Active"
            checked={editing.draft.is_active}
            onChange={(e) => set({ is_active: e.target.checked })}
          />
          <Checkbox
            label="Only when the server is running"
            checked={editing.draft.only_when_online}
            onChange={(e) => set({ only_when_online: e.target.checked })}
          />
          <fieldset>
            <legend>Tasks, in order</legend>
            {editing.draft.tasks.length === 0 ? <p className="hint">No tasks: the schedule does nothing yet.</p> : null}
            {editing.draft.tasks.map((task, i) => (
              <div className="game-task" key={task.uid}>
                <SelectField
                  label={`Task ${i + 1}`}
                  value={task.action}
                  onChange={(e) =>
                    setTask(i, {
                      action: e.target.value as GameTask['action'],
                      payload: e.target.value === 'power' ? 'restart' : '',
                    })
                  }
                  error={err(`tasks.${i}.action`)}
                >
                  <option value="command">Send a command</option>
                  <option value="power">Power</option>
                  <option value="backup">Make a backup</option>
                </SelectField>
                {task.action === 'command' ? (
                  <TextField
                    label="Command"
                    value={task.payload}
                    maxLength={1000}
                    onChange={(e) => setTask(i, { payload: e.target.value })}
                    error={err(`tasks.${i}.payload`)}
                    spellCheck={false}
                  />
                ) : null}
                {task.action === 'power' ? (
                  <SelectField
                    label="Signal"
                    value={task.payload}
                    onChange={(e) => setTask(i, { payload: e.target.value })}
                    error={err(`tasks.${i}.payload`)}
                  >
                    <option value="start">Start</option>
                    <option value="restart">Restart</option>
                    <option value="stop">Stop</option>
                    <option value="kill">Kill</option>
                  </SelectField>
                ) : null}
                <TextField
                  label="Delay (seconds)"
                  type="number"
                  min={0}
                  max={900}
                  value={String(task.time_offset)}
                  onChange={(e) => setTask(i, { time_offset: Number(e.target.value) })}
                  error={err(`tasks.${i}.time_offset`)}
                />
                <Button
                  variant="ghost"
                  onClick={() => set({ tasks: editing.draft.tasks.filter((_, j) => j !== i) })}
                  aria-label={`Remove task ${i + 1}`}
                >
                  Remove
                </Button>
                {err(`tasks.${i}`) ? <p className="field-error">{err(`tasks.${i}`)}</p> : null}
              </div>
            ))}
            {err('tasks') ? <p className="field-error">{err('tasks')}</p> : null}
            <Button
              variant="secondary"
              disabled={editing.draft.tasks.length >= 10}
              onClick={() =>
                set({ tasks: [...editing.draft.tasks, { uid: uid(), action: 'command', payload: '', time_offset: 0 }] })
              }
            >
              Add a task
            </Button>
          </fieldset>
          <ErrorAlert error={saving.error} fields={named} />
          <div className="row">
            <Button type="submit" busy={saving.isPending}>
              {editing.id ? 'Save schedule' : 'Create schedule'}
            </Button>
            <Button variant="secondary" onClick={() => setEditing(null)}>
              Cancel
            </Button>
          </div>
        </form>
      ) : null}

      {confirm ? (
        <div className="confirm" role="alertdialog" aria-labelledby="game-schedule-confirm">
          <p id="game-schedule-confirm">
            <strong>Delete the schedule {confirm.name}?</strong>
          </p>
          <ErrorAlert error={remove.error} />
          <div className="row">
            <Button
              variant="danger"
              busy={remove.isPending}
              onClick={() =>
                remove.mutate(
                  { id: confirm.id },
                  {
                    onSuccess: () => {
                      setNotice(`Schedule ${confirm.name} deleted.`);
                      setConfirm(null);
                    },
                  },
                )
              }
            >
              Delete schedule
            </Button>
            <Button variant="secondary" autoFocus onClick={() => setConfirm(null)}>
              Cancel
            </Button>
          </div>
        </div>
      ) : null}

      {notice ? <Alert kind="success">{notice}</Alert> : null}
      <ErrorAlert error={rowError} />
      {list.isPending ? <Loading what="Loading schedules" /> : null}
      <ErrorAlert error={list.error} />
      {list.data && list.data.schedules.length === 0 && !editing ? (
        <Empty title="No schedules">
          <p>Restart every night or back up every week: New schedule.</p>
        </Empty>
      ) : null}
      {list.data && list.data.schedules.length > 0 ? (
        <ul className="list game-rows">
          {list.data.schedules.map((s) => (
            <li key={s.id} className="game-item">
              <div className="game-item-main">
                <strong>{s.name}</strong>{' '}
                <Status value={s.is_processing ? 'running' : s.is_active ? 'active' : 'paused'} />
                <div className="muted">
                  <span className="mono">{cronText(s.cron)}</span> UTC · next {s.is_active ? when(s.next_run_at) : '—'}
                  {s.last_run_at ? ` · last ${when(s.last_run_at)}` : ''}
                </div>
                <div className="muted">
                  {s.tasks.length === 0
                    ? 'No tasks'
                    : s.tasks
                        .map((t) =>
                          t.action === 'backup'
                            ? 'backup'
                            : t.action === 'power'
                              ? `power ${t.payload}`
                              : `“${t.payload}”`,
                        )
                        .join(' → ')}
                  {s.only_when_online ? ' · only while running' : ''}
                </div>
              </div>
              <div className="row">
                <Button
                  variant="secondary"
                  busy={run.isPending && run.variables?.id === s.id}
                  onClick={() => run.mutate({ id: s.id }, act(`Schedule ${s.name} started.`))}
                >
                  Run now
                </Button>
                <Button
                  variant="secondary"
                  busy={update.isPending && !editing && update.variables?.id === s.id}
                  onClick={() =>
                    update.mutate(
                      { id: s.id, is_active: !s.is_active },
                      act(`Schedule ${s.name} ${s.is_active ? 'paused' : 'resumed'}.`),
                    )
                  }
                >
                  {s.is_active ? 'Pause' : 'Resume'}
                </Button>
                <Button
                  variant="secondary"
                  onClick={() => {
                    update.reset();
                    setEditing({
                      id: s.id,
                      draft: {
                        name: s.name,
                        cron: { ...s.cron },
                        is_active: s.is_active,
                        only_when_online: s.only_when_online,
                        tasks: s.tasks.map((t) => ({
                          uid: uid(),
                          action: t.action,
                          payload: t.payload,
                          time_offset: t.time_offset,
                        })),
                      },
                    });
                  }}
                >
                  Edit
                </Button>
                <Button
                  variant="ghost"
                  onClick={() => {
                    remove.reset();
                    setConfirm(s);
                  }}
                >
                  Delete…
                </Button>
              </div>
            </li>
          ))}
        </ul>
      ) : null}
    </div>
  );
}

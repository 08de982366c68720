// Game actions, spec 4.9 Backups, Databases and Schedules. The plan's limits on backups and
// databases are checked here before the panel is asked (409 limit_reached with the limit in
// `details`); the panel enforces the same limits, set at provisioning, and its refusal reads the
// same. Cron fields are checked one by one (./rules.ts) so a refusal names the field.

import { Type } from 'typebox';
import type { GameSchedule } from '../../../upstreams/game-panel.ts';
import { AppError } from '../../errors.ts';
import type { ActionContext } from '../../product-kit/actions.ts';
import { readStored } from '../../product-kit/data.ts';
import { isoWithOffset } from '../../time.ts';
import { answer, gameAction, PlainText, UuidParam } from './action.ts';
import { gameSpecs } from './data.ts';
import { featureLimits } from './provision.ts';
import { CRON_FIELDS, type CronField, cronProblems } from './rules.ts';
import { ask } from './server.ts';
import { backupView, databaseView, scheduleView } from './views.ts';

async function limitsOf(ctx: ActionContext): Promise<{ databases: number; backups: number }> {
  const plan = await ctx.db
    .selectFrom('plans')
    .select(['label', 'specs'])
    .where('id', '=', ctx.service.plan_id)
    .executeTakeFirstOrThrow();
  return featureLimits(readStored(gameSpecs, plan.specs, `the specs of plan ${plan.label}`));
}

const limitReached = (what: string, limit: number) =>
  new AppError('limit_reached', {
    message: `Your plan allows ${limit} ${what}; delete one first or upgrade the plan.`,
    details: { limit, resource: what },
  });

const CronParams = {
  minute: Type.String({ minLength: 1, maxLength: 64, default: '*' }),
  hour: Type.String({ minLength: 1, maxLength: 64, default: '*' }),
  day_of_month: Type.String({ minLength: 1, maxLength: 64, default: '*' }),
  month: Type.String({ minLength: 1, maxLength: 64, default: '*' }),
  day_of_week: Type.String({ minLength: 1, maxLength: 64, default: '*' }),
};

const Task = Type.Object(
  {
    action: Type.Union([Type.Literal('command'), Type.Literal('power'), Type.Literal('backup')]),
    payload: Type.Optional(PlainText({ maxLength: 1000 })),
    time_offset: Type.Optional(Type.Integer({ minimum: 0, maximum: 900, default: 0 })),
    continue_on_failure: Type.Optional(Type.Boolean({ default: false })),
  },
  { additionalProperties: false },
);

const ScheduleParams = {
  name: PlainText({ minLength: 1, maxLength: 191 }),
  ...Object.fromEntries(CRON_FIELDS.map((f) => [f, Type.Optional(CronParams[f])])),
  is_active: Type.Optional(Type.Boolean({ default: true })),
  only_when_online: Type.Optional(Type.Boolean({ default: false })),
  tasks: Type.Optional(Type.Array(Task, { maxItems: 10, description: 'run in order; replaces the existing ones' })),
};

// An update changes only what it names: no defaults here (the validator would fill them in and
// an omitted field would be reset), and the name may be left out too.
const ScheduleUpdateParams = {
  ...ScheduleParams,
  name: Type.Optional(PlainText({ minLength: 1, maxLength: 191 })),
  ...Object.fromEntries(CRON_FIELDS.map((f) => [f, Type.Optional(Type.String({ minLength: 1, maxLength: 64 }))])),
  is_active: Type.Optional(Type.Boolean()),
  only_when_online: Type.Optional(Type.Boolean()),
};

interface TaskParam {
  action: 'command' | 'power' | 'backup';
  payload?: string;
  time_offset?: number;
  continue_on_failure?: boolean;
}

/** The schedule and its tasks as the panel takes them, after checking cron fields and task payloads. */
function scheduleInput(p: Record<string, unknown>) {
  const cron = Object.fromEntries(CRON_FIELDS.map((f) => [f, String(p[f] ?? '*')])) as Record<CronField, string>;
  const problems = cronProblems(cron);
  const tasks = ((p.tasks as TaskParam[] | undefined) ?? []).map((t, i) => {
    const payload = t.payload ?? '';
    if (t.action === 'command' && payload.trim() === '') problems[`tasks.${i}.payload`] = 'is required for a command';
    if (t.action === 'power' && !['start', 'stop', 'restart', 'kill'].includes(payload))
      problems[`tasks.${i}.payload`] = 'must be start, stop, restart or kill for a power task';
    return {
      action: t.action,
      payload: t.action === 'backup' ? '' : payload,
      timeOffset: t.time_offset ?? 0,
      continueOnFailure: t.continue_on_failure ?? false,
    };
  });
  if (Object.keys(problems).length > 0) throw AppError.fields(problems);
  return {
    input: {
      name: String(p.name),
      cron: {
        minute: cron.minute,
        hour: cron.hour,
        dayOfMonth: cron.day_of_month,
        month: cron.month,
        dayOfWeek: cron.day_of_week,
      },
      isActive: p.is_active !== false,
      onlyWhenOnline: p.only_when_online === true,
    },
    tasks: p.tasks === undefined ? null : tasks,
  };
}

/** A schedule as schedule_update's parameters (tasks left out: they are kept unless sent). */
function currentParams(s: GameSchedule): Record<string, unknown> {
  return {
    name: s.name,
    minute: s.cron.minute,
    hour: s.cron.hour,
    day_of_month: s.cron.dayOfMonth,
    month: s.cron.month,
    day_of_week: s.cron.dayOfWeek,
    is_active: s.isActive,
    only_when_online: s.onlyWhenOnline,
  };
}

const definedOnly = (p: Record<string, unknown>) =>
  Object.fromEntries(Object.entries(p).filter(([, v]) => v !== undefined));

const ScheduleId = Type.Integer({ minimum: 1, maximum: 2_147_483_647 });
const DatabaseId = Type.String({ pattern: '^[A-Za-z0-9]{1,32}$', description: 'the id the list gave' });

export const backupActions = [
  gameAction({
    name: 'backups',
    group: 'backups',
    method: 'read',
    description: "The server's backups, with the plan's limit",
    params: {},
    handler: async (ctx) => {
      const [list, limits] = await Promise.all([ask(ctx, (panel, ref) => panel.listBackups(ref)), limitsOf(ctx)]);
      return answer('Backups loaded.', {
        backups: list.backups.map(backupView),
        count: list.count,
        limit: limits.backups,
      });
    },
  }),
  gameAction({
    name: 'backup_create',
    group: 'backups',
    method: 'mutate',
    description:
      'Start a backup of the server files (`name`, `ignored` patterns, `locked`); it completes in the background',
    params: {
      name: Type.Optional(PlainText({ minLength: 1, maxLength: 191 })),
      ignored: Type.Optional(Type.Array(PlainText({ minLength: 1, maxLength: 255 }), { maxItems: 50 })),
      locked: Type.Optional(Type.Boolean({ default: false })),
    },
    handler: async (ctx, p) => {
      const limits = await limitsOf(ctx);
      const backup = await ask(ctx, async (panel, ref) => {
        const { count } = await panel.listBackups(ref);
        if (count >= limits.backups) throw limitReached('backups', limits.backups);
        return panel.createBackup(ref, {
          name: (p.name as string | undefined) ?? null,
          ignored: (p.ignored as string[] | undefined) ?? [],
          locked: p.locked === true,
        });
      });
      return answer('Backup started.', { backup: backupView(backup) }, 202);
    },
  }),
  gameAction({
    name: 'backup_restore',
    group: 'backups',
    method: 'mutate',
    description:
      'Restore a completed backup (`uuid`); `truncate` deletes every file first. The server is stopped meanwhile',
    params: { uuid: UuidParam, truncate: Type.Optional(Type.Boolean({ default: false })) },
    handler: async (ctx, p) => {
      await ask(ctx, (panel, ref) => panel.restoreBackup(ref, String(p.uuid), p.truncate === true));
      return answer('Restore started.', { uuid: p.uuid }, 202);
    },
  }),
  gameAction({
    name: 'backup_delete',
    group: 'backups',
    method: 'mutate',
    description: 'Delete a backup (`uuid`); locked ones must be unlocked on the panel first',
    params: { uuid: UuidParam },
    handler: async (ctx, p) => {
      await ask(ctx, (panel, ref) => panel.deleteBackup(ref, String(p.uuid)));
      return answer('Backup deleted.', { uuid: p.uuid });
    },
  }),
  gameAction({
    name: 'backup_download',
    noStore: true,
    group: 'backups',
    method: 'read',
    description: 'A signed URL to download a backup archive (`uuid`), valid 15 minutes',
    params: { uuid: UuidParam },
    handler: async (ctx, p) => {
      const url = await ask(ctx, (panel, ref) => panel.backupDownloadUrl(ref, String(p.uuid)));
      return answer('Download URL issued.', {
        download: { url, expires_at: isoWithOffset(new Date(ctx.clock().getTime() + 15 * 60_000)) },
      });
    },
  }),
];

export const databaseActions = [
  gameAction({
    name: 'databases',
    group: 'databases',
    method: 'read',
    description: "The server's MySQL databases (passwords are shown once, on create and rotate)",
    params: {},
    handler: async (ctx) => {
      const [list, limits] = await Promise.all([ask(ctx, (panel, ref) => panel.listDatabases(ref)), limitsOf(ctx)]);
      return answer('Databases loaded.', {
        databases: list.map((d) => databaseView({ ...d, password: null })),
        limit: limits.databases,
      });
    },
  }),
  gameAction({
    name: 'db_create',
    group: 'databases',
    method: 'mutate',
    description:
      'Create a database (`database`: 3–48 letters, digits, dashes, underscores; `remote`: where it may be reached from, default %)',
    params: {
      database: Type.String({ minLength: 3, maxLength: 48, pattern: '^[A-Za-z0-9_-]+$' }),
      remote: Type.Optional(Type.String({ minLength: 1, maxLength: 64, pattern: '^[\\w\\-/.%:]+$', default: '%' })),
    },
    handler: async (ctx, p) => {
      const limits = await limitsOf(ctx);
      const database = await ask(
        ctx,
        async (panel, ref) => {
          const existing = await panel.listDatabases(ref);
          if (existing.length >= limits.databases) throw limitReached('databases', limits.databases);
          return panel.createDatabase(ref, { database: String(p.database), remote: String(p.remote ?? '%') });
        },
        { database: 'database', remote: 'remote' },
      );
      return answer(
        'Database created; keep the password, it is shown only now.',
        { database: databaseView(database) },
        201,
      );
    },
  }),
  gameAction({
    name: 'db_delete',
    group: 'databases',
    method: 'mutate',
    description: 'Delete a database (`id`) and its data',
    params: { id: DatabaseId },
    handler: async (ctx, p) => {
      await ask(ctx, (panel, ref) => panel.deleteDatabase(ref, String(p.id)));
      return answer('Database deleted.', { id: p.id });
    },
  }),
  gameAction({
    name: 'db_rotate',
    group: 'databases',
    method: 'mutate',
    description: 'Give a database (`id`) a new password; the answer shows it once',
    params: { id: DatabaseId },
    handler: async (ctx, p) => {
      const database = await ask(ctx, (panel, ref) => panel.rotateDatabasePassword(ref, String(p.id)));
      return answer('Password changed; keep it, it is shown only now.', { database: databaseView(database) });
    },
  }),
];

export const scheduleActions = [
  gameAction({
    name: 'schedules',
    group: 'schedules',
    method: 'read',
    description: 'Scheduled tasks (cron in UTC) with their steps',
    params: {},
    handler: async (ctx) => {
      const list = await ask(ctx, (panel, ref) => panel.listSchedules(ref));
      return answer('Schedules loaded.', { schedules: list.map(scheduleView) });
    },
  }),
  gameAction({
    name: 'schedule_create',
    group: 'schedules',
    method: 'mutate',
    description:
      'Create a schedule: `name`, cron fields (`minute`, `hour`, `day_of_month`, `month`, `day_of_week`, UTC), `is_active`, `only_when_online`, `tasks` [{action: command|power|backup, payload, time_offset}]',
    params: ScheduleParams,
    example: () => ({
      name: 'nightly restart',
      minute: '0',
      hour: '4',
      tasks: [{ action: 'power', payload: 'restart' }],
    }),
    handler: async (ctx, p) => {
      const { input, tasks } = scheduleInput(p);
      const schedule = await ask(ctx, (panel, ref) => panel.createSchedule(ref, input, tasks ?? []));
      return answer('Schedule created.', { schedule: scheduleView(schedule) }, 201);
    },
  }),
  gameAction({
    name: 'schedule_update',
    group: 'schedules',
    method: 'mutate',
    description:
      'Change a schedule (`id` and any fields of schedule_create): a field left out keeps its value; `tasks`, when given, replaces its tasks',
    params: { id: ScheduleId, ...ScheduleUpdateParams },
    handler: async (ctx, p) => {
      // The panel's update takes every field, so what is not sent is read from the schedule as it is.
      const id = Number(p.id);
      const current = (await ask(ctx, (panel, ref) => panel.listSchedules(ref))).find((s) => s.id === id);
      if (!current) throw new AppError('not_found', { message: `No schedule ${id} on this server.` });
      const { input, tasks } = scheduleInput({ ...currentParams(current), ...definedOnly(p) });
      const schedule = await ask(ctx, (panel, ref) => panel.updateSchedule(ref, id, input, tasks));
      return answer('Schedule saved.', { schedule: scheduleView(schedule) });
    },
  }),
  gameAction({
    name: 'schedule_delete',
    group: 'schedules',
    method: 'mutate',
    description: 'Delete a schedule (`id`)',
    params: { id: ScheduleId },
    handler: async (ctx, p) => {
      await ask(ctx, (panel, ref) => panel.deleteSchedule(ref, Number(p.id)));
      return answer('Schedule deleted.', { id: p.id });
    },
  }),
  gameAction({
    name: 'schedule_execute',
    group: 'schedules',
    method: 'mutate',
    description: 'Run a schedule (`id`) now',
    params: { id: ScheduleId },
    handler: async (ctx, p) => {
      await ask(ctx, (panel, ref) => panel.executeSchedule(ref, Number(p.id)));
      return answer('Schedule started.', { id: p.id }, 202);
    },
  }),
];

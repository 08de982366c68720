// The Client API's databases, schedules (with tasks, cron validation and "execute" that really
// runs the tasks) and subusers (upstreams.md §1.6).

import { randomUUID } from 'node:crypto';
import { startBackup } from './backups.ts';
import { type Ctx, later, type Req } from './context.ts';
import { type CronFields, nextRun, parseCron } from './cron.ts';
import { command, type PowerSignal, power } from './game.ts';
import { badRequest, display, NO_CONTENT, notFound, ok, PteroError, str } from './http.ts';
import { can, log, need, PERMISSIONS, route, type ServerRoute } from './routes.ts';
import { randomString } from './seed.ts';
import { atom, type Schedule, type ScheduleTask, type Server, type User } from './state.ts';
import { clientDatabase, clientSchedule, clientTask, clientUser, item, list, unhash } from './transform.ts';
import { type CustomRule, validate } from './validate.ts';

// ---- databases ----

function dbName(name: string, serverId: number): string {
  const prefix = `s${serverId}_`;
  return `${prefix}${name.slice(0, 48 - prefix.length)}`;
}

function databaseOf(ctx: Ctx, server: Server, id: string) {
  const db = unhash(ctx, id);
  if (!db || db.serverId !== server.id) throw notFound();
  return db;
}

function password(): string {
  return randomString(24);
}

const DATABASE_ROUTES: ServerRoute[] = [
  route('GET', /^\/databases$/, (ctx, req, server) => {
    need(ctx, req, server, 'database.read');
    const withPassword =
      (req.query.get('include') ?? '').split(',').includes('password') &&
      can(ctx, req, server, 'database.view_password');
    return ok(
      list(
        [...ctx.state.databases.values()]
          .filter((d) => d.serverId === server.id)
          .map((d) => clientDatabase(ctx, d, withPassword)),
      ),
    );
  }),
  route('POST', /^\/databases$/, (ctx, req, server) => {
    need(ctx, req, server, 'database.create');
    const unique: CustomRule = (value) =>
      [...ctx.state.databases.values()].some(
        (d) => d.serverId === server.id && d.database === dbName(String(value), server.id),
      )
        ? { rule: 'unique', message: 'The database name you have selected is already in use by this server.' }
        : null;
    validate(req.body, {
      database: ['required', 'alpha_dash', 'min:3', 'max:48', unique],
      remote: ['required', 'string', 'regex:/^[\\w\\-\\/.%:]+$/'],
    });
    const host = [...ctx.state.databaseHosts.values()][0];
    if (!host)
      throw display(
        'No database host was found that meets the requirements for this server.',
        'NoSuitableDatabaseHostException',
      );
    const count = [...ctx.state.databases.values()].filter((d) => d.serverId === server.id).length;
    if (server.databaseLimit !== null && count >= server.databaseLimit) {
      throw display(
        'Operation aborted: creating a new database would put this server over the defined limit.',
        'TooManyDatabasesException',
      );
    }
    const id = ctx.state.next('database');
    const db = {
      id,
      serverId: server.id,
      hostId: host.id,
      database: dbName(String(req.body.database), server.id),
      username: `u${server.id}_${randomString(10)}`,
      password: password(),
      remote: String(req.body.remote),
      maxConnections: 0,
      createdAt: atom(),
    };
    ctx.state.databases.set(id, db);
    log(ctx, req, server, 'server:database.create', { name: db.database });
    ctx.state.save();
    return ok(clientDatabase(ctx, db, true));
  }),
  route('POST', /^\/databases\/([^/]+)\/rotate-password$/, (ctx, req, server, m) => {
    need(ctx, req, server, 'database.update');
    const db = databaseOf(ctx, server, m[1] ?? '');
    db.password = password();
    log(ctx, req, server, 'server:database.rotate-password', { name: db.database });
    ctx.state.save();
    return ok(clientDatabase(ctx, db, true));
  }),
  route('DELETE', /^\/databases\/([^/]+)$/, (ctx, req, server, m) => {
    need(ctx, req, server, 'database.delete');
    const db = databaseOf(ctx, server, m[1] ?? '');
    ctx.state.databases.delete(db.id);
    log(ctx, req, server, 'server:database.delete', { name: db.database });
    ctx.state.save();
    return NO_CONTENT;
  }),
];

// ---- schedules ----

const MAX_TASKS = 10;

function scheduleOf(ctx: Ctx, server: Server, id: string): Schedule {
  const s = /^\d+$/.test(id) ? ctx.state.schedules.get(Number(id)) : undefined;
  if (!s || s.serverId !== server.id) throw notFound();
  return s;
}

function cronOf(body: Record<string, unknown>): CronFields {
  return {
    minute: String(body.minute),
    hour: String(body.hour),
    dayOfMonth: String(body.day_of_month),
    month: body.month === undefined || body.month === null ? '*' : String(body.month),
    dayOfWeek: String(body.day_of_week),
  };
}

function nextRunAt(fields: CronFields): string {
  const cron = parseCron(fields);
  const next = cron ? nextRun(cron) : null;
  if (!next) throw display('The cron data provided does not evaluate to a valid expression.');
  return atom(next.getTime());
}

function bool(value: unknown, fallback: boolean): boolean {
  if (value === undefined || value === null) return fallback;
  return value === true || value === 1 || value === '1' || value === 'true';
}

function saveSchedule(ctx: Ctx, req: Req, server: Server, existing: Schedule | null): Schedule {
  validate(req.body, {
    name: ['required', 'string', 'max:191'],
    is_active: ['filled', 'boolean'],
    only_when_online: ['boolean'],
    minute: ['required', 'string'],
    hour: ['required', 'string'],
    day_of_month: ['required', 'string'],
    day_of_week: ['required', 'string'],
  });
  const fields = cronOf(req.body);
  const next = nextRunAt(fields);
  const now = atom();
  const active = bool(req.body.is_active, existing?.isActive ?? true);
  const schedule: Schedule = existing ?? {
    id: ctx.state.next('schedule'),
    serverId: server.id,
    name: '',
    cron: fields,
    isActive: true,
    isProcessing: false,
    onlyWhenOnline: false,
    lastRunAt: null,
    nextRunAt: null,
    createdAt: now,
    updatedAt: now,
    tasks: [],
  };
  schedule.name = String(req.body.name);
  schedule.cron = fields;
  schedule.isActive = active;
  schedule.onlyWhenOnline = bool(req.body.only_when_online, existing?.onlyWhenOnline ?? false);
  schedule.nextRunAt = next;
  schedule.updatedAt = now;
  // Reactivating a schedule clears a stuck "processing" flag, as the panel does.
  if (existing && active && !existing.isActive) schedule.isProcessing = false;
  ctx.state.schedules.set(schedule.id, schedule);
  log(ctx, req, server, existing ? 'server:schedule.update' : 'server:schedule.create', { name: schedule.name });
  ctx.state.save();
  return schedule;
}

/** Run a schedule's tasks in sequence, each after its time offset (RunTaskJob). */
export function runSchedule(ctx: Ctx, server: Server, schedule: Schedule): void {
  const tasks = [...schedule.tasks].sort((a, b) => a.sequenceId - b.sequenceId);
  if (tasks.length === 0) throw display('Cannot process schedule for task execution: no tasks are registered.');
  schedule.isProcessing = true;
  for (const t of tasks) t.isQueued = false;
  const first = tasks[0] as ScheduleTask;
  first.isQueued = true;
  const finish = () => {
    schedule.isProcessing = false;
    schedule.lastRunAt = atom();
    for (const t of schedule.tasks) t.isQueued = false;
    try {
      schedule.nextRunAt = nextRunAt(schedule.cron);
    } catch {}
    ctx.state.save();
  };
  const step = (i: number) => {
    const task = tasks[i];
    if (!task) return finish();
    task.isQueued = true;
    // time_offset is seconds; scaled down so tests stay quick (1 s → startDelayMs/10, at least 1 ms).
    later(ctx, Math.max(1, Math.round((task.timeOffset * ctx.delays.startMs) / 10)), () => {
      const current = ctx.state.servers.get(server.id);
      if (!current) return;
      task.isQueued = false;
      if (schedule.onlyWhenOnline && ctx.state.runtimeOf(current.id).state !== 'running') return finish();
      let failed = false;
      try {
        if (task.action === 'command') {
          if (ctx.state.runtimeOf(current.id).state === 'offline') failed = true;
          else command(ctx, current, task.payload);
        } else if (task.action === 'power') {
          power(ctx, current, task.payload as PowerSignal);
        } else {
          startBackup(ctx, current, null, task.payload.split('\n'), false);
        }
      } catch {
        failed = true;
      }
      if (failed && !task.continueOnFailure) return finish();
      step(i + 1);
    });
  };
  step(0);
}

/** The panel's `schedule:process` (every minute): run active schedules whose next run is due. */
export function runDueSchedules(ctx: Ctx): void {
  const now = Date.now();
  for (const schedule of ctx.state.schedules.values()) {
    if (!schedule.isActive || schedule.isProcessing || schedule.tasks.length === 0) continue;
    if (schedule.nextRunAt === null || Date.parse(schedule.nextRunAt) > now) continue;
    const server = ctx.state.servers.get(schedule.serverId);
    if (!server || server.status !== null) continue;
    if (schedule.onlyWhenOnline && ctx.state.runtimeOf(server.id).state !== 'running') {
      try {
        schedule.nextRunAt = nextRunAt(schedule.cron);
      } catch {}
      continue;
    }
    runSchedule(ctx, server, schedule);
  }
}

function taskRules(): Record<string, string> {
  return {
    action: 'required|in:command,power,backup',
    time_offset: 'required|numeric|min:0|max:900',
    sequence_id: 'sometimes|required|numeric|min:1',
    continue_on_failure: 'sometimes|required|boolean',
  };
}

function checkTask(server: Server, body: Record<string, unknown>): void {
  validate(body, taskRules());
  if (body.action !== 'backup') validate(body, { payload: 'required|string|nullable' });
  if (body.action === 'backup' && server.backupLimit === 0) {
    throw new PteroError(
      403,
      'HttpForbiddenException',
      "A backup task cannot be created when the server's backup limit is set to 0.",
    );
  }
}

const SCHEDULE_ROUTES: ServerRoute[] = [
  route('GET', /^\/schedules$/, (ctx, req, server) => {
    need(ctx, req, server, 'schedule.read');
    return ok(list([...ctx.state.schedules.values()].filter((s) => s.serverId === server.id).map(clientSchedule)));
  }),
  route('POST', /^\/schedules$/, (ctx, req, server) => {
    need(ctx, req, server, 'schedule.create');
    return ok(clientSchedule(saveSchedule(ctx, req, server, null)));
  }),
  route('GET', /^\/schedules\/([^/]+)$/, (ctx, req, server, m) => {
    need(ctx, req, server, 'schedule.read');
    return ok(clientSchedule(scheduleOf(ctx, server, m[1] ?? '')));
  }),
  route('POST', /^\/schedules\/([^/]+)$/, (ctx, req, server, m) => {
    need(ctx, req, server, 'schedule.update');
    return ok(clientSchedule(saveSchedule(ctx, req, server, scheduleOf(ctx, server, m[1] ?? ''))));
  }),
  route('POST', /^\/schedules\/([^/]+)\/execute$/, (ctx, req, server, m) => {
    need(ctx, req, server, 'schedule.update');
    const schedule = scheduleOf(ctx, server, m[1] ?? '');
    runSchedule(ctx, server, schedule);
    log(ctx, req, server, 'server:schedule.execute', { name: schedule.name });
    return ok([], 202);
  }),
  route('DELETE', /^\/schedules\/([^/]+)$/, (ctx, req, server, m) => {
    need(ctx, req, server, 'schedule.delete');
    const schedule = scheduleOf(ctx, server, m[1] ?? '');
    ctx.state.schedules.delete(schedule.id);
    log(ctx, req, server, 'server:schedule.delete', { name: schedule.name });
    ctx.state.save();
    return NO_CONTENT;
  }),
  route('POST', /^\/schedules\/([^/]+)\/tasks$/, (ctx, req, server, m) => {
    need(ctx, req, server, 'schedule.update');
    const schedule = scheduleOf(ctx, server, m[1] ?? '');
    if (schedule.tasks.length >= MAX_TASKS) {
      throw display(
        `Schedules may not have more than ${MAX_TASKS} tasks associated with them. Creating this task would put this schedule over the limit.`,
        'ServiceLimitExceededException',
      );
    }
    checkTask(server, req.body);
    const last = Math.max(0, ...schedule.tasks.map((t) => t.sequenceId));
    const wanted = req.body.sequence_id === undefined ? last + 1 : Math.floor(Number(req.body.sequence_id));
    const sequence = Math.min(wanted, last + 1);
    for (const t of schedule.tasks) if (t.sequenceId >= sequence) t.sequenceId += 1;
    const now = atom();
    const task: ScheduleTask = {
      id: ctx.state.next('task'),
      sequenceId: sequence,
      action: req.body.action as ScheduleTask['action'],
      payload: str(req.body, 'payload') ?? '',
      timeOffset: Math.floor(Number(req.body.time_offset)),
      isQueued: false,
      continueOnFailure: bool(req.body.continue_on_failure, false),
      createdAt: now,
      updatedAt: now,
    };
    schedule.tasks.push(task);
    log(ctx, req, server, 'server:task.create', { name: schedule.name, action: task.action, payload: task.payload });
    ctx.state.save();
    return ok(clientTask(task));
  }),
  route('POST', /^\/schedules\/([^/]+)\/tasks\/([^/]+)$/, (ctx, req, server, m) => {
    need(ctx, req, server, 'schedule.update');
    const schedule = scheduleOf(ctx, server, m[1] ?? '');
    const task = schedule.tasks.find((t) => String(t.id) === m[2]);
    if (!task) throw notFound();
    checkTask(server, req.body);
    task.action = req.body.action as ScheduleTask['action'];
    task.payload = str(req.body, 'payload') ?? '';
    task.timeOffset = Math.floor(Number(req.body.time_offset));
    if (req.body.continue_on_failure !== undefined) task.continueOnFailure = bool(req.body.continue_on_failure, false);
    if (req.body.sequence_id !== undefined) task.sequenceId = Math.max(1, Math.floor(Number(req.body.sequence_id)));
    task.updatedAt = atom();
    log(ctx, req, server, 'server:task.update', { name: schedule.name, action: task.action, payload: task.payload });
    ctx.state.save();
    return ok(clientTask(task));
  }),
  route('DELETE', /^\/schedules\/([^/]+)\/tasks\/([^/]+)$/, (ctx, req, server, m) => {
    need(ctx, req, server, 'schedule.update');
    const schedule = scheduleOf(ctx, server, m[1] ?? '');
    const task = schedule.tasks.find((t) => String(t.id) === m[2]);
    if (!task) throw notFound();
    schedule.tasks = schedule.tasks.filter((t) => t.id !== task.id);
    for (const t of schedule.tasks) if (t.sequenceId > task.sequenceId) t.sequenceId -= 1;
    log(ctx, req, server, 'server:task.delete', { name: schedule.name, action: task.action, payload: task.payload });
    ctx.state.save();
    return NO_CONTENT;
  }),
];

// ---- subusers ----

function subuserItem(ctx: Ctx, userId: number, permissions: string[]): unknown {
  const u = ctx.state.users.get(userId) as User;
  return item('server_subuser', { ...clientUser(u), permissions });
}

function subuserOf(ctx: Ctx, server: Server, uuid: string) {
  for (const su of ctx.state.subusers.values()) {
    if (su.serverId === server.id && ctx.state.users.get(su.userId)?.uuid === uuid) return su;
  }
  throw notFound();
}

/** The panel keeps only permission names it knows (array_intersect) and always adds websocket.connect. */
function permissionsOf(body: Record<string, unknown>): string[] {
  const given = Array.isArray(body.permissions) ? body.permissions.map(String) : [];
  return [...new Set([...given.filter((p) => PERMISSIONS.includes(p)), 'websocket.connect'])];
}

/** A subuser may only grant permissions they hold themselves. */
function checkGrant(ctx: Ctx, req: Req, server: Server, permissions: string[]): void {
  if (req.user.rootAdmin || req.user.id === server.ownerId) return;
  if (permissions.some((p) => !can(ctx, req, server, p))) {
    throw new PteroError(
      403,
      'HttpForbiddenException',
      'Cannot assign permissions to a subuser that your account does not actively possess.',
    );
  }
}

const SUBUSER_ROUTES: ServerRoute[] = [
  route('GET', /^\/users$/, (ctx, req, server) => {
    need(ctx, req, server, 'user.read');
    return ok(
      list(
        [...ctx.state.subusers.values()]
          .filter((su) => su.serverId === server.id && ctx.state.users.has(su.userId))
          .map((su) => subuserItem(ctx, su.userId, su.permissions)),
      ),
    );
  }),
  route('POST', /^\/users$/, (ctx, req, server) => {
    need(ctx, req, server, 'user.create');
    validate(req.body, {
      email: 'required|email|between:1,191',
      permissions: 'required|array',
    });
    const permissions = permissionsOf(req.body);
    checkGrant(ctx, req, server, permissions);
    const email = String(req.body.email);
    let user = ctx.state.userByEmail(email);
    if (user) {
      if (user.id === server.ownerId) {
        throw display('You cannot add the server owner as a subuser for this server.', 'UserIsServerOwnerException');
      }
      if ([...ctx.state.subusers.values()].some((su) => su.serverId === server.id && su.userId === user?.id)) {
        throw display(
          'A user with that email address is already assigned as a subuser for this server.',
          'ServerSubuserExistsException',
        );
      }
    } else {
      const now = atom();
      const local = (email.split('@')[0] ?? '').replace(/[^\w.-]+/g, '').slice(0, 64);
      user = {
        id: ctx.state.next('user'),
        uuid: randomUUID(),
        username: `${local}${randomString(3)}`.toLowerCase(),
        email,
        firstName: 'Server',
        lastName: 'Subuser',
        externalId: null,
        language: 'en',
        rootAdmin: false,
        createdAt: now,
        updatedAt: now,
      };
      ctx.state.users.set(user.id, user);
    }
    const now = atom();
    const su = {
      id: ctx.state.next('subuser'),
      serverId: server.id,
      userId: user.id,
      permissions,
      createdAt: now,
      updatedAt: now,
    };
    ctx.state.subusers.set(su.id, su);
    log(ctx, req, server, 'server:subuser.create', { email, permissions });
    ctx.state.save();
    return ok(subuserItem(ctx, user.id, permissions));
  }),
  route('GET', /^\/users\/([^/]+)$/, (ctx, req, server, m) => {
    need(ctx, req, server, 'user.read');
    const su = subuserOf(ctx, server, m[1] ?? '');
    return ok(subuserItem(ctx, su.userId, su.permissions));
  }),
  route('POST', /^\/users\/([^/]+)$/, (ctx, req, server, m) => {
    need(ctx, req, server, 'user.update');
    const su = subuserOf(ctx, server, m[1] ?? '');
    if (su.userId === req.user.id) throw badRequest('Editing your own subuser account is not permitted.');
    validate(req.body, { permissions: 'required|array' });
    const permissions = permissionsOf(req.body);
    checkGrant(ctx, req, server, permissions);
    const old = [...su.permissions].sort();
    su.permissions = permissions;
    su.updatedAt = atom();
    log(ctx, req, server, 'server:subuser.update', {
      email: ctx.state.users.get(su.userId)?.email,
      old,
      new: [...permissions].sort(),
      revoked: true,
    });
    ctx.state.save();
    return ok(subuserItem(ctx, su.userId, su.permissions));
  }),
  route('DELETE', /^\/users\/([^/]+)$/, (ctx, req, server, m) => {
    need(ctx, req, server, 'user.delete');
    const su = subuserOf(ctx, server, m[1] ?? '');
    if (su.userId === req.user.id) throw badRequest('Editing your own subuser account is not permitted.');
    ctx.state.subusers.delete(su.id);
    log(ctx, req, server, 'server:subuser.delete', { email: ctx.state.users.get(su.userId)?.email, revoked: true });
    ctx.state.save();
    return NO_CONTENT;
  }),
];

export const EXTRA_ROUTES: ServerRoute[] = [...DATABASE_ROUTES, ...SCHEDULE_ROUTES, ...SUBUSER_ROUTES];

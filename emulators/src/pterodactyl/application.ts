// The Application API (`/api/application/...`, upstreams.md §1.9): users, servers (create with
// StoreServerRequest's rules and the egg variables' rules, details/build/startup, suspend,
// unsuspend, reinstall, delete), nodes and their allocations, locations, nests and eggs.

import { randomBytes, randomUUID, scryptSync, timingSafeEqual } from 'node:crypto';
import { activity, type Ctx, emit, type Req } from './context.ts';
import { install, power } from './game.ts';
import {
  type Answer,
  type Body,
  display,
  filters,
  NO_CONTENT,
  notFound,
  ok,
  PteroError,
  pageParams,
  pagination,
  str,
  wingsUnreachable,
} from './http.ts';
import { atom, type Server, type User } from './state.ts';
import { appAllocation, appEgg, appNodeAttributes, appServer, appUser, item, list } from './transform.ts';
import { type CustomRule, check, type Failure, validate } from './validate.ts';

export type Handler = (ctx: Ctx, req: Req, m: string[]) => Answer;
export type Route = [method: string, pattern: RegExp, handler: Handler];

const A = '/api/application';

function includes(req: Req): Set<string> {
  return new Set(
    (req.query.get('include') ?? '')
      .split(',')
      .map((s) => s.trim())
      .filter(Boolean),
  );
}

/** Spatie's partial filter: case-insensitive "contains". */
function like(value: string | null, wanted: string): boolean {
  return (value ?? '').toLowerCase().includes(wanted.toLowerCase());
}

function applyFilters<T>(rows: T[], req: Req, allowed: Record<string, (row: T, value: string) => boolean>): T[] {
  let out = rows;
  for (const [name, value] of filters(req.query)) {
    const test = allowed[name];
    if (!test) {
      throw new PteroError(
        400,
        'InvalidFilterQuery',
        `Requested filter(s) \`${name}\` are not allowed. Allowed filter(s) are \`${Object.keys(allowed).join(', ')}\`.`,
      );
    }
    if (value === '') continue;
    out = out.filter((row) => test(row, value));
  }
  return out;
}

function sortRows<T extends { id: number; uuid: string }>(rows: T[], req: Req): T[] {
  const sort = req.query.get('sort');
  if (!sort) return rows;
  const desc = sort.startsWith('-');
  const key = desc ? sort.slice(1) : sort;
  if (key !== 'id' && key !== 'uuid') {
    throw new PteroError(
      400,
      'InvalidSortQuery',
      `Requested sort(s) \`${key}\` is not allowed. Allowed sort(s) are \`id, uuid\`.`,
    );
  }
  const sorted = [...rows].sort((a, b) => (key === 'id' ? a.id - b.id : a.uuid.localeCompare(b.uuid)));
  return desc ? sorted.reverse() : sorted;
}

function paged(ctx: Ctx, req: Req, rows: unknown[], fallback = 50): Answer {
  const { page, perPage } = pageParams(req.query, fallback, 10_000);
  const slice = rows.slice((page - 1) * perPage, page * perPage);
  return ok({
    ...list(slice),
    meta: { pagination: pagination(ctx.panelUrl, req.path, req.query, rows.length, slice.length, perPage, page) },
  });
}

function userOf(ctx: Ctx, id: string): User {
  const user = /^\d+$/.test(id) ? ctx.state.users.get(Number(id)) : undefined;
  if (!user) throw notFound();
  return user;
}

export function serverOf(ctx: Ctx, id: string): Server {
  const server = /^\d+$/.test(id) ? ctx.state.servers.get(Number(id)) : undefined;
  if (!server) throw notFound();
  return server;
}

// ---- users ----

const USERNAME: CustomRule = (value) =>
  typeof value === 'string' && !/^[a-z0-9]([\w.-]+)[a-z0-9]$/.test(value.toLowerCase())
    ? {
        rule: 'p_username',
        message:
          'The :attribute must start and end with alpha-numeric characters and contain only letters, numbers, dashes, underscores, and periods.',
      }
    : null;

function uniqueUser(ctx: Ctx, field: 'email' | 'username' | 'externalId', except?: number): CustomRule {
  return (value) => {
    for (const u of ctx.state.users.values()) {
      if (u.id === except) continue;
      const current = u[field];
      if (current !== null && String(current).toLowerCase() === String(value).toLowerCase()) {
        return { rule: 'unique', message: 'The :attribute has already been taken.' };
      }
    }
    return null;
  };
}

function userRules(ctx: Ctx, except?: number): Record<string, (string | CustomRule)[]> {
  return {
    external_id: ['sometimes', 'nullable', 'string', 'max:191', uniqueUser(ctx, 'externalId', except)],
    email: ['required', 'email', 'between:1,191', uniqueUser(ctx, 'email', except)],
    username: ['required', 'between:1,191', uniqueUser(ctx, 'username', except), USERNAME],
    password: ['sometimes', 'nullable', 'string'],
    language: ['string'],
    root_admin: ['boolean'],
    first_name: ['required', 'string', 'between:1,191'],
    last_name: ['required', 'string', 'between:1,191'],
  };
}

const USER_ATTRIBUTES = {
  external_id: 'Third Party Identifier',
  first_name: 'First Name',
  last_name: 'Last Name',
  root_admin: 'Root Administrator Status',
};

/** A password sent with a user is hashed and kept (UserUpdateService); an empty or absent one changes nothing. */
function setPassword(user: User, password: unknown): void {
  if (typeof password !== 'string' || password === '') return;
  const salt = randomBytes(16);
  user.passwordHash = `scrypt$${salt.toString('base64')}$${scryptSync(password, salt, 32).toString('base64')}`;
}

/** Whether `password` is the user's (what the panel's login form checks). */
export function passwordMatches(user: User, password: string): boolean {
  const [kind, salt, hash] = (user.passwordHash ?? '').split('$');
  if (kind !== 'scrypt' || !salt || !hash) return false;
  const expected = Buffer.from(hash, 'base64');
  const actual = scryptSync(password, Buffer.from(salt, 'base64'), expected.length);
  return timingSafeEqual(actual, expected);
}

function createUser(ctx: Ctx, req: Req): Answer {
  validate(req.body, userRules(ctx), USER_ATTRIBUTES);
  const id = ctx.state.next('user');
  const now = atom();
  const user: User = {
    id,
    uuid: randomUUID(),
    username: String(req.body.username).toLowerCase(),
    email: String(req.body.email),
    firstName: String(req.body.first_name),
    lastName: String(req.body.last_name),
    externalId: str(req.body, 'external_id') ?? null,
    language: str(req.body, 'language') ?? 'en',
    rootAdmin: req.body.root_admin === true || req.body.root_admin === 1 || req.body.root_admin === '1',
    createdAt: now,
    updatedAt: now,
  };
  setPassword(user, req.body.password);
  ctx.state.users.set(id, user);
  ctx.state.save();
  return ok({ ...(appUser(user) as object), meta: { resource: `${ctx.panelUrl}${A}/users/${id}` } }, 201);
}

function updateUser(ctx: Ctx, req: Req, id: string): Answer {
  const user = userOf(ctx, id);
  const rules = userRules(ctx, user.id);
  // PATCH sends the same fields; missing ones keep their value.
  const merged: Body = {
    email: user.email,
    username: user.username,
    first_name: user.firstName,
    last_name: user.lastName,
    ...req.body,
  };
  validate(merged, rules, USER_ATTRIBUTES);
  user.email = String(merged.email);
  user.username = String(merged.username).toLowerCase();
  user.firstName = String(merged.first_name);
  user.lastName = String(merged.last_name);
  if ('external_id' in req.body) user.externalId = str(req.body, 'external_id') ?? null;
  if ('language' in req.body) user.language = str(req.body, 'language') ?? user.language;
  if ('root_admin' in req.body) user.rootAdmin = req.body.root_admin === true || req.body.root_admin === 1;
  setPassword(user, req.body.password);
  user.updatedAt = atom();
  ctx.state.save();
  return ok(appUser(user));
}

function deleteUser(ctx: Ctx, id: string): Answer {
  const user = userOf(ctx, id);
  if ([...ctx.state.servers.values()].some((s) => s.ownerId === user.id)) {
    throw display(
      'Cannot delete a user with active servers attached to their account. Please delete their servers before continuing.',
    );
  }
  ctx.state.users.delete(user.id);
  for (const [k, key] of ctx.state.keys) if (key.userId === user.id) ctx.state.keys.delete(k);
  for (const [k, su] of ctx.state.subusers) if (su.userId === user.id) ctx.state.subusers.delete(k);
  ctx.state.save();
  return NO_CONTENT;
}

// ---- servers ----

function allocationFree(ctx: Ctx): CustomRule {
  return (value) => {
    const a = /^\d+$/.test(String(value)) ? ctx.state.allocations.get(Number(value)) : undefined;
    return a && a.serverId === null ? null : { rule: 'exists', message: 'The selected :attribute is invalid.' };
  };
}

function uniqueServerExternal(ctx: Ctx, except?: number): CustomRule {
  return (value) => {
    for (const s of ctx.state.servers.values()) {
      if (s.id !== except && s.externalId !== null && s.externalId === String(value)) {
        return { rule: 'unique', message: 'The :attribute has already been taken.' };
      }
    }
    return null;
  };
}

function exists(test: (id: number) => boolean): CustomRule {
  return (value) =>
    /^\d+$/.test(String(value)) && test(Number(value))
      ? null
      : { rule: 'exists', message: 'The selected :attribute is invalid.' };
}

const IMAGE = 'regex:/^~?[\\w\\.\\/\\-:@ ]*$/';

/** The egg variables checked against their rules, as VariableValidatorService at admin level. */
export function checkEnvironment(ctx: Ctx, eggId: number, env: Record<string, unknown>, userLevel: boolean): Failure[] {
  const egg = ctx.state.eggs.get(eggId);
  const rules: Record<string, string> = {};
  const attributes: Record<string, string> = {};
  const data: Record<string, unknown> = {};
  for (const v of egg?.variables ?? []) {
    if (userLevel && !(v.userEditable && v.userViewable)) continue;
    data[v.envVariable] = env[v.envVariable] ?? null;
    rules[`environment.${v.envVariable}`] = v.rules;
    attributes[`environment.${v.envVariable}`] = `${v.name} variable`;
  }
  return check({ environment: data }, rules, attributes);
}

function envStrings(ctx: Ctx, eggId: number, env: Record<string, unknown>): Record<string, string | null> {
  const out: Record<string, string | null> = {};
  for (const v of ctx.state.eggs.get(eggId)?.variables ?? []) {
    const value = env[v.envVariable];
    out[v.envVariable] =
      value === undefined || value === null ? null : typeof value === 'boolean' ? (value ? '1' : '0') : String(value);
  }
  return out;
}

function num(value: unknown, fallback = 0): number {
  const n = Number(value);
  return Number.isFinite(n) ? n : fallback;
}

function nullableInt(value: unknown): number | null {
  return value === null || value === undefined || value === '' ? null : Math.floor(num(value));
}

function pickDeployAllocation(ctx: Ctx, body: Body): number | null {
  const deploy = body.deploy as Record<string, unknown>;
  const locations = Array.isArray(deploy.locations) ? deploy.locations.map(Number) : [];
  const ranges = Array.isArray(deploy.port_range) ? deploy.port_range.map(String) : [];
  const inRange = (port: number) =>
    ranges.length === 0 ||
    ranges.some((r) => {
      const [lo, hi] = r.split('-').map(Number);
      return hi === undefined ? port === lo : port >= (lo ?? 0) && port <= hi;
    });
  for (const a of ctx.state.allocations.values()) {
    const node = ctx.state.nodes.get(a.nodeId);
    if (a.serverId !== null || !node || (locations.length > 0 && !locations.includes(node.locationId))) continue;
    if (inRange(a.port)) return a.id;
  }
  return null;
}

function createServer(ctx: Ctx, req: Req): Answer {
  const body = req.body;
  const deploying = typeof body.deploy === 'object' && body.deploy !== null;
  const rules: Record<string, (string | CustomRule)[]> = {
    external_id: ['sometimes', 'nullable', 'string', 'between:1,191', uniqueServerExternal(ctx)],
    name: ['required', 'string', 'min:1', 'max:191'],
    description: ['nullable', 'string'],
    user: ['required', 'integer', exists((id) => ctx.state.users.has(id))],
    egg: ['required', exists((id) => ctx.state.eggs.has(id))],
    docker_image: ['required', 'string', 'max:191', IMAGE],
    startup: ['required', 'string'],
    environment: ['present', 'array'],
    skip_scripts: ['sometimes', 'boolean'],
    oom_disabled: ['sometimes', 'boolean'],
    limits: ['required', 'array'],
    'limits.memory': ['required', 'numeric', 'min:0'],
    'limits.swap': ['required', 'numeric', 'min:-1'],
    'limits.disk': ['required', 'numeric', 'min:0'],
    'limits.io': ['required', 'numeric', 'between:10,1000'],
    'limits.threads': ['nullable', 'regex:/^[0-9-,]+$/'],
    'limits.cpu': ['required', 'numeric', 'min:0'],
    feature_limits: ['required', 'array'],
    'feature_limits.databases': ['present', 'nullable', 'integer', 'min:0'],
    'feature_limits.allocations': ['sometimes', 'nullable', 'integer', 'min:0'],
    'feature_limits.backups': ['present', 'nullable', 'integer', 'min:0'],
    start_on_completion: ['sometimes', 'boolean'],
  };
  if (!deploying) rules['allocation.default'] = ['required', 'integer', 'bail', allocationFree(ctx)];
  else {
    rules['deploy.locations'] = ['present', 'array'];
    rules['deploy.dedicated_ip'] = ['required', 'boolean'];
    rules['deploy.port_range'] = ['present', 'array'];
  }
  const failures = check(body, rules);
  const additional = Array.isArray((body.allocation as Record<string, unknown> | undefined)?.additional)
    ? ((body.allocation as Record<string, unknown>).additional as unknown[])
    : [];
  if (!deploying) {
    additional.forEach((value, i) => {
      if (allocationFree(ctx)(value, true)) {
        failures.push({
          field: `allocation.additional.${i}`,
          rule: 'exists',
          detail: `The selected allocation.additional.${i} is invalid.`,
        });
      }
    });
  }
  if (failures.length > 0) throw PteroError.validation(failures);
  const eggId = Number(body.egg);
  const env = (typeof body.environment === 'object' && body.environment !== null ? body.environment : {}) as Record<
    string,
    unknown
  >;
  const envFailures = checkEnvironment(ctx, eggId, env, false);
  if (envFailures.length > 0) throw PteroError.validation(envFailures);
  let allocationId: number;
  if (deploying) {
    const picked = pickDeployAllocation(ctx, body);
    if (picked === null) {
      throw display(
        'No viable nodes were found that satisfy the requirements of this server.',
        'NoViableNodeException',
      );
    }
    allocationId = picked;
  } else {
    allocationId = Number((body.allocation as Record<string, unknown>).default);
  }
  const allocation = ctx.state.allocations.get(allocationId);
  if (!allocation) throw notFound();
  const egg = ctx.state.eggs.get(eggId);
  if (!egg) throw notFound();
  const limits = body.limits as Record<string, unknown>;
  const feature = body.feature_limits as Record<string, unknown>;
  const uuid = randomUUID();
  const now = atom();
  const server: Server = {
    id: ctx.state.next('server'),
    uuid,
    identifier: uuid.slice(0, 8),
    externalId: str(body, 'external_id') ?? null,
    name: String(body.name),
    description: str(body, 'description') ?? '',
    status: 'installing',
    ownerId: Number(body.user),
    nodeId: allocation.nodeId,
    allocationId,
    nestId: egg.nestId,
    eggId,
    startup: String(body.startup),
    image: String(body.docker_image),
    memory: Math.floor(num(limits.memory)),
    swap: Math.floor(num(limits.swap)),
    disk: Math.floor(num(limits.disk)),
    io: Math.floor(num(limits.io, 500)),
    cpu: Math.floor(num(limits.cpu)),
    threads: typeof limits.threads === 'string' && limits.threads !== '' ? limits.threads : null,
    oomDisabled: body.oom_disabled === undefined ? true : body.oom_disabled === true || body.oom_disabled === 1,
    databaseLimit: nullableInt(feature.databases),
    allocationLimit: nullableInt(feature.allocations),
    backupLimit: nullableInt(feature.backups),
    environment: envStrings(ctx, eggId, env),
    skipScripts: body.skip_scripts === true || body.skip_scripts === 1,
    installedAt: null,
    createdAt: now,
    updatedAt: now,
  };
  if (ctx.faults.wingsDown) {
    // The panel creates the row, Wings fails, the panel force-deletes it and rethrows.
    throw wingsUnreachable();
  }
  ctx.state.servers.set(server.id, server);
  allocation.serverId = server.id;
  if (!deploying) {
    for (const value of additional) {
      const extra = ctx.state.allocations.get(Number(value));
      if (extra) extra.serverId = server.id;
    }
  }
  ctx.state.treeOf(server.id);
  install(ctx, server, false);
  if (body.start_on_completion === true || body.start_on_completion === 1) {
    const wait = setInterval(() => {
      const current = ctx.state.servers.get(server.id);
      if (!current || current.status === 'installing') {
        if (!current) clearInterval(wait);
        return;
      }
      clearInterval(wait);
      if (current.status === null) power(ctx, current, 'start');
    }, 20);
    ctx.timers.add(wait as unknown as NodeJS.Timeout);
  }
  ctx.state.save();
  return ok(appServer(ctx, server, includes(req)), 201);
}

function updateDetails(ctx: Ctx, req: Req, id: string): Answer {
  const server = serverOf(ctx, id);
  validate(req.body, {
    external_id: ['sometimes', 'nullable', 'string', 'between:1,191', uniqueServerExternal(ctx, server.id)],
    name: ['required', 'string', 'min:1', 'max:191'],
    user: ['required', 'integer', exists((uid) => ctx.state.users.has(uid))],
    description: ['sometimes', 'nullable', 'string'],
  });
  server.name = String(req.body.name);
  server.ownerId = Number(req.body.user);
  if ('external_id' in req.body) server.externalId = str(req.body, 'external_id') ?? null;
  if ('description' in req.body) server.description = str(req.body, 'description') ?? '';
  server.updatedAt = atom();
  ctx.state.save();
  return ok(appServer(ctx, server, includes(req)));
}

function updateBuild(ctx: Ctx, req: Req, id: string): Answer {
  const server = serverOf(ctx, id);
  const body = req.body;
  const limits = (typeof body.limits === 'object' && body.limits !== null ? body.limits : {}) as Record<
    string,
    unknown
  >;
  const pick = (key: string) => (limits[key] !== undefined ? limits[key] : body[key]);
  const data = {
    ...body,
    memory: pick('memory'),
    swap: pick('swap'),
    disk: pick('disk'),
    io: pick('io'),
    cpu: pick('cpu'),
    threads: pick('threads'),
  };
  validate(data, {
    allocation: ['required', 'bail', exists((aid) => ctx.state.allocations.has(aid))],
    oom_disabled: ['sometimes', 'boolean'],
    memory: ['required', 'numeric', 'min:0'],
    swap: ['required', 'numeric', 'min:-1'],
    io: ['required', 'numeric', 'between:10,1000'],
    cpu: ['required', 'numeric', 'min:0'],
    threads: ['nullable', 'regex:/^[0-9-,]+$/'],
    disk: ['required', 'numeric', 'min:0'],
    add_allocations: ['bail', 'array'],
    remove_allocations: ['bail', 'array'],
    feature_limits: ['required', 'array'],
    'feature_limits.databases': ['present', 'nullable', 'integer', 'min:0'],
    'feature_limits.allocations': ['sometimes', 'nullable', 'integer', 'min:0'],
    'feature_limits.backups': ['present', 'nullable', 'integer', 'min:0'],
  });
  const adds = Array.isArray(body.add_allocations) ? body.add_allocations.map(Number) : [];
  const removes = Array.isArray(body.remove_allocations) ? body.remove_allocations.map(Number) : [];
  for (const aid of adds) {
    const a = ctx.state.allocations.get(aid);
    if (!a || (a.serverId !== null && a.serverId !== server.id) || a.nodeId !== server.nodeId) continue;
    a.serverId = server.id;
  }
  const primary = Number(body.allocation);
  for (const aid of removes) {
    const a = ctx.state.allocations.get(aid);
    if (!a || a.serverId !== server.id) continue;
    if (aid === primary) {
      throw display(
        'You are attempting to delete the default allocation for this server but there is no fallback allocation to use.',
      );
    }
    a.serverId = null;
    a.notes = null;
  }
  if (ctx.state.allocations.get(primary)?.serverId !== server.id) {
    throw display('The requested default allocation is not currently assigned to this server.');
  }
  server.allocationId = primary;
  server.memory = Math.floor(num(data.memory));
  server.swap = Math.floor(num(data.swap));
  server.disk = Math.floor(num(data.disk));
  server.io = Math.floor(num(data.io));
  server.cpu = Math.floor(num(data.cpu));
  server.threads = typeof data.threads === 'string' && data.threads !== '' ? data.threads : null;
  if ('oom_disabled' in body) server.oomDisabled = body.oom_disabled === true || body.oom_disabled === 1;
  const feature = body.feature_limits as Record<string, unknown>;
  server.databaseLimit = nullableInt(feature.databases);
  if ('allocations' in feature) server.allocationLimit = nullableInt(feature.allocations);
  server.backupLimit = nullableInt(feature.backups);
  server.updatedAt = atom();
  ctx.state.save();
  return ok(appServer(ctx, server, includes(req)));
}

function updateStartup(ctx: Ctx, req: Req, id: string): Answer {
  const server = serverOf(ctx, id);
  const body = req.body;
  validate(body, {
    startup: ['sometimes', 'string'],
    environment: ['present', 'array'],
    egg: ['sometimes', exists((eid) => ctx.state.eggs.has(eid))],
    image: ['sometimes', 'string', 'max:191', IMAGE],
    skip_scripts: ['present', 'boolean'],
  });
  const eggId = body.egg !== undefined ? Number(body.egg) : server.eggId;
  const env = (typeof body.environment === 'object' && body.environment !== null ? body.environment : {}) as Record<
    string,
    unknown
  >;
  const failures = checkEnvironment(ctx, eggId, env, false);
  if (failures.length > 0) throw PteroError.validation(failures);
  if (eggId !== server.eggId) {
    server.eggId = eggId;
    server.nestId = ctx.state.eggs.get(eggId)?.nestId ?? server.nestId;
  }
  server.environment = { ...server.environment, ...envStrings(ctx, eggId, env) };
  if (typeof body.startup === 'string') server.startup = body.startup;
  if (typeof body.image === 'string') server.image = body.image;
  server.skipScripts = body.skip_scripts === true || body.skip_scripts === 1;
  server.updatedAt = atom();
  ctx.state.save();
  return ok(appServer(ctx, server, includes(req)));
}

function suspend(ctx: Ctx, id: string, on: boolean): Answer {
  const server = serverOf(ctx, id);
  if ((server.status === 'suspended') === on) return NO_CONTENT;
  if (ctx.faults.wingsDown) throw wingsUnreachable();
  server.status = on ? 'suspended' : null;
  if (on) power(ctx, server, 'kill');
  server.updatedAt = atom();
  activity(ctx, null, server, on ? 'server:suspended' : 'server:unsuspended');
  ctx.state.save();
  return NO_CONTENT;
}

function reinstall(ctx: Ctx, id: string): Answer {
  const server = serverOf(ctx, id);
  if (ctx.faults.wingsDown) throw wingsUnreachable();
  install(ctx, server, true);
  return NO_CONTENT;
}

function deleteServer(ctx: Ctx, id: string, force: boolean): Answer {
  const server = serverOf(ctx, id);
  if (ctx.faults.wingsDown && !force) throw wingsUnreachable();
  power(ctx, server, 'kill');
  emit(ctx, server, 'deleted');
  ctx.state.deleteServer(server.id);
  ctx.state.save();
  return NO_CONTENT;
}

function nodeAllocations(ctx: Ctx, req: Req, nodeId: string): Answer {
  const node = ctx.state.nodes.get(Number(nodeId));
  if (!node) throw notFound();
  const rows = applyFilters(
    [...ctx.state.allocations.values()].filter((a) => a.nodeId === node.id),
    req,
    {
      ip: (a, v) => a.ip === v,
      port: (a, v) => String(a.port) === v,
      ip_alias: (a, v) => like(a.alias, v),
      server_id: (a, v) => (/^\d+$/.test(v) ? a.serverId === Number(v) : a.serverId === null),
    },
  );
  // An empty filter[server_id] (or a non-number) selects the unassigned ones.
  const sid = filters(req.query).get('server_id');
  const picked = sid === '' ? rows.filter((a) => a.serverId === null) : rows;
  return paged(ctx, req, picked.map(appAllocation));
}

function nest(ctx: Ctx, id: string) {
  const n = ctx.state.nests.get(Number(id));
  if (!n) throw notFound();
  return n;
}

function nestItem(n: { id: number; uuid: string; author: string; name: string; description: string }): unknown {
  return item('nest', { ...n, created_at: atom(0), updated_at: atom(0) });
}

export const APPLICATION_ROUTES: Route[] = [
  [
    'GET',
    new RegExp(`^${A}/users$`),
    (ctx, req) =>
      paged(
        ctx,
        req,
        sortRows(
          applyFilters([...ctx.state.users.values()], req, {
            email: (u, v) => like(u.email, v),
            uuid: (u, v) => like(u.uuid, v),
            username: (u, v) => like(u.username, v),
            external_id: (u, v) => like(u.externalId, v),
          }),
          req,
        ).map(appUser),
      ),
  ],
  [
    'GET',
    new RegExp(`^${A}/users/external/([^/]+)$`),
    (ctx, _req, m) => {
      const user = [...ctx.state.users.values()].find((u) => u.externalId === decodeURIComponent(m[1] ?? ''));
      if (!user) throw notFound();
      return ok(appUser(user));
    },
  ],
  ['GET', new RegExp(`^${A}/users/([^/]+)$`), (ctx, _req, m) => ok(appUser(userOf(ctx, m[1] ?? '')))],
  ['POST', new RegExp(`^${A}/users$`), (ctx, req) => createUser(ctx, req)],
  ['PATCH', new RegExp(`^${A}/users/([^/]+)$`), (ctx, req, m) => updateUser(ctx, req, m[1] ?? '')],
  ['DELETE', new RegExp(`^${A}/users/([^/]+)$`), (ctx, _req, m) => deleteUser(ctx, m[1] ?? '')],
  [
    'GET',
    new RegExp(`^${A}/servers$`),
    (ctx, req) =>
      paged(
        ctx,
        req,
        sortRows(
          applyFilters([...ctx.state.servers.values()], req, {
            uuid: (s, v) => like(s.uuid, v),
            uuidShort: (s, v) => like(s.identifier, v),
            name: (s, v) => like(s.name, v),
            description: (s, v) => like(s.description, v),
            image: (s, v) => like(s.image, v),
            external_id: (s, v) => like(s.externalId, v),
          }),
          req,
        ).map((s) => appServer(ctx, s, includes(req))),
      ),
  ],
  [
    'GET',
    new RegExp(`^${A}/servers/external/([^/]+)$`),
    (ctx, req, m) => {
      const server = [...ctx.state.servers.values()].find((s) => s.externalId === decodeURIComponent(m[1] ?? ''));
      if (!server) throw notFound();
      return ok(appServer(ctx, server, includes(req)));
    },
  ],
  [
    'GET',
    new RegExp(`^${A}/servers/([^/]+)$`),
    (ctx, req, m) => ok(appServer(ctx, serverOf(ctx, m[1] ?? ''), includes(req))),
  ],
  ['POST', new RegExp(`^${A}/servers$`), (ctx, req) => createServer(ctx, req)],
  ['PATCH', new RegExp(`^${A}/servers/([^/]+)/details$`), (ctx, req, m) => updateDetails(ctx, req, m[1] ?? '')],
  ['PATCH', new RegExp(`^${A}/servers/([^/]+)/build$`), (ctx, req, m) => updateBuild(ctx, req, m[1] ?? '')],
  ['PATCH', new RegExp(`^${A}/servers/([^/]+)/startup$`), (ctx, req, m) => updateStartup(ctx, req, m[1] ?? '')],
  ['POST', new RegExp(`^${A}/servers/([^/]+)/suspend$`), (ctx, _req, m) => suspend(ctx, m[1] ?? '', true)],
  ['POST', new RegExp(`^${A}/servers/([^/]+)/unsuspend$`), (ctx, _req, m) => suspend(ctx, m[1] ?? '', false)],
  ['POST', new RegExp(`^${A}/servers/([^/]+)/reinstall$`), (ctx, _req, m) => reinstall(ctx, m[1] ?? '')],
  ['DELETE', new RegExp(`^${A}/servers/([^/]+)/force$`), (ctx, _req, m) => deleteServer(ctx, m[1] ?? '', true)],
  ['DELETE', new RegExp(`^${A}/servers/([^/]+)$`), (ctx, _req, m) => deleteServer(ctx, m[1] ?? '', false)],
  [
    'GET',
    new RegExp(`^${A}/nodes$`),
    (ctx, req) =>
      paged(
        ctx,
        req,
        [...ctx.state.nodes.keys()].map((id) => item('node', appNodeAttributes(ctx, id))),
      ),
  ],
  [
    'GET',
    new RegExp(`^${A}/nodes/(\\d+)$`),
    (ctx, _req, m) => {
      if (!ctx.state.nodes.has(Number(m[1]))) throw notFound();
      return ok(item('node', appNodeAttributes(ctx, Number(m[1]))));
    },
  ],
  ['GET', new RegExp(`^${A}/nodes/([^/]+)/allocations$`), (ctx, req, m) => nodeAllocations(ctx, req, m[1] ?? '')],
  [
    'GET',
    new RegExp(`^${A}/locations$`),
    (ctx, req) =>
      paged(
        ctx,
        req,
        [...ctx.state.locations.values()].map((l) =>
          item('location', { ...l, updated_at: atom(0), created_at: atom(0) }),
        ),
      ),
  ],
  [
    'GET',
    new RegExp(`^${A}/locations/(\\d+)$`),
    (ctx, _req, m) => {
      const l = ctx.state.locations.get(Number(m[1]));
      if (!l) throw notFound();
      return ok(item('location', { ...l, updated_at: atom(0), created_at: atom(0) }));
    },
  ],
  ['GET', new RegExp(`^${A}/nests$`), (ctx, req) => paged(ctx, req, [...ctx.state.nests.values()].map(nestItem))],
  ['GET', new RegExp(`^${A}/nests/([^/]+)$`), (ctx, _req, m) => ok(nestItem(nest(ctx, m[1] ?? '')))],
  [
    'GET',
    new RegExp(`^${A}/nests/([^/]+)/eggs$`),
    (ctx, req, m) => {
      const n = nest(ctx, m[1] ?? '');
      return ok(
        list([...ctx.state.eggs.values()].filter((e) => e.nestId === n.id).map((e) => appEgg(e, includes(req)))),
      );
    },
  ],
  [
    'GET',
    new RegExp(`^${A}/nests/([^/]+)/eggs/([^/]+)$`),
    (ctx, req, m) => {
      const n = nest(ctx, m[1] ?? '');
      const egg = ctx.state.eggs.get(Number(m[2]));
      if (!egg || egg.nestId !== n.id) throw notFound();
      return ok(appEgg(egg, includes(req)));
    },
  ],
];

// The Client API's core server routes (upstreams.md §1.6): overview, resources, activity,
// network allocations, websocket credentials, command, power, settings and startup; plus the
// server list and the account at /api/client.

import type { Ctx, Req } from './context.ts';
import { command, install, type PowerSignal, power, stats } from './game.ts';
import {
  type Answer,
  badRequest,
  display,
  filters,
  NO_CONTENT,
  notFound,
  ok,
  PteroError,
  pageParams,
  pagination,
  str,
} from './http.ts';
import { signJwt } from './jwt.ts';
import { log, need, route, type ServerRoute, userPermissions } from './routes.ts';
import { atom, type Server } from './state.ts';
import {
  clientActivity,
  clientAllocation,
  clientEggVariable,
  clientServer,
  clientUser,
  invocation,
  item,
  list,
} from './transform.ts';
import { validate } from './validate.ts';

function includes(req: Req): Set<string> {
  return new Set(
    (req.query.get('include') ?? '')
      .split(',')
      .map((s) => s.trim())
      .filter(Boolean),
  );
}

/** Servers the user owns or is a subuser of. */
function accessible(ctx: Ctx, userId: number): Set<number> {
  const out = new Set<number>();
  for (const s of ctx.state.servers.values()) if (s.ownerId === userId) out.add(s.id);
  for (const su of ctx.state.subusers.values()) if (su.userId === userId) out.add(su.serverId);
  return out;
}

/** GET /api/client: the user's servers (`type` owner | admin | admin-all), paginated. */
export function listServers(ctx: Ctx, req: Req): Answer {
  const type = req.query.get('type');
  const mine = accessible(ctx, req.user.id);
  let rows = [...ctx.state.servers.values()];
  if (type === 'admin' || type === 'admin-all') {
    if (!req.user.rootAdmin) rows = [];
    else if (type === 'admin') rows = rows.filter((s) => !mine.has(s.id));
  } else if (type === 'owner') {
    rows = rows.filter((s) => s.ownerId === req.user.id);
  } else {
    rows = rows.filter((s) => mine.has(s.id));
  }
  for (const [name, value] of filters(req.query)) {
    const v = value.toLowerCase();
    if (v === '') continue;
    const pick: Record<string, (s: Server) => boolean> = {
      uuid: (s) => s.uuid.includes(v),
      name: (s) => s.name.toLowerCase().includes(v),
      description: (s) => s.description.toLowerCase().includes(v),
      external_id: (s) => (s.externalId ?? '').toLowerCase().includes(v),
      '*': (s) =>
        s.uuid.startsWith(v) ||
        s.identifier.startsWith(v) ||
        s.name.toLowerCase().includes(v) ||
        [...ctx.state.allocations.values()].some(
          (a) => a.serverId === s.id && `${a.alias ?? a.ip}:${a.port}`.includes(v),
        ),
    };
    const test = pick[name];
    if (!test) {
      throw new PteroError(
        400,
        'InvalidFilterQuery',
        `Requested filter(s) \`${name}\` are not allowed. Allowed filter(s) are \`uuid, name, description, external_id, *\`.`,
      );
    }
    rows = rows.filter(test);
  }
  const { page, perPage } = pageParams(req.query, 50, 100);
  const slice = rows.slice((page - 1) * perPage, page * perPage);
  return ok({
    ...list(slice.map((s) => clientServer(ctx, s, req.user, includes(req)))),
    meta: { pagination: pagination(ctx.panelUrl, req.path, req.query, rows.length, slice.length, perPage, page) },
  });
}

export function account(req: Req): Answer {
  return ok(
    item('user', {
      id: req.user.id,
      admin: req.user.rootAdmin,
      username: req.user.username,
      email: req.user.email,
      first_name: req.user.firstName,
      last_name: req.user.lastName,
      language: req.user.language,
    }),
  );
}

/** A signed Wings JWT for this user and server. */
export function nodeToken(
  ctx: Ctx,
  req: Req,
  server: Server,
  ttlSeconds: number,
  claims: Record<string, unknown>,
): string {
  const node = ctx.state.nodes.get(server.nodeId);
  return signJwt(
    node?.daemonToken ?? '',
    { issuer: ctx.panelUrl, audience: ctx.wingsUrl, ttlSeconds, identifiedBy: `${req.user.id}${server.uuid}` },
    { ...claims, user_uuid: req.user.uuid, user_id: req.user.id },
  );
}

function activityPage(ctx: Ctx, req: Req, server: Server): Answer {
  need(ctx, req, server, 'activity.read');
  let rows = ctx.state.activity.filter((a) => a.serverId === server.id);
  const wanted = filters(req.query).get('event');
  if (wanted) rows = rows.filter((a) => a.event.includes(wanted));
  const sort = req.query.get('sort') ?? '-timestamp';
  rows = [...rows].sort((a, b) => a.id - b.id);
  if (sort === '-timestamp') rows.reverse();
  const { page, perPage } = pageParams(req.query, 25, 100);
  const slice = rows.slice((page - 1) * perPage, page * perPage);
  const actor = includes(req).has('actor');
  return ok({
    ...list(slice.map((a) => clientActivity(ctx, a, actor))),
    meta: { pagination: pagination(ctx.panelUrl, req.path, req.query, rows.length, slice.length, perPage, page) },
  });
}

function allocationOf(ctx: Ctx, server: Server, id: string) {
  const a = /^\d+$/.test(id) ? ctx.state.allocations.get(Number(id)) : undefined;
  if (!a || a.serverId !== server.id) throw notFound();
  return a;
}

const POWER_PERMISSION: Record<PowerSignal, string> = {
  start: 'control.start',
  stop: 'control.stop',
  restart: 'control.restart',
  kill: 'control.stop',
};

function startupMeta(ctx: Ctx, server: Server): Record<string, unknown> {
  return {
    startup_command: invocation(ctx, server),
    docker_images: ctx.state.eggs.get(server.eggId)?.dockerImages ?? {},
    raw_startup_command: server.startup,
  };
}

export const CORE_ROUTES: ServerRoute[] = [
  route('GET', /^$/, (ctx, req, server) =>
    ok({
      ...(clientServer(ctx, server, req.user, includes(req)) as object),
      meta: {
        is_server_owner: req.user.id === server.ownerId,
        user_permissions: userPermissions(ctx, server, req.user.id),
      },
    }),
  ),
  route(
    'GET',
    /^\/resources$/,
    (ctx, _req, server) => {
      const s = stats(ctx, server);
      return ok(
        item('stats', {
          current_state: s.state,
          is_suspended: server.status === 'suspended',
          resources: {
            memory_bytes: s.memory_bytes,
            cpu_absolute: s.cpu_absolute,
            disk_bytes: s.disk_bytes,
            network_rx_bytes: s.network.rx_bytes,
            network_tx_bytes: s.network.tx_bytes,
            uptime: s.uptime,
          },
        }),
      );
    },
    true,
  ),
  route('GET', /^\/activity$/, (ctx, req, server) => activityPage(ctx, req, server)),
  route('GET', /^\/network\/allocations$/, (ctx, req, server) => {
    need(ctx, req, server, 'allocation.read');
    return ok(
      list(
        [...ctx.state.allocations.values()]
          .filter((a) => a.serverId === server.id)
          .map((a) => clientAllocation(a, server)),
      ),
    );
  }),
  route('POST', /^\/network\/allocations$/, (ctx, req, server) => {
    need(ctx, req, server, 'allocation.create');
    const count = [...ctx.state.allocations.values()].filter((a) => a.serverId === server.id).length;
    if (server.allocationLimit !== null && count >= server.allocationLimit) {
      throw display('Cannot assign additional allocations to this server: limit has been reached.');
    }
    const free = [...ctx.state.allocations.values()].find((a) => a.nodeId === server.nodeId && a.serverId === null);
    if (!free) throw display('No allocations available for this server.', 'NoAutoAllocationSpaceAvailableException');
    free.serverId = server.id;
    log(ctx, req, server, 'server:allocation.create', { allocation: `${free.ip}:${free.port}` });
    ctx.state.save();
    return ok(clientAllocation(free, server));
  }),
  route('POST', /^\/network\/allocations\/([^/]+)$/, (ctx, req, server, m) => {
    need(ctx, req, server, 'allocation.update');
    const a = allocationOf(ctx, server, m[1] ?? '');
    validate(req.body, { notes: ['present', 'nullable', 'string', 'max:255'] });
    a.notes = str(req.body, 'notes') ?? null;
    log(ctx, req, server, 'server:allocation.notes', { allocation: `${a.ip}:${a.port}`, new: a.notes });
    ctx.state.save();
    return ok(clientAllocation(a, server));
  }),
  route('POST', /^\/network\/allocations\/([^/]+)\/primary$/, (ctx, req, server, m) => {
    need(ctx, req, server, 'allocation.update');
    const a = allocationOf(ctx, server, m[1] ?? '');
    server.allocationId = a.id;
    log(ctx, req, server, 'server:allocation.primary', { allocation: `${a.ip}:${a.port}` });
    ctx.state.save();
    return ok(clientAllocation(a, server));
  }),
  route('DELETE', /^\/network\/allocations\/([^/]+)$/, (ctx, req, server, m) => {
    need(ctx, req, server, 'allocation.delete');
    const a = allocationOf(ctx, server, m[1] ?? '');
    if (!server.allocationLimit) {
      throw display('You cannot delete allocations for this server: no allocation limit is set.');
    }
    if (a.id === server.allocationId) throw display('You cannot delete the primary allocation for this server.');
    a.serverId = null;
    a.notes = null;
    log(ctx, req, server, 'server:allocation.delete', { allocation: `${a.ip}:${a.port}` });
    ctx.state.save();
    return NO_CONTENT;
  }),
  route('GET', /^\/websocket$/, (ctx, req, server) => {
    if (!userPermissions(ctx, server, req.user.id).some((p) => p === '*' || p === 'websocket.connect')) {
      throw new PteroError(
        403,
        'HttpForbiddenException',
        "You do not have permission to connect to this server's websocket.",
      );
    }
    const token = nodeToken(ctx, req, server, ctx.delays.tokenTtlSeconds, {
      server_uuid: server.uuid,
      permissions: userPermissions(ctx, server, req.user.id),
    });
    const socket = `${ctx.wingsUrl.replace(/^http/, 'ws')}/api/servers/${server.uuid}/ws`;
    return ok({ data: { token, socket } });
  }),
  route(
    'POST',
    /^\/command$/,
    (ctx, req, server) => {
      need(ctx, req, server, 'control.console');
      validate(req.body, { command: ['required', 'string', 'min:1'] });
      if (ctx.state.runtimeOf(server.id).state === 'offline') {
        throw new PteroError(502, 'HttpException', 'Server must be online in order to send commands.');
      }
      const line = String(req.body.command);
      command(ctx, server, line);
      log(ctx, req, server, 'server:console.command', { command: line });
      return NO_CONTENT;
    },
    true,
  ),
  route(
    'POST',
    /^\/power$/,
    (ctx, req, server) => {
      validate(req.body, { signal: ['required', 'string', 'in:start,stop,restart,kill'] });
      const signal = String(req.body.signal) as PowerSignal;
      need(ctx, req, server, POWER_PERMISSION[signal]);
      // Wings answers 202 at once and works in the background: a busy lock or a start of a
      // running server is silently ignored there.
      power(ctx, server, signal);
      log(ctx, req, server, `server:power.${signal}`);
      return NO_CONTENT;
    },
    true,
  ),
  route('POST', /^\/settings\/rename$/, (ctx, req, server) => {
    need(ctx, req, server, 'settings.rename');
    validate(req.body, { name: ['required', 'string', 'min:1', 'max:191'], description: ['string', 'nullable'] });
    const name = String(req.body.name);
    const description = 'description' in req.body ? String(req.body.description ?? '') : server.description;
    if (name !== server.name) log(ctx, req, server, 'server:settings.rename', { old: server.name, new: name });
    if (description !== server.description) {
      log(ctx, req, server, 'server:settings.description', { old: server.description, new: description });
    }
    server.name = name;
    server.description = description;
    server.updatedAt = atom();
    ctx.state.save();
    return NO_CONTENT;
  }),
  route(
    'POST',
    /^\/settings\/reinstall$/,
    (ctx, req, server) => {
      need(ctx, req, server, 'settings.reinstall');
      install(ctx, server, true);
      log(ctx, req, server, 'server:reinstall');
      return ok([], 202);
    },
    true,
  ),
  route('PUT', /^\/settings\/docker-image$/, (ctx, req, server) => {
    need(ctx, req, server, 'startup.docker-image');
    const images = Object.values(ctx.state.eggs.get(server.eggId)?.dockerImages ?? {});
    validate(req.body, { docker_image: ['required', 'string', `in:${images.join(',')}`] });
    if (!images.includes(server.image)) {
      throw badRequest("This server's Docker image has been manually set by an administrator and cannot be updated.");
    }
    const image = String(req.body.docker_image);
    if (image !== server.image) log(ctx, req, server, 'server:startup.image', { old: server.image, new: image });
    server.image = image;
    ctx.state.save();
    return NO_CONTENT;
  }),
  route('GET', /^\/startup$/, (ctx, req, server) => {
    need(ctx, req, server, 'startup.read');
    const egg = ctx.state.eggs.get(server.eggId);
    return ok({
      ...list((egg?.variables ?? []).filter((v) => v.userViewable).map((v) => clientEggVariable(v, server))),
      meta: startupMeta(ctx, server),
    });
  }),
  route('PUT', /^\/startup\/variable$/, (ctx, req, server) => {
    need(ctx, req, server, 'startup.update');
    validate(req.body, { key: ['required', 'string'], value: ['present'] });
    const key = String(req.body.key);
    const variable = ctx.state.eggs.get(server.eggId)?.variables.find((v) => v.envVariable === key);
    if (!variable?.userViewable) {
      throw badRequest('The environment variable you are trying to edit does not exist.');
    }
    if (!variable.userEditable) throw badRequest('The environment variable you are trying to edit is read-only.');
    validate(req.body, { value: variable.rules });
    const raw = req.body.value;
    const value = raw === null || raw === undefined ? '' : typeof raw === 'boolean' ? (raw ? '1' : '0') : String(raw);
    const original = server.environment[key] ?? null;
    server.environment[key] = value;
    log(ctx, req, server, 'server:startup.edit', { variable: key, old: original, new: raw ?? null });
    ctx.state.save();
    return ok({ ...(clientEggVariable(variable, server) as object), meta: startupMeta(ctx, server) });
  }),
];

export { clientUser };

// The fake game servers Wings runs: install (status "installing" for installDelayMs, then null,
// or install_failed when the knob says so, seeding a fresh Paper/Bedrock/Valheim tree), the power
// state machine offline → starting → running → stopping → offline with Wings' power lock, the
// console (Paper-like boot lines, the EULA check, say/list/help/op/stop) and the stats it reports.

import { randomInt } from 'node:crypto';
import { activity, type Ctx, emit, later } from './context.ts';
import { takeCount } from './faults.ts';
import { diskBytes, read, write } from './files.ts';
import type { Egg, PowerState, Server } from './state.ts';

const DAEMON = '\u001b[1m\u001b[33mcontainer@pterodactyl~ \u001b[0m';

function clock(): string {
  return new Date().toISOString().slice(11, 19);
}

function eggOf(ctx: Ctx, server: Server): Egg | undefined {
  return ctx.state.eggs.get(server.eggId);
}

function portOf(ctx: Ctx, server: Server): number {
  return ctx.state.allocations.get(server.allocationId)?.port ?? 25565;
}

function serverProperties(port: number): string {
  return [
    '#Minecraft server properties',
    `#${new Date().toUTCString()}`,
    'allow-flight=false',
    'allow-nether=true',
    'broadcast-console-to-ops=true',
    'difficulty=easy',
    'enable-command-block=false',
    'enable-query=false',
    'enable-rcon=false',
    'enforce-whitelist=false',
    'gamemode=survival',
    'generate-structures=true',
    'hardcore=false',
    'level-name=world',
    'level-seed=',
    'level-type=minecraft\\:normal',
    'max-players=20',
    'max-world-size=29999984',
    'motd=A Minecraft Server',
    'online-mode=true',
    'pvp=true',
    `query.port=${port}`,
    'server-ip=0.0.0.0',
    `server-port=${port}`,
    'simulation-distance=10',
    'spawn-protection=16',
    'view-distance=10',
    'white-list=false',
    '',
  ].join('\n');
}

function eulaFile(): string {
  return [
    '#By changing the setting below to TRUE you are indicating your agreement to our EULA (https://aka.ms/MinecraftEULA).',
    `#${new Date().toUTCString()}`,
    'eula=false',
    '',
  ].join('\n');
}

/** Bytes that look like a jar: a zip header, NULs and a manifest name. */
function fakeJar(): Buffer {
  const head = Buffer.from([0x50, 0x4b, 0x03, 0x04, 0x14, 0x00, 0x08, 0x08, 0x08, 0x00]);
  const body = Buffer.alloc(2048, 0);
  body.write('META-INF/MANIFEST.MF', 20, 'ascii');
  body.write('Main-Class: io.papermc.paperclip.Main', 200, 'ascii');
  for (let i = 400; i < body.length; i += 7) body[i] = (i * 31) & 0xff;
  return Buffer.concat([head, body]);
}

/** Seed the files a fresh install leaves (a reinstall keeps server.properties and eula.txt). */
function seedFiles(ctx: Ctx, server: Server, reinstall: boolean): void {
  const tree = ctx.state.treeOf(server.id);
  const egg = eggOf(ctx, server);
  const port = portOf(ctx, server);
  const keep = (path: string, content: string | Buffer) => {
    if (reinstall && tree.has(path)) return;
    write(tree, path, typeof content === 'string' ? Buffer.from(content) : content);
  };
  if (egg?.game === 'bedrock') {
    write(
      tree,
      'bedrock_server',
      Buffer.concat([Buffer.from([0x7f, 0x45, 0x4c, 0x46, 2, 1, 1, 0]), Buffer.alloc(1024)]),
    );
    (tree.get('bedrock_server') ?? { mode: 0 }).mode = 0o755;
    keep('server.properties', `server-name=Dedicated Server\ngamemode=survival\nmax-players=10\nserver-port=${port}\n`);
    keep('worlds/.keep', '');
    return;
  }
  if (egg?.game === 'valheim') {
    write(
      tree,
      'valheim_server.x86_64',
      Buffer.concat([Buffer.from([0x7f, 0x45, 0x4c, 0x46, 2, 1, 1, 0]), Buffer.alloc(1024)]),
    );
    (tree.get('valheim_server.x86_64') ?? { mode: 0 }).mode = 0o755;
    keep('steamapps/appmanifest_896660.acf', '"AppState"\n{\n\t"appid"\t\t"896660"\n}\n');
    return;
  }
  const jar = server.environment.SERVER_JARFILE || 'server.jar';
  write(tree, jar, fakeJar());
  keep('server.properties', serverProperties(port));
  keep('eula.txt', eulaFile());
  keep('logs/latest.log', `[${clock()}] [Server thread/INFO]: Install completed\n`);
  if (!tree.has('plugins')) write(tree, 'plugins/.paper-remapped/.keep', Buffer.alloc(0));
}

/** Run the install script: `installing` for installDelayMs, then null or (re)install_failed. */
export function install(ctx: Ctx, server: Server, reinstall: boolean): void {
  server.status = 'installing';
  server.installedAt = null;
  ctx.state.save();
  const rt = ctx.state.runtimeOf(server.id);
  if (rt.state !== 'offline') setPower(ctx, server, 'offline');
  const fail = takeCount(ctx.faults, 'failInstalls');
  emit(ctx, server, 'install started', '');
  const lines = server.skipScripts
    ? ['Skipping installation script (skip_scripts is set).']
    : [
        'Pulling Docker container image, this could take a few minutes to complete...',
        'Finished pulling Docker container image',
        `Downloading ${eggOf(ctx, server)?.name ?? 'server'} files...`,
      ];
  for (const line of lines) emit(ctx, server, 'install output', line);
  const started = server.id;
  later(ctx, ctx.delays.installMs, () => {
    const current = ctx.state.servers.get(started);
    if (current?.status !== 'installing') return;
    if (fail) {
      emit(ctx, current, 'install output', 'Error: install script exited with code 1');
      current.status = reinstall ? 'reinstall_failed' : 'install_failed';
    } else {
      if (!current.skipScripts) seedFiles(ctx, current, reinstall);
      emit(ctx, current, 'install output', 'Installation completed.');
      current.status = null;
      current.installedAt = new Date().toISOString();
    }
    current.updatedAt = new Date().toISOString().replace(/\.\d{3}Z$/, '+00:00');
    emit(ctx, current, 'install completed', '');
    ctx.state.save();
  });
}

function setPower(ctx: Ctx, server: Server, state: PowerState): void {
  const rt = ctx.state.runtimeOf(server.id);
  if (rt.state === state) return;
  rt.state = state;
  if (state === 'starting') rt.startedAt = Date.now();
  if (state === 'offline') {
    rt.startedAt = null;
    rt.players = [];
  }
  emit(ctx, server, 'status', state);
}

/** Print a console line (Wings' `console output`), also appended to logs/latest.log for Paper. */
export function consoleOut(ctx: Ctx, server: Server, line: string, log = true): void {
  ctx.state.consoleLine(server.id, line);
  emit(ctx, server, 'console output', line);
  if (log && eggOf(ctx, server)?.game === 'paper' && !line.startsWith(DAEMON)) {
    const tree = ctx.state.treeOf(server.id);
    let previous: Buffer = Buffer.alloc(0);
    try {
      previous = read(tree, 'logs/latest.log');
    } catch {}
    write(tree, 'logs/latest.log', Buffer.concat([previous, Buffer.from(`${line}\n`)]));
  }
}

function info(ctx: Ctx, server: Server, text: string): void {
  consoleOut(ctx, server, `[${clock()} INFO]: ${text}`);
}

function maxPlayers(ctx: Ctx, server: Server): number {
  try {
    const text = read(ctx.state.treeOf(server.id), 'server.properties').toString('utf8');
    const m = /^max-players=(\d+)/m.exec(text);
    if (m?.[1]) return Number(m[1]);
  } catch {}
  return 20;
}

function eulaAccepted(ctx: Ctx, server: Server): boolean {
  try {
    return /^\s*eula\s*=\s*true\s*$/im.test(read(ctx.state.treeOf(server.id), 'eula.txt').toString('utf8'));
  } catch {
    return false;
  }
}

export type PowerSignal = 'start' | 'stop' | 'restart' | 'kill';

/**
 * Handle a power action as Wings does. Returns 'locked' when another action holds the power lock
 * (the websocket answers a daemon error; the HTTP API has already answered 202/204), 'running'
 * when start is a no-op, else 'ok'.
 */
export function power(ctx: Ctx, server: Server, signal: PowerSignal): 'ok' | 'locked' | 'running' {
  const rt = ctx.state.runtimeOf(server.id);
  if (signal === 'kill') {
    rt.busy = false;
    if (rt.state !== 'offline') {
      setPower(ctx, server, 'offline');
      consoleOut(ctx, server, `${DAEMON}Server marked as offline...`, false);
    }
    return 'ok';
  }
  if (rt.busy) return 'locked';
  if (signal === 'start') {
    if (rt.state !== 'offline') return 'running';
    boot(ctx, server);
    return 'ok';
  }
  if (signal === 'stop') {
    if (rt.state === 'offline') return 'ok';
    shutdown(ctx, server, () => {});
    return 'ok';
  }
  if (rt.state === 'offline') boot(ctx, server);
  else shutdown(ctx, server, () => boot(ctx, server));
  return 'ok';
}

function boot(ctx: Ctx, server: Server): void {
  const rt = ctx.state.runtimeOf(server.id);
  const egg = eggOf(ctx, server);
  rt.busy = true;
  setPower(ctx, server, 'starting');
  for (const text of [
    'Checking server disk space usage, this could take a few seconds...',
    'Updating process configuration files...',
    'Ensuring file permissions are set correctly, this could take a few seconds...',
    'Pulling Docker container image, this could take a few minutes to complete...',
    'Finished pulling Docker container image',
  ]) {
    consoleOut(ctx, server, `${DAEMON}${text}`, false);
  }
  const startup = (egg?.startup ?? '').replace(/\{\{(\w+)\}\}/g, (_, k: string) =>
    k === 'SERVER_PORT' ? String(portOf(ctx, server)) : (server.environment[k] ?? ''),
  );
  consoleOut(ctx, server, `:/home/container$ ${startup}`, false);
  const runId = rt.startedAt;
  const step = Math.max(1, Math.floor(ctx.delays.startMs / 4));
  const alive = () => ctx.state.servers.has(server.id) && rt.startedAt === runId && rt.state === 'starting';
  later(ctx, step, () => {
    rt.busy = false;
    if (!alive()) return;
    if (egg?.game === 'paper' || egg === undefined) {
      consoleOut(ctx, server, 'Starting org.bukkit.craftbukkit.Main', false);
      info(ctx, server, 'Environment: Environment[sessionHost=https://sessionserver.mojang.com]');
      info(ctx, server, 'Loaded 1174 recipes');
      if (!eulaAccepted(ctx, server)) {
        consoleOut(ctx, server, `[${clock()} WARN]: Failed to load eula.txt`);
        info(ctx, server, 'You need to agree to the EULA in order to run the server. Go to eula.txt for more info.');
        later(ctx, step, () => {
          if (rt.startedAt !== runId || rt.state === 'offline') return;
          setPower(ctx, server, 'offline');
          consoleOut(ctx, server, `${DAEMON}Server marked as offline...`, false);
        });
        return;
      }
      info(ctx, server, 'Starting minecraft server version 1.21.1');
      info(ctx, server, `Starting Minecraft server on *:${portOf(ctx, server)}`);
      info(ctx, server, 'This server is running Paper version 1.21.1-119 (MC: 1.21.1)');
      info(ctx, server, 'Preparing level "world"');
    } else if (egg.game === 'bedrock') {
      info(ctx, server, 'Starting Server');
      info(ctx, server, 'Version: 1.21.40.03');
    } else {
      consoleOut(ctx, server, 'Valheim version: l-0.219.16 (network version 33)', false);
    }
    later(ctx, Math.max(1, ctx.delays.startMs - step), () => {
      if (!alive()) return;
      if (egg?.game === 'bedrock') info(ctx, server, 'Server started.');
      else if (egg?.game === 'valheim') consoleOut(ctx, server, 'Game server connected', false);
      else info(ctx, server, 'Done (2.345s)! For help, type "help"');
      setPower(ctx, server, 'running');
    });
  });
}

function shutdown(ctx: Ctx, server: Server, then: () => void): void {
  const rt = ctx.state.runtimeOf(server.id);
  rt.busy = true;
  setPower(ctx, server, 'stopping');
  if (eggOf(ctx, server)?.game !== 'valheim') {
    info(ctx, server, 'Stopping the server');
    info(ctx, server, 'Stopping server');
    info(ctx, server, 'Saving players');
    info(ctx, server, 'Saving worlds');
  }
  const runId = rt.startedAt;
  later(ctx, Math.max(1, Math.floor(ctx.delays.startMs / 3)), () => {
    rt.busy = false;
    if (rt.startedAt !== runId || rt.state !== 'stopping') return;
    setPower(ctx, server, 'offline');
    consoleOut(ctx, server, `${DAEMON}Server marked as offline...`, false);
    then();
  });
}

/** A line typed on the console (the server must not be offline; the caller checks). */
export function command(ctx: Ctx, server: Server, line: string): void {
  const rt = ctx.state.runtimeOf(server.id);
  const text = line.trim().replace(/^\//, '');
  const [verb = '', ...rest] = text.split(/\s+/);
  const arg = rest.join(' ');
  rt.rxBytes += Buffer.byteLength(line);
  const game = eggOf(ctx, server)?.game ?? 'paper';
  if (game === 'valheim') {
    consoleOut(ctx, server, `Unknown command: ${verb}`, false);
    return;
  }
  switch (verb.toLowerCase()) {
    case 'say':
      info(ctx, server, `[Server] ${arg}`);
      return;
    case 'list':
      info(
        ctx,
        server,
        `There are ${rt.players.length} of a max of ${maxPlayers(ctx, server)} players online: ${rt.players.join(', ')}`,
      );
      return;
    case 'help':
      for (const l of [
        '--------- Help: Index (1/11) ----------------------',
        'Use /help [n] to get page n of help.',
        'Aliases: Lists command aliases',
        'Bukkit: All commands for Bukkit',
        'Minecraft: All commands for Minecraft',
        'Paper: All commands for Paper',
      ]) {
        info(ctx, server, l);
      }
      return;
    case 'op':
      if (arg === '') {
        info(ctx, server, 'Unknown or incomplete command, see below for error');
        return;
      }
      if (!rt.ops.includes(arg)) rt.ops.push(arg);
      info(ctx, server, `Made ${arg} a server operator`);
      return;
    case 'stop':
      if (rt.state === 'running' || rt.state === 'starting') shutdown(ctx, server, () => {});
      return;
    default:
      info(ctx, server, 'Unknown command. Type "/help" for help.');
  }
}

/** Wings' `Proc()` numbers for this server (memory and cpu vary while it runs). */
export function stats(
  ctx: Ctx,
  server: Server,
): {
  memory_bytes: number;
  memory_limit_bytes: number;
  cpu_absolute: number;
  network: { rx_bytes: number; tx_bytes: number };
  uptime: number;
  state: PowerState;
  disk_bytes: number;
} {
  const rt = ctx.state.runtimeOf(server.id);
  const on = rt.state !== 'offline';
  const limit = server.memory > 0 ? server.memory * 1024 * 1024 : 8 * 1024 ** 3;
  if (on) {
    rt.rxBytes += randomInt(200, 4000);
    rt.txBytes += randomInt(500, 9000);
  }
  const uptime = on && rt.startedAt !== null ? Date.now() - rt.startedAt : 0;
  const memory = on
    ? Math.min(limit, Math.floor((rt.state === 'starting' ? 0.35 : 0.6) * limit) + randomInt(0, 64 * 1024 * 1024))
    : 0;
  const cpu = on
    ? Math.round((rt.state === 'starting' ? 120 + Math.random() * 60 : 3 + Math.random() * 25) * 1000) / 1000
    : 0;
  return {
    memory_bytes: memory,
    memory_limit_bytes: on ? Math.floor(limit * 1.15) : 0,
    cpu_absolute: cpu,
    network: { rx_bytes: on ? rt.rxBytes : 0, tx_bytes: on ? rt.txBytes : 0 },
    uptime,
    state: rt.state,
    disk_bytes: diskBytes(ctx.state.treeOf(server.id)),
  };
}

/** Log an activity entry for a power action coming from the websocket. */
export function logPower(ctx: Ctx, server: Server, signal: PowerSignal, userId: number): void {
  const user = ctx.state.users.get(userId);
  if (user) activity(ctx, { user, ip: '127.0.0.1' }, server, `server:power.${signal}`);
}

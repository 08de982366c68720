// The worker's side of a game server: provisioning as steps (the account's panel user, the
// server with the plan's limits and the game's egg, the panel's install), reinstalling, power
// signals, and what suspending, lifting a suspension and terminating do on the panel. Every
// step is idempotent: the user and the server are found by their external ids before anything
// is created, so an attempt after a crash or a lost answer continues where the last one was.
// Those ids carry the installation (`hp-<installation>-acct-<account>`, `-svc-<service>`), and a
// server found by its id is taken only when it is this service's (../extids.ts): another
// installation's server on the same panel is refused, never adopted.

import type { Game } from '../../../db/tables.ts';
import { UpstreamError } from '../../../upstreams/errors.ts';
import type { GamePanel, GameServerInfo, GameServerRef, GameServerSpec } from '../../../upstreams/game-panel.ts';
import { readStored } from '../../product-kit/data.ts';
import { assertAdoptable, type FoundResource, isOurs } from '../../product-kit/extids.ts';
import type { JobEnv, ProductJobs } from '../../product-kit/jobs.ts';
import type { Step } from '../../product-kit/steps.ts';
import { recordEvent } from '../../services/events.ts';
import * as services from '../../services/service.repository.ts';
import { DEFAULT_BACKUPS, DEFAULT_DATABASES, type GameSpecs, gameConfig, gameSpecs } from './data.ts';
import { gameExternalOf, panelUserEmail, serverExternalId, serverRefOf, userExternalId } from './server.ts';

/** The plan's limits on what a client may create (databases, backups), defaults filled in. */
export function featureLimits(specs: GameSpecs): { databases: number; backups: number } {
  return { databases: specs.databases ?? DEFAULT_DATABASES, backups: specs.backups ?? DEFAULT_BACKUPS };
}

/** How long the panel may take to install a server before the job gives up (retryable). */
const INSTALL_TIMEOUT_MS = 20 * 60 * 1000;

/** What a game job works with; the steps fill in `spec` and `ref` as they go (read through specOf, refOf). */
export interface GameJob {
  env: JobEnv;
  panel: GamePanel | null;
  ref: GameServerRef | null;
  /** The server to make (the game's egg, the owner's panel user), once the 'preparing' step has worked it out. */
  spec?: GameServerSpec;
}

const panelOf = (c: GameJob): GamePanel => {
  if (!c.panel) throw new Error('no driver for the node');
  return c.panel;
};

const refOf = (c: GameJob): GameServerRef => {
  if (!c.ref) throw new Error('the service has no game server');
  return c.ref;
};

const specOf = (c: GameJob): GameServerSpec => {
  if (!c.spec) throw new Error('the game server spec was not prepared');
  return c.spec;
};

const specsOf = (env: JobEnv): GameSpecs =>
  readStored(gameSpecs, env.plan.specs, `the specs of plan ${env.plan.label}`);

async function gameOf(env: JobEnv): Promise<Game> {
  const slug = specsOf(env).game;
  const game = await env.db.selectFrom('games').selectAll().where('slug', '=', slug).executeTakeFirst();
  if (!game) throw new Error(`the game ${slug} of plan ${env.plan.label} is not in the catalog`);
  return game;
}

/** The name the service's server carries (or will): the recorded one, else this installation's. */
const serverName = (env: JobEnv): string => serverExternalId(env.installation.id, env.service);

/** A server the panel holds under the service's name, as ../extids.ts judges it. */
function foundServer(env: JobEnv, server: GameServerInfo): FoundResource {
  const recorded = serverRefOf(env.service);
  return {
    label: `panel server ${server.id} (${server.identifier})`,
    name: server.externalId,
    recorded: recorded !== null && recorded.id === server.id && recorded.uuid === server.uuid,
    identity: { uuid: server.uuid },
  };
}

/** The server to make: the plan's limits, the game's egg, owned by the panel user `userId`. */
function serverSpec(env: JobEnv, game: Game, userId: number): GameServerSpec {
  const { service, plan } = env;
  const specs = specsOf(env);
  const config = readStored(gameConfig, service.config, `the config of service ${service.id}`);
  const limits = featureLimits(specs);
  return {
    externalId: serverName(env),
    name: config.server_name ?? service.label,
    description: `Hostplane service ${service.label} (${plan.name})`,
    userId,
    nestId: game.nest_id,
    eggId: game.egg_id,
    dockerImage: game.docker_image,
    startup: game.startup,
    environment: { ...game.environment },
    limits: { memoryMb: specs.ram_mb, cpuPercent: specs.cpu_percent, diskMb: specs.disk_gb * 1024, swapMb: 0, io: 500 },
    featureLimits: { databases: limits.databases, backups: limits.backups, allocations: 1 },
  };
}

/** Poll the panel until the server has installed; a failed install script fails the job for good. */
async function waitInstalled(c: GameJob): Promise<void> {
  const poll = c.env.timing.pollIntervalMs ?? 1000;
  const deadline = Date.now() + (c.env.timing.taskTimeoutMs ?? INSTALL_TIMEOUT_MS);
  for (;;) {
    const server = await panelOf(c).server(refOf(c));
    if (server.status === null || server.status === 'suspended') return;
    if (server.status === 'install_failed' || server.status === 'reinstall_failed') {
      throw new UpstreamError('rejected', `the panel's install script failed (${server.status})`, { retryable: false });
    }
    if (Date.now() > deadline) throw new UpstreamError('timeout', 'the panel is still installing the server');
    await new Promise((resolve) => setTimeout(resolve, Math.min(poll * 4, 2000)));
  }
}

const installStep: Step<GameJob> = { name: 'installing', progress: 40, run: waitInstalled };

export const provisionSteps: readonly Step<GameJob>[] = [
  {
    name: 'preparing',
    progress: 5,
    async run(c) {
      const { env } = c;
      const { service } = env;
      const game = await gameOf(c.env);
      const account = await env.db
        .selectFrom('accounts')
        .select(['id', 'email', 'name'])
        .where('id', '=', service.account_id)
        .executeTakeFirstOrThrow();
      const [first, ...rest] = account.name.trim().split(/\s+/);
      // Name and address are the platform's own, namespaced by the installation: the customer's
      // e-mail may already be on the panel (an invite), and another installation's account of
      // the same id has its own user. Found by that external id, the user is this account's.
      const externalId = userExternalId(env.installation.id, account.id);
      const user = await panelOf(c).ensureUser({
        externalId,
        email: panelUserEmail(env.publicUrl, env.installation.id, account.id),
        username: externalId,
        firstName: first || 'Hostplane',
        lastName: rest.join(' ') || 'Client',
      });
      c.spec = serverSpec(env, game, user.id);
    },
  },
  {
    name: 'creating the game server',
    progress: 20,
    async run(c) {
      const { env } = c;
      const { service } = env;
      const spec = specOf(c);
      // The panel answers the server already carrying the name when there is one (an earlier
      // attempt's, or not ours at all): nothing is changed on it before it is judged ours.
      const server = await panelOf(c).createServer(spec);
      await assertAdoptable(c.env, foundServer(c.env, server));
      const ref: GameServerRef = { id: server.id, uuid: server.uuid, identifier: server.identifier };
      const recorded = gameExternalOf(service);
      const isNew = recorded?.id !== ref.id;
      if (isNew || recorded?.name !== spec.externalId || recorded?.user_id !== spec.userId) {
        const external = { ...ref, name: spec.externalId, user_id: spec.userId };
        await services.setExternal(env.db, service.id, JSON.stringify(external));
      }
      if (isNew) {
        await recordEvent(env.db, service.id, 'server_created', `Game server ${ref.identifier} created`, {
          identifier: ref.identifier,
        });
      }
      c.ref = ref;
    },
    // Found by its external id: the attempt that made it may have died before recording it. Only
    // this service's server is deleted, never one it refused to adopt. A failure here is reported
    // to the runner, which keeps the service for a later cleanup.
    async undo(c) {
      const server = await panelOf(c).findServer(serverName(c.env));
      if (server && (await isOurs(c.env, foundServer(c.env, server)))) await panelOf(c).deleteServer(server);
    },
  },
  installStep,
];

export const gameJobs: ProductJobs<GameJob> = {
  open(env) {
    const ref = serverRefOf(env.service);
    const needsNode = ref !== null || ['provision', 'reinstall', 'power'].includes(env.job.type);
    const panel = needsNode ? env.drivers.driverFor(env.node, 'gamePanel') : null;
    if (env.job.type === 'reinstall' && !ref) throw new Error('the service has no game server to reinstall');
    return { env, panel, ref };
  },
  provision: provisionSteps,
  reinstall: {
    steps: [
      {
        name: 'reinstalling',
        progress: 10,
        async run(c) {
          // A retry after the panel took the reinstall finds it installing (or done): not asked twice.
          if (c.env.job.attempts > 0) {
            const server = await panelOf(c).server(refOf(c));
            if (server.status === 'installing') return;
          }
          await panelOf(c).reinstall(refOf(c));
        },
      },
      installStep,
    ],
    async done(trx, c) {
      await recordEvent(
        trx,
        c.env.service.id,
        'reinstalled',
        'Reinstalled: the game files were replaced by a fresh install',
      );
    },
  },
  power: {
    start: { run: (c) => panelOf(c).power(refOf(c), 'start'), done: 'Started' },
    stop: { run: (c) => panelOf(c).power(refOf(c), 'stop'), done: 'Stopped' },
    restart: { run: (c) => panelOf(c).power(refOf(c), 'restart'), done: 'Restarted' },
    kill: { run: (c) => panelOf(c).power(refOf(c), 'kill'), done: 'Killed' },
  },
  async suspend(c) {
    if (c.ref) await panelOf(c).suspend(c.ref);
  },
  async unsuspend(c) {
    if (c.ref) await panelOf(c).unsuspend(c.ref);
  },
  async terminate(c) {
    if (c.ref) await panelOf(c).deleteServer(c.ref);
  },
};

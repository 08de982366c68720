// Composition root. `npm start` runs the API and the job worker in one process;
// `npm run api` and `npm run worker` (role flags) run them apart, on PostgreSQL only.
// Order: config → database (lock, migrate) → deps (job queue) → HTTP and/or worker.
// SIGTERM/SIGINT: not ready (/readyz 503) until the proxy stops sending, then stop accepting, drain
// requests, stop the worker, close the database.

import type { Server } from 'node:http';
import type { FastifyInstance } from 'fastify';
import type { Logger } from 'pino';
import { startAdminSocket } from './admin/socket.ts';
import { type Config, ConfigError, loadConfig, redactUrl } from './config.ts';
import { seedDemoCatalog } from './core/catalog/demo-seed.ts';
import { closeDeps, createDeps, type Deps } from './core/deps.ts';
import { analyzeEmbedded } from './core/housekeeping.ts';
import { type Database, openDatabase, targetFromConfig } from './db/database.ts';
import { DataDirLockedError } from './db/lock.ts';
import { migrateToLatest } from './db/migrator.ts';
import { databaseUnavailable } from './db/unavailable.ts';
import { type DemoUpstreams, startDemoUpstreams } from './demo.ts';
import { START_ROLE } from './early-start.ts';
import { markDraining, proxyStopped } from './http/health.routes.ts';
import { type MetricsListener, startMetricsListener } from './http/metrics.routes.ts';
import { buildServer } from './http/server.ts';
import { createLogger, flushProcessLog } from './logging.ts';
import { startWorker } from './worker/worker.ts';

type Role = 'all' | 'api' | 'worker';

const SHUTDOWN_GRACE_MS = 15_000;
/**
 * After SIGTERM an API process keeps its port open until the proxy has stopped sending to it
 * (proxyStopped in health.routes.ts): at most DRAIN_WAIT_MS for the proxy's next /readyz probe
 * (deploy/Caddyfile asks every 2 s), then DRAIN_SETTLE_MS, one more interval, so that every proxy
 * probing on that interval has seen the 503 and requests already on their way have arrived.
 */
const DRAIN_WAIT_MS = 5_000;
const DRAIN_SETTLE_MS = 2_000;
/** How long a clean stop waits for the log to reach its reader; a stuck reader loses the tail. */
const LOG_FLUSH_MS = 1_000;

function parseRole(argv: string[]): Role {
  const flag = argv.find((a) => a.startsWith('--role='));
  const role = flag?.slice('--role='.length) ?? 'all';
  if (role !== 'all' && role !== 'api' && role !== 'worker')
    throw new ConfigError(`unknown --role=${role} (all, api, worker)`);
  return role;
}

async function main(): Promise<void> {
  // F4: everything this process creates (the embedded database's files, the secret key, uploads,
  // the emulators' state) is private to the user running it, whatever umask it was started with.
  process.umask(0o077);
  const role = parseRole(process.argv.slice(2));
  const config: Config = loadConfig(process.env);
  if (role !== 'all' && config.engine === 'pglite') {
    throw new ConfigError(
      `\`npm run ${role}\` runs one half of Hostplane in its own process, which needs PostgreSQL: ` +
        'the embedded database belongs to a single process. Set DATABASE_URL, or use `npm start` to run both halves together.',
    );
  }
  const logger = createLogger(config.logLevel);
  const started = performance.now();
  const startedUp = watchSignals(logger);

  // Where a start's time went (logged once started): loading the modules (performance.now()
  // counts from the process's start), opening and migrating the database, wiring the core, serving.
  const phasesMs: Record<string, number> = { modules: Math.round(started) };
  let phaseStart = started;
  const phase = (name: string) => {
    const now = performance.now();
    phasesMs[name] = Math.round(now - phaseStart);
    phaseStart = now;
  };

  const database = await openMigrated(config, role, logger);
  phase('database');
  const deps = await createDeps(config, database, logger);
  if (config.demo) await seedDemoCatalog(database.db);
  if (database.engine === 'pglite') await analyzeEmbedded(database.db);
  phase('core');
  // The emulators run inside `npm start` only: separate api/worker processes would each start
  // their own and repoint the nodes at it.
  const demo = config.demo && role === 'all' ? await startDemoUpstreams(deps) : null;
  if (config.demo && role !== 'all') logger.warn('DEMO=1: the emulated upstreams run only under `npm start`');
  const running = await startRole(deps, role);
  phase('serve');

  const version = await database.serverVersion();
  logger.info(
    {
      role,
      engine: database.engine,
      dbVersion: version,
      url: running.app ? config.publicUrl : undefined,
      demo: config.demo,
      // Since the process started (performance.now() counts from there): what a restart costs.
      startupMs: Math.round(performance.now()),
      phasesMs,
    },
    running.app
      ? `Hostplane listening on ${config.publicUrl} (${database.engine} ${version})`
      : `Hostplane worker running (${database.engine})`,
  );
  await startedUp(shutdownOf(logger, { ...running, deps, demo, database }));
}

/**
 * A signal that arrives while the process is still starting (the HTTP port may already answer
 * while the worker, the admin socket and the rest start) stops it once it has started, within
 * the same grace; a second one exits at once. Without this the default action killed the
 * process mid-start, leaving the embedded lock and the database unclosed. The function returned
 * is called once started, with the shutdown every later signal runs.
 */
function watchSignals(logger: Logger): (shutdown: (signal: string) => Promise<void>) => Promise<void> {
  let shutdown: ((signal: string) => Promise<void>) | null = null;
  let signalled: string | null = null;
  const onSignal = (signal: string) => {
    if (shutdown !== null) return void shutdown(signal);
    if (signalled !== null) {
      logger.warn({ signal }, 'second signal while starting; exiting now');
      process.exit(1);
    }
    signalled = signal;
    logger.info({ signal }, 'signal while starting; stopping once started');
    setTimeout(() => {
      logger.error('start-up did not finish within the shutdown grace; exiting');
      process.exit(1);
    }, SHUTDOWN_GRACE_MS).unref();
  };
  process.on('SIGTERM', () => onSignal('SIGTERM'));
  process.on('SIGINT', () => onSignal('SIGINT'));
  return async (ready) => {
    shutdown = ready;
    if (signalled !== null) await ready(signalled);
  };
}

/**
 * No database to talk to yet (down, starting, not reachable): exit status 1, which a service
 * manager retries, unlike a configuration error (status 2) that no retry mends.
 */
class DatabaseUnreachableError extends Error {
  override name = 'DatabaseUnreachableError';
}
/**
 * The database, opened (the embedded one locked) and migrated. A database that does not answer
 * is DatabaseUnreachableError; any other failure to migrate is a configuration error.
 */
async function openMigrated(config: Config, role: Role, logger: Logger): Promise<Database> {
  // `npm start` (role all) names itself in the lock as early-start.ts does, which may have begun this.
  const database = await openDatabase(
    targetFromConfig(config, role === 'all' ? START_ROLE : `npm run ${role}`, { template: true }),
    logger,
  );
  let applied: string[];
  try {
    applied = await migrateToLatest(database.db, {
      onNewer: (names) =>
        logger.warn(
          { migrations: names },
          'the database has migrations of a newer release; this one runs on that schema',
        ),
    });
  } catch (error) {
    await database.close().catch(() => {});
    const reason = (error as NodeJS.ErrnoException).code ?? (error as Error).message;
    if (databaseUnavailable(error)) {
      throw new DatabaseUnreachableError(
        `the ${database.engine} database does not answer (${redactUrl(database.url ?? config.dataDir)}): ${reason}`,
      );
    }
    throw new ConfigError(
      `cannot prepare the ${database.engine} database (${redactUrl(database.url ?? config.dataDir)}): ${reason}`,
    );
  }
  if (applied.length > 0) logger.info({ migrations: applied }, 'database migrated');
  return database;
}

/** What the role runs: the HTTP server, the worker, the admin socket (embedded only), the metrics port. */
interface Running {
  app: FastifyInstance | null;
  adminSocket: Server | null;
  metrics: MetricsListener | null;
}

async function startRole(deps: Deps, role: Role): Promise<Running> {
  const { config, logger, database } = deps;
  const engine = database.engine;
  let app: FastifyInstance | null = null;
  if (role !== 'worker') {
    app = buildServer(deps);
    await app.listen({ port: config.port, host: config.host });
  }
  if (role !== 'api') {
    if (engine === 'pglite') {
      const orphans = await deps.jobs.recoverOrphans(database.db);
      if (orphans > 0) logger.warn({ orphans }, 'jobs left running by a stopped process were handed back for retry');
    }
    await startWorker(deps);
  }
  const adminSocket = engine === 'pglite' ? await startAdminSocket(deps, config.dataDir) : null;
  // GET /metrics on a port of its own (METRICS_PORT); with METRICS_TOKEN, buildServer serves it
  // on the main port too. A worker alone has no main port, so only METRICS_PORT reaches it.
  let metrics: MetricsListener | null = null;
  if (config.metricsPort !== null) {
    metrics = await startMetricsListener(deps, config.metricsHost, config.metricsPort);
    const where = `${metrics.host.includes(':') ? `[${metrics.host}]` : metrics.host}:${metrics.port}`;
    logger.info({ host: metrics.host, port: metrics.port }, `metrics at http://${where}/metrics`);
  } else if (role === 'worker' && config.metricsToken !== null) {
    logger.warn('METRICS_TOKEN serves /metrics on the API port, which a worker has not: set METRICS_PORT');
  }
  return { app, adminSocket, metrics };
}

/**
 * The stop on SIGTERM/SIGINT, in order. Every way out goes through process.exit, whose exit
 * hooks are bounded (the log sink gives up on a pipe that cannot take its tail), so a stuck or
 * vanished log reader cannot keep us alive.
 */
function shutdownOf(
  logger: Logger,
  parts: Running & { deps: Deps; demo: DemoUpstreams | null; database: Database },
): (signal: string) => Promise<void> {
  let stopping = false;
  return async (signal: string) => {
    if (stopping) {
      logger.warn({ signal }, 'second signal during shutdown; exiting now');
      process.exit(1);
    }
    stopping = true;
    logger.info({ signal }, 'shutting down');
    // The grace timer runs on the event loop, which nothing here blocks: log writes are
    // asynchronous and retried from (unref'd) timers.
    const force = setTimeout(() => {
      logger.error('shutdown took too long; exiting');
      process.exit(1);
    }, SHUTDOWN_GRACE_MS);
    force.unref();
    let code = 0;
    try {
      markDraining(parts.deps); // /readyz answers 503 from here on, every answer `Connection: close`
      if (parts.app) {
        const started = performance.now();
        const how = await proxyStopped(parts.deps, { maxMs: DRAIN_WAIT_MS, settleMs: DRAIN_SETTLE_MS });
        logger.info({ how, waitedMs: Math.round(performance.now() - started) }, 'closing the listener');
      }
      await parts.app?.close(); // stops accepting, waits for in-flight requests
      await parts.metrics?.close();
      parts.adminSocket?.close();
      await closeDeps(parts.deps); // lets running jobs finish, then stops the queue
      await parts.demo?.stop();
      await parts.database.close(); // releases the embedded lock
      logger.info('stopped');
    } catch (error) {
      logger.error({ err: error }, 'shutdown failed');
      code = 1;
    }
    await flushProcessLog(LOG_FLUSH_MS);
    process.exit(code);
  };
}

main().catch((error: unknown) => {
  if (error instanceof ConfigError || error instanceof DataDirLockedError) {
    console.error(`hostplane: ${error.message}`);
    process.exit(2);
  }
  if (error instanceof DatabaseUnreachableError) {
    console.error(`hostplane: ${error.message}`);
    process.exit(1);
  }
  console.error('hostplane: failed to start:', error);
  process.exit(1);
});

// The durable job queue: pg-boss on the same database as everything else, in both modes.
// Jobs are enqueued through the caller's Kysely executor, so a job sent inside a transaction
// exists only if that transaction commits. The catalogue type C maps each job name to its
// payload; definitions carry the retry policy per queue.

import { CompiledQuery, type Kysely } from 'kysely';
import { fromKysely, type Job, type JobResult, PgBoss } from 'pg-boss';
import type { Logger } from 'pino';
import type { Database } from '../../db/database.ts';
import { type QueueDepth, recordJobAttempt } from '../../metrics/metrics.ts';

export type JobCatalog = { [name: string]: object };

export interface QueueDefinition {
  /** Attempts after the first (pg-boss retryLimit). */
  retryLimit: number;
  /** Seconds before the first retry; doubled per attempt with jitter when backoff is on. */
  retryDelay: number;
  retryBackoff: boolean;
  retryDelayMax?: number;
  /** How long one attempt may run before pg-boss treats it as lost and retries it. */
  expireInSeconds: number;
  /** Jobs of this queue handled at once by one process. */
  concurrency: number;
  /** When set, a running job must show signs of life this often or it is handed to another worker. */
  heartbeatSeconds?: number;
}

export type QueueDefinitions<C extends JobCatalog> = { [N in keyof C & string]: QueueDefinition };

export interface JobContext {
  id: string;
  /** 0 on the first attempt. */
  retryCount: number;
  /** True on the attempt after which pg-boss gives up. */
  lastAttempt: boolean;
  signal: AbortSignal;
  logger: Logger;
}

export type JobHandlers<C extends JobCatalog> = {
  [N in keyof C & string]: (payload: C[N], context: JobContext) => Promise<void>;
};

export interface EnqueueOptions {
  /** Delay before the job may run, in seconds, or a date. */
  startAfter?: number | Date;
  /** pg-boss singleton key: at most one queued job per key (dedupes re-sends). */
  singletonKey?: string;
}

/** Anything Kysely can execute on: the root instance or an open transaction. */
export type Executor = Pick<Kysely<unknown>, 'executeQuery'>;

const NIL_UUID = '00000000-0000-0000-0000-000000000000';

/** How often pg-boss supervises, and looks for jobs whose worker died (missed heartbeat or expiry). */
const SUPERVISE_SECONDS = 10;
const MONITOR_SECONDS = 15;
/** How long one reading of the queues' depth serves scrapes: pg-boss recounts every MONITOR_SECONDS anyway. */
const DEPTH_CACHE_MS = 5_000;

export class JobQueue<C extends JobCatalog> {
  readonly #boss: PgBoss;
  readonly #definitions: QueueDefinitions<C>;
  readonly #logger: Logger;
  #working = false;
  #depth: { at: number; value: Promise<QueueDepth[]> } | null = null;

  constructor(database: Database, definitions: QueueDefinitions<C>, logger: Logger) {
    this.#definitions = definitions;
    this.#logger = logger;
    this.#boss = createBoss(database);
    this.#boss.on('error', (error) => logger.error({ err: error }, 'job queue error'));
  }

  /** Install or migrate pg-boss's schema and create every queue of the catalogue. */
  async start(): Promise<void> {
    await this.#boss.start();
    for (const [name, definition] of Object.entries(this.#definitions) as [string, QueueDefinition][]) {
      const options = {
        retryLimit: definition.retryLimit,
        retryDelay: definition.retryDelay,
        retryBackoff: definition.retryBackoff,
        ...(definition.retryDelayMax === undefined || !definition.retryBackoff
          ? {}
          : { retryDelayMax: definition.retryDelayMax }),
        expireInSeconds: definition.expireInSeconds,
        ...(definition.heartbeatSeconds === undefined ? {} : { heartbeatSeconds: definition.heartbeatSeconds }),
        notify: true,
      };
      if (await this.#boss.getQueue(name)) await this.#boss.updateQueue(name, options);
      else await this.#boss.createQueue(name, options);
      // createQueue/updateQueue evict pg-boss's queue cache, and a cold cache makes the next send
      // read it through pg-boss's own connection. Inside a transaction on PGlite (one connection)
      // that read would wait for the transaction it is part of, so warm the cache now.
      await this.#boss.findJobs(name, { id: NIL_UUID });
    }
  }

  /**
   * Queue a job through `executor`. Pass the transaction that changes the state the job acts on:
   * if it rolls back, the job was never queued.
   */
  async enqueue<N extends keyof C & string>(
    executor: Executor,
    name: N,
    payload: C[N],
    options: EnqueueOptions = {},
  ): Promise<string | null> {
    return this.#boss.send(name, payload, {
      db: fromKysely(executor),
      ...(options.startAfter === undefined ? {} : { startAfter: options.startAfter }),
      ...(options.singletonKey === undefined ? {} : { singletonKey: options.singletonKey }),
    });
  }

  /** Start handling every queue of the catalogue in this process. */
  async work(handlers: JobHandlers<C>): Promise<void> {
    this.#working = true;
    for (const name of Object.keys(this.#definitions) as (keyof C & string)[]) {
      const definition = this.#definitions[name];
      const handler = handlers[name];
      await this.#boss.work<C[typeof name]>(
        name,
        {
          // pg-boss settles a fetched batch only when all of it is done: a batch of 4 with a
          // bare-metal install in it (up to 10 minutes) would leave the other 3 slots idle until
          // then. The long-running queues (the ones with a heartbeat) take one job per fetch in
          // `concurrency` independent workers instead, so a long job holds one slot, not all;
          // the short ones keep fetching a batch (one poller each).
          ...(definition.heartbeatSeconds === undefined
            ? { batchSize: definition.concurrency }
            : { batchSize: 1, localConcurrency: definition.concurrency }),
          perJobResults: true,
          pollingIntervalSeconds: 1,
          // The lost-wake-up finding: without these a burst of sends can sit for the 30 s backstop.
          notifyPollingIntervalSeconds: 2,
          burstWhenBatchFull: true,
        },
        (jobs) => Promise.all(jobs.map((job) => this.#run(name, job, definition, handler))),
      );
    }
  }

  async #run<N extends keyof C & string>(
    name: N,
    job: Job<C[N]>,
    definition: QueueDefinition,
    handler: JobHandlers<C>[N],
  ): Promise<JobResult> {
    const logger = this.#logger.child({ job: name, jobId: job.id, attempt: job.retryCount + 1 });
    const started = performance.now();
    try {
      await handler(job.data, {
        id: job.id,
        retryCount: job.retryCount,
        lastAttempt: job.retryCount >= definition.retryLimit,
        signal: job.signal,
        logger,
      });
      recordJobAttempt(name, 'completed', (performance.now() - started) / 1000);
      return { id: job.id, status: 'completed' };
    } catch (error) {
      recordJobAttempt(name, 'failed', (performance.now() - started) / 1000);
      logger.warn({ err: error }, 'job attempt failed');
      const message = error instanceof Error ? error.message : String(error);
      return { id: job.id, status: 'failed', output: { message } };
    }
  }

  /** Run `name` on a cron schedule (kept in the database; one instance fires per tick). */
  async schedule(name: keyof C & string, cron: string): Promise<void> {
    await this.#boss.schedule(name, cron, {});
  }

  /**
   * Hand back jobs left `active` by a process that died. Only safe when no other process can be
   * working them — embedded mode, where this process holds the data directory's exclusive lock.
   * (With PostgreSQL, heartbeats do this: a silent worker's jobs are retried by the monitor.)
   * Each counts as a failed attempt and is retried under its queue's policy.
   */
  async recoverOrphans(executor: Executor): Promise<number> {
    const { rows } = await executor.executeQuery<{ id: string; name: string }>(
      CompiledQuery.raw(`select id, name from pgboss.job where state = 'active' and name = any($1)`, [
        Object.keys(this.#definitions),
      ]),
    );
    for (const row of rows) {
      await this.#boss.fail(row.name, row.id, { message: 'the process running this job stopped' });
    }
    return rows.length;
  }

  /** Look a job up by id (for tests and the staff CLI). */
  async find(name: keyof C & string, id: string): Promise<{ state: string; data: unknown } | null> {
    const [job] = await this.#boss.findJobs(name, { id });
    return job ? { state: job.state, data: job.data } : null;
  }

  /**
   * Jobs per queue, for the metrics scrape: the counts pg-boss's monitor keeps on its queue table
   * (one small read, no scan of the jobs), read at most once per DEPTH_CACHE_MS however often
   * scrapes come, and shared by scrapes that arrive together.
   */
  queueDepth(): Promise<QueueDepth[]> {
    const now = performance.now();
    if (this.#depth !== null && now - this.#depth.at < DEPTH_CACHE_MS) return this.#depth.value;
    const value = this.#boss
      .getQueues(Object.keys(this.#definitions))
      .then((queues) =>
        queues.map((q) => ({ queue: q.name, ready: q.readyCount, deferred: q.deferredCount, active: q.activeCount })),
      );
    const entry = { at: now, value };
    this.#depth = entry;
    // A failed read is not kept: the next scrape asks again.
    value.catch(() => {
      if (this.#depth === entry) this.#depth = null;
    });
    return value;
  }

  get working(): boolean {
    return this.#working;
  }

  /** Stop fetching, let running handlers finish (up to `timeoutMs`), release the listener. */
  async stop(timeoutMs = 10_000): Promise<void> {
    await this.#boss.stop({ graceful: true, timeout: timeoutMs, close: true });
  }
}

function createBoss(database: Database): PgBoss {
  if (database.engine === 'postgresql') {
    // pg-boss keeps its own small pool here so LISTEN can hold a dedicated connection.
    return new PgBoss({
      connectionString: database.url,
      max: 4,
      backend: 'postgres',
      useListenNotify: true,
      application_name: 'hostplane-jobs',
      superviseIntervalSeconds: SUPERVISE_SECONDS,
      monitorIntervalSeconds: MONITOR_SECONDS,
    });
  }
  const pool = database.pool;
  const pglite = database.pglite;
  return new PgBoss({
    backend: 'pglite',
    useListenNotify: true,
    superviseIntervalSeconds: SUPERVISE_SECONDS,
    monitorIntervalSeconds: MONITOR_SECONDS,
    db: {
      // The one path into PGlite: the app's own pool, never pglite.query().
      async executeSql(text: string, values?: unknown[]) {
        const client = await pool.connect();
        try {
          return await client.query(text, values as unknown[]);
        } catch (error) {
          // Never leave the single session inside an aborted transaction.
          await client.query('rollback').catch(() => {});
          throw error;
        } finally {
          client.release();
        }
      },
      async listen(channel: string, onNotification: (payload: string) => void, onReconnect: () => void) {
        if (pglite === null) throw new Error('no PGlite instance to listen on');
        const unlisten = await pglite.listen(channel, onNotification);
        onReconnect();
        return { close: () => unlisten() };
      },
    },
  });
}

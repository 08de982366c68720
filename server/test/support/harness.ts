// The integration harness: the real server (buildServer + createDeps, exactly as main.ts
// wires them) on a fresh database of its own, with requests injected and logs captured.
// Each test file calls createTestApp() once (or more) and closes what it opened.

import { AssertionError } from 'node:assert';
import { randomBytes } from 'node:crypto';
import { appendFileSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import type { FastifyInstance, InjectOptions, LightMyRequestResponse } from 'fastify';
import pg from 'pg';
import pino from 'pino';
import { type Config, loadConfig } from '../../src/config.ts';
import { closeDeps, createDeps, type Deps, type DepsOverrides } from '../../src/core/deps.ts';
import { type Database, openDatabase } from '../../src/db/database.ts';
import { migrateToLatest } from '../../src/db/migrator.ts';
import { OPENAPI_PATH } from '../../src/http/plugins/openapi.ts';
import { buildServer } from '../../src/http/server.ts';
import { createLogger } from '../../src/logging.ts';
import { startWorker } from '../../src/worker/worker.ts';
import { type DocumentValidator, validatorFor } from './openapi-validate.ts';
import { withDatabase } from './template.ts';

/** Every log line the app wrote, raw, for assertions such as "no secret was logged". */
export class LogCapture extends Writable {
  readonly lines: string[] = [];
  override _write(chunk: Buffer, _encoding: string, done: () => void): void {
    for (const line of chunk.toString('utf8').split('\n')) if (line !== '') this.lines.push(line);
    done();
  }
  text(): string {
    return this.lines.join('\n');
  }
  parsed(): Record<string, unknown>[] {
    return this.lines.map((l) => JSON.parse(l) as Record<string, unknown>);
  }
}

export interface TestDatabase {
  database: Database;
  /** PostgreSQL connection URL of this file's own database, or null on PGlite. */
  url: string | null;
  drop(): Promise<void>;
}

export const onPostgres = Boolean(process.env.TEST_DATABASE_URL);
export const redisUrl = process.env.REDIS_URL ?? null;

/** A fresh, migrated database: a PGlite clone of the template, or a new PostgreSQL database. */
let template: Buffer | null | undefined;
/** The migrated PGlite cluster every test database starts from (run.ts makes it), read once per process. */
export function templateBytes(): Buffer | null {
  if (template === undefined) {
    const path = process.env.HOSTPLANE_TEST_TEMPLATE;
    template = path ? readFileSync(path) : null;
  }
  return template;
}

/** A copy of `bytes` the database's thread may take (it is transferred, not copied, to the thread). */
export function copyOf(bytes: Buffer): ArrayBuffer {
  return bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength) as ArrayBuffer;
}

export async function createTestDatabase(): Promise<TestDatabase> {
  const adminUrl = process.env.TEST_DATABASE_URL;
  if (adminUrl) {
    const template = process.env.HOSTPLANE_TEST_TEMPLATE_DB;
    const name = `hostplane_t_${process.pid}_${randomBytes(4).toString('hex')}`;
    const admin = new pg.Client({ connectionString: adminUrl });
    await admin.connect();
    try {
      await admin.query(`create database "${name}"${template ? ` template "${template}"` : ''}`);
    } finally {
      await admin.end();
    }
    const url = withDatabase(adminUrl, name);
    const database = await openDatabase({ engine: 'postgresql', url, poolSize: 10 });
    await migrateToLatest(database.db);
    return {
      database,
      url,
      async drop() {
        await database.close();
        const again = new pg.Client({ connectionString: adminUrl });
        await again.connect();
        try {
          await again.query(`drop database if exists "${name}" with (force)`);
        } finally {
          await again.end();
        }
      },
    };
  }
  const template = templateBytes();
  const loadDataDir = template ? copyOf(template) : undefined;
  const database = await openDatabase({ engine: 'pglite', dataDir: null, ...(loadDataDir ? { loadDataDir } : {}) });
  await migrateToLatest(database.db);
  return { database, url: null, drop: () => database.close() };
}

export interface TestAppOptions {
  /** Extra environment, as an operator would set it. */
  env?: Record<string, string>;
  /** Run the job worker in-process too. */
  worker?: boolean;
  overrides?: DepsOverrides;
  /** Count rate limits in Redis when the run has REDIS_URL (default); false: the engine's own store. */
  redis?: boolean;
  /** Add routes before the server is ready (to exercise shared plumbing from a test). */
  extend?: (app: FastifyInstance, deps: Deps) => void;
  /** The database to run on, instead of a fresh one of the run's engine (drills: a private PostgreSQL). */
  database?: () => Promise<TestDatabase>;
}

/**
 * HOSTPLANE_OPENAPI_REPORT=FILE: every mismatch is appended to FILE instead of failing its test,
 * so that one run of the suite lists them all (a test stops at its first failure).
 */
const REPORT_TO = process.env.HOSTPLANE_OPENAPI_REPORT;
function report(problem: string | null): void {
  if (problem !== null && REPORT_TO !== undefined) appendFileSync(REPORT_TO, `${JSON.stringify(problem)}\n`);
}

/** The validator of the app's own OpenAPI document (GET /api/v1/openapi.json), made on first use. */
function documentValidatorOf(app: FastifyInstance): () => Promise<DocumentValidator> {
  let validator: Promise<DocumentValidator> | null = null;
  return () =>
    (validator ??= app.inject({ method: 'GET', url: OPENAPI_PATH }).then((res) => {
      if (res.statusCode !== 200) throw new Error(`GET ${OPENAPI_PATH} answered ${res.statusCode}: ${res.body}`);
      return validatorFor(res.body);
    }));
}

/**
 * `inject`, checked: every answer must be one the app's own OpenAPI document allows (status
 * listed for the operation, body matching its schema and media type), else the request throws
 * an AssertionError and the test that made it fails (openapi-validate.ts).
 */
function checkedInject(
  app: FastifyInstance,
  validator: () => Promise<DocumentValidator>,
  hidden: Set<string>,
): (options: InjectOptions) => Promise<LightMyRequestResponse> {
  return async (options) => {
    const res = await app.inject(options);
    const request = res.raw.req;
    const received = {
      method: request.method ?? 'GET',
      url: request.url ?? '/',
      statusCode: res.statusCode,
      contentType: res.headers['content-type'] as string | undefined,
      body: res.body,
    };
    const id = String(res.headers['x-request-id']);
    const hiddenRoute = hidden.delete(id);
    if (REPORT_TO === undefined) (await validator()).assert(received, hiddenRoute);
    else report((await validator()).problem(received, hiddenRoute));
    return res;
  };
}

/**
 * Which requests a route hidden from the document answered (by request id, for checkedInject),
 * and the same check for answers sent over a real socket (tests that listen: the CLI, signed
 * download links). Those cannot throw where the request was made, so what is wrong is kept and
 * fails the app's close(). Streamed bodies are not read: their status and media type are checked.
 */
function checkSocketAnswers(
  app: FastifyInstance,
  validator: () => Promise<DocumentValidator>,
  problems: string[],
  hidden: Set<string>,
) {
  app.addHook('onSend', (request, reply, payload, done) => {
    const hiddenRoute = (request.routeOptions?.schema as { hide?: boolean } | undefined)?.hide === true;
    if (!(request.raw.socket instanceof Socket)) {
      if (hiddenRoute) hidden.add(request.id);
      return done(null, payload);
    }
    const body = typeof payload === 'string' ? payload : Buffer.isBuffer(payload) ? payload.toString('utf8') : null;
    const received = {
      method: request.method,
      url: request.url,
      statusCode: reply.statusCode,
      contentType: reply.getHeader('content-type') as string | undefined,
      body: payload === undefined || payload === null ? '' : body,
    };
    validator()
      .then((v) => {
        const problem = v.problem(received, hiddenRoute);
        if (REPORT_TO !== undefined) report(problem);
        else if (problem !== null) problems.push(problem);
      })
      .catch((error: unknown) => problems.push(String(error)))
      .finally(() => done(null, payload));
  });
}

export interface TestApp {
  app: FastifyInstance;
  deps: Deps;
  config: Config;
  logs: LogCapture;
  dataDir: string;
  inject(options: InjectOptions): Promise<LightMyRequestResponse>;
  close(): Promise<void>;
}

export async function createTestApp(options: TestAppOptions = {}): Promise<TestApp> {
  const dataDir = mkdtempSync(join(tmpdir(), 'hostplane-test-'));
  const testDb = await (options.database ?? createTestDatabase)();
  const config = loadConfig({
    DATA_DIR: dataDir,
    SECRET_KEY: randomBytes(32).toString('base64'),
    DEMO: '0',
    LOG_LEVEL: 'info',
    PUBLIC_URL: 'http://localhost:8080',
    ...(testDb.url ? { DATABASE_URL: testDb.url } : {}),
    ...(redisUrl && options.redis !== false ? { REDIS_URL: redisUrl } : {}),
    ...options.env,
  });
  const logs = new LogCapture();
  const logger = createLogger(config.logLevel, logs);
  // Redis outlives a test run, so every app counts under a prefix of its own.
  const deps = await createDeps(config, testDb.database, logger, {
    rateLimitPrefix: `hp-test:${randomBytes(6).toString('hex')}`,
    ...options.overrides,
  });
  // A failure from here on releases what was made (the worker, pools, the database), so the
  // test file fails at once instead of hanging on open handles until its timeout.
  let app: FastifyInstance;
  const validator = () => documentValidator();
  let documentValidator: () => Promise<DocumentValidator>;
  const socketProblems: string[] = [];
  const hidden = new Set<string>();
  try {
    if (options.worker) await startWorker(deps);
    app = buildServer(deps);
    options.extend?.(app, deps);
    documentValidator = documentValidatorOf(app);
    checkSocketAnswers(app, validator, socketProblems, hidden);
    await app.ready();
  } catch (error) {
    await closeDeps(deps).catch(() => {});
    await testDb.drop().catch(() => {});
    rmSync(dataDir, { recursive: true, force: true });
    throw error;
  }
  let closed = false;
  return {
    app,
    deps,
    config,
    logs,
    dataDir,
    inject: checkedInject(app, validator, hidden),
    async close() {
      if (closed) return;
      closed = true;
      await app.close();
      await closeDeps(deps);
      await testDb.drop();
      rmSync(dataDir, { recursive: true, force: true });
      if (socketProblems.length > 0) {
        throw new AssertionError({
          message: `Answers sent over a socket do not match the OpenAPI document:\n${socketProblems.join('\n')}`,
          operator: 'openapi',
        });
      }
    },
  };
}

/** A logger that keeps nothing, for tests that build core pieces without the HTTP server. */
export const silentLogger = pino({ level: 'silent' });

/** A clock tests can move forward: real time plus an offset. */
export class ManualClock {
  offsetMs = 0;
  readonly now = (): Date => new Date(Date.now() + this.offsetMs);
  advance(seconds: number): void {
    this.offsetMs += seconds * 1000;
  }
}

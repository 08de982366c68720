// The process logger: pino, JSON lines on stdout, with secrets redacted wherever they are
// likely to appear (headers, bodies, query strings). Our own log calls name error codes
// `errorCode`, never `code`, because `code` is redacted (it is also the OTP field's name).

import { fstatSync, write, writeSync } from 'node:fs';
import pino, { type DestinationStream, type Logger } from 'pino';

const SECRET_KEYS = [
  'password',
  'current_password',
  'token',
  'csrf_token',
  'secret',
  'api_key',
  'otp',
  'keySecret',
  'key_secret',
  'webhookSecret',
  'webhook_secret',
  // Cloud-init user data may hold passwords and tokens (core/services/user-data.ts).
  'user_data',
  'userData',
];

/** Query parameters whose values never reach a log line. */
const SECRET_QUERY =
  /([?&](?:token|access_token|api_token|auth|key|apikey|api_key|code|t|ticket|csrf_token|password|secret|signature|sig)=)[^&#]*/gi;
/** An API token wherever it appears (a caller may put it under any name): its secret part. */
const TOKEN_VALUE = /(svc_)[A-Za-z0-9_-]+/g;

export const REDACT_PATHS = [
  'req.headers.authorization',
  'req.headers.cookie',
  'req.headers["x-csrf-token"]',
  'res.headers["set-cookie"]',
  'headers.authorization',
  'headers.cookie',
  ...SECRET_KEYS.flatMap((key) => [key, `*.${key}`, `*.*.${key}`]),
  // `code` is also the name of ordinary error codes (err.code), so only its body-like places.
  'code',
  'body.code',
  '*.body.code',
  'payload.code',
  '*.payload.code',
];

export function redactQuery(url: string): string {
  // Most URLs have neither a query nor a token: no regular expression runs over them.
  if (!url.includes('?') && !url.includes('&') && !url.includes('svc_')) return url;
  return url.replace(SECRET_QUERY, '$1[redacted]').replace(TOKEN_VALUE, '$1[redacted]');
}

let timeMs = 0;
let timeField = '';
/** pino's isoTime, made once a millisecond (a busy server writes many lines in each). */
function isoTime(): string {
  const now = Date.now();
  if (now !== timeMs) {
    timeMs = now;
    timeField = `,"time":"${new Date(now).toISOString()}"`;
  }
  return timeField;
}

export function createLogger(level: string, destination?: DestinationStream): Logger {
  return pino(
    {
      level,
      base: { service: 'hostplane' },
      redact: { paths: REDACT_PATHS, censor: '[redacted]' },
      timestamp: isoTime,
      serializers: {
        err: pino.stdSerializers.err,
        req: (req: { method?: string; url?: string; ip?: string; id?: string }) => ({
          method: req.method,
          url: req.url === undefined ? undefined : redactQuery(req.url),
          ip: req.ip,
        }),
        res: (res: { statusCode?: number }) => ({ statusCode: res.statusCode }),
      },
    },
    // stdout by default, written asynchronously: under load many lines go out in one write
    // instead of one blocking write per request.
    destination ?? stdoutSink(),
  );
}

/**
 * A writer of `info` lines whose fields the caller has already built as JSON (`"a":1,"b":"x"`):
 * the very line pino writes for them (level, time, the logger's bindings, the fields, `msg`), but
 * without pino's serialisation of each field. For the access log, a line per request: pino would
 * serialise each nested field of every line. Null when the logger does more to a line than that
 * (a formatter, a mixin, hooks, a message prefix or key of its own, a destination that wants the
 * line's metadata): log through it then.
 */
export function prebuiltInfoLines(logger: Logger): ((fields: string, msg: string) => void) | null {
  const own = logger as unknown as Record<symbol, unknown>;
  // msgPrefixSym is exported at run time but missing from pino's typings.
  const s = pino.symbols as typeof pino.symbols & { readonly msgPrefixSym: symbol };
  const formatters = own[s.formattersSym] as { log?: unknown } | undefined;
  const hooks = own[s.hooksSym] as { logMethod?: unknown; streamWrite?: unknown } | undefined;
  const stream = own[s.streamSym] as (DestinationStream & Record<symbol, unknown>) | undefined;
  const levels = own[s.lsCacheSym] as Record<number, string> | undefined;
  const time = own[s.timeSym] as (() => string) | undefined;
  if (
    formatters?.log ||
    own[s.mixinSym] ||
    hooks?.logMethod ||
    hooks?.streamWrite ||
    typeof own[s.msgPrefixSym] === 'string' ||
    own[s.messageKeySym] !== 'msg' ||
    stream === undefined ||
    stream[s.needsMetadataGsym] === true ||
    levels?.[30] === undefined ||
    time === undefined
  )
    return null;
  const start = levels[30];
  const end = own[s.endSym] as string;
  const info = logger.levels.values.info as number;
  return (fields, msg) => {
    if (logger.levelVal > info) return;
    stream.write(`${start}${time()}${own[s.chindingsSym] as string},${fields},"msg":${JSON.stringify(msg)}${end}`);
  };
}

/**
 * The process log destination: stdout, asynchronous and batched, and never able to hold the
 * process up. It replaces `pino.destination({ sync: false })` (sonic-boom), whose exit hook
 * (registered by pino through on-exit-leak-free) calls `flushSync()`; that loop retries a full
 * non-blocking pipe (EAGAIN) forever with a 100 ms `Atomics.wait` between tries, and retries any
 * other error (EPIPE included) forever too, so a server whose log reader stopped reading stayed
 * alive after SIGTERM in a futex wait. Here:
 *  - a full pipe (EAGAIN) is retried from a timer that does not keep the process alive;
 *  - any other write error (EPIPE: the reader is gone) stops logging for good, silently;
 *  - at most MAX_QUEUED characters wait; beyond that lines are dropped (and counted);
 *  - at exit, what is still queued gets one bounded synchronous attempt (EXIT_FLUSH_MS).
 */
export class LogSink implements DestinationStream {
  static readonly MAX_QUEUED = 8 * 1024 * 1024;
  static readonly EXIT_FLUSH_MS = 500;
  static readonly RETRY_MS = 50;
  /**
   * Lines are gathered this long (or until COALESCE_CHARS wait) before a write: a write per line
   * would be a round trip through the thread pool per request.
   */
  static readonly COALESCE_MS = 5;
  static readonly COALESCE_CHARS = 64 * 1024;
  readonly #fd: number;
  #queue: string[] = [];
  #queued = 0;
  /** The bytes of the write in flight (or waiting to be retried), if any. */
  #inFlight: Buffer | null = null;
  #broken = false;
  #retry: NodeJS.Timeout | null = null;
  #gather: NodeJS.Timeout | null = null;
  #idle: (() => void)[] = [];
  dropped = 0;

  constructor(fd: number) {
    this.#fd = fd;
  }

  get broken(): boolean {
    return this.#broken;
  }

  write(line: string): boolean {
    if (this.#broken) return true;
    if (this.#queued + line.length > LogSink.MAX_QUEUED) {
      this.dropped++;
      return true;
    }
    this.#queue.push(line);
    this.#queued += line.length;
    // A write in flight writes what waits when it completes.
    if (this.#inFlight === null) this.#soon();
    return true;
  }

  #stopGathering(): void {
    if (this.#gather !== null) clearTimeout(this.#gather);
    this.#gather = null;
  }

  /** Write what is queued now if it is a lot, else after COALESCE_MS (what comes meanwhile with it). */
  #soon(): void {
    if (this.#queued >= LogSink.COALESCE_CHARS) {
      this.#stopGathering();
      this.#next();
      return;
    }
    if (this.#gather !== null) return;
    this.#gather = setTimeout(() => {
      this.#gather = null;
      if (this.#inFlight === null) this.#next();
    }, LogSink.COALESCE_MS);
    // Never what keeps the process alive: at exit, flushSync writes what is queued.
    this.#gather.unref();
  }

  /** Resolves once everything queued is written, the sink is broken, or `timeoutMs` passed. */
  flush(timeoutMs: number): Promise<void> {
    if (this.#inFlight === null && this.#queue.length === 0) return Promise.resolve();
    // What is being gathered goes now (and the write in flight keeps the process up meanwhile).
    if (this.#inFlight === null && this.#retry === null) {
      this.#stopGathering();
      this.#next();
    }
    return new Promise((resolve) => {
      const timer = setTimeout(done, timeoutMs);
      timer.unref();
      const self = this;
      function done() {
        clearTimeout(timer);
        self.#idle = self.#idle.filter((f) => f !== done);
        resolve();
      }
      this.#idle.push(done);
    });
  }

  /** Best effort at exit: never blocks longer than `budgetMs`, never throws. */
  flushSync(budgetMs = LogSink.EXIT_FLUSH_MS): void {
    if (this.#broken) return;
    // A write in flight belongs to the thread pool (writing it again could duplicate it); one
    // waiting for its retry timer is ours to write now.
    const waiting = this.#retry !== null ? this.#inFlight : null;
    this.#stopGathering();
    let buf = Buffer.concat([waiting ?? Buffer.alloc(0), Buffer.from(this.#queue.join(''))]);
    if (waiting !== null) this.#inFlight = null;
    this.#queue = [];
    this.#queued = 0;
    if (this.#retry !== null) clearTimeout(this.#retry);
    this.#retry = null;
    const deadline = Date.now() + budgetMs;
    const pause = new Int32Array(new SharedArrayBuffer(4));
    while (buf.length > 0) {
      try {
        buf = buf.subarray(writeSync(this.#fd, buf));
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code !== 'EAGAIN' || Date.now() >= deadline) {
          this.#broken = true;
          return;
        }
        Atomics.wait(pause, 0, 0, 10);
      }
    }
  }

  #next(): void {
    if (this.#inFlight === null) {
      if (this.#queue.length === 0) {
        const idle = this.#idle;
        this.#idle = [];
        for (const done of idle) done();
        return;
      }
      this.#inFlight = Buffer.from(this.#queue.join(''));
      this.#queue = [];
      this.#queued = 0;
    }
    const buf = this.#inFlight;
    write(this.#fd, buf, 0, buf.length, null, (error, written) => {
      if (this.#inFlight !== buf) return; // taken over by flushSync at exit
      if (error) {
        if (error.code === 'EAGAIN') {
          // The reader is slow or stopped: try again later, without keeping the process alive.
          this.#retry = setTimeout(() => {
            this.#retry = null;
            this.#next();
          }, LogSink.RETRY_MS);
          this.#retry.unref();
          return;
        }
        this.#fail();
        return;
      }
      this.#inFlight = written < buf.length ? buf.subarray(written) : null;
      // The rest of a partial write, the idle callbacks, or what a flush waits for: at once; else
      // new lines are gathered first.
      if (this.#inFlight !== null || this.#queue.length === 0 || this.#idle.length > 0) this.#next();
      else this.#soon();
    });
  }

  #fail(): void {
    this.#broken = true;
    this.#inFlight = null;
    this.#queue = [];
    this.#queued = 0;
    const idle = this.#idle;
    this.#idle = [];
    for (const done of idle) done();
  }
}

let processSink: LogSink | null = null;

/** The one stdout sink of this process, with its bounded exit flush. */
export function stdoutSink(): LogSink {
  if (processSink !== null) return processSink;
  // For a pipe or socket, let libuv set O_NONBLOCK (it does when process.stdout is created), so a
  // write to a full pipe fails with EAGAIN instead of blocking a thread-pool thread, which
  // process.exit would then wait for forever. Its 'error' (EPIPE) must not crash the process.
  try {
    const stat = fstatSync(1);
    if (stat.isFIFO() || stat.isSocket()) process.stdout.on('error', () => {});
  } catch {
    // no stdout at all: writes fail and the sink goes quiet
  }
  process.stderr.on('error', () => {});
  processSink = new LogSink(1);
  const sink = processSink;
  process.on('exit', () => sink.flushSync());
  return sink;
}

/** Waits (at most `timeoutMs`) for the process log to be written; never hangs on a stuck reader. */
export async function flushProcessLog(timeoutMs: number): Promise<void> {
  await processSink?.flush(timeoutMs);
}

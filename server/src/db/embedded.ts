// The server's end of the embedded database's thread (db/pglite-thread.ts). To `pg` the
// thread is a PostgreSQL server behind a socket: `socket()` is the stream node-postgres is given
// instead of a TCP connection, so pg writes the wire protocol as it would to a real server and
// parses the answers itself. What one tick writes (pg sends parse, bind, describe, execute, sync
// together) goes to the thread as one message. LISTEN callbacks, a dump of the data directory and
// a direct statement (tests) are asked for by message too.

import { Duplex } from 'node:stream';
import { Worker } from 'node:worker_threads';
import type { ThreadOptions, ThreadReply, ThreadRequest } from './pglite-thread.ts';

/** What callers may ask of the embedded database besides pg's socket. */
export interface EmbeddedPostgres {
  /** A new connection for node-postgres (its `stream` option). */
  socket(): Duplex;
  /** Call `callback` with each notification's payload on `channel`; resolves to the unlisten. */
  listen(channel: string, callback: (payload: string) => void): Promise<() => Promise<void>>;
  /** A statement outside pg's pool, as another client would run it (tests). */
  query(text: string, params?: unknown[]): Promise<{ rows: Record<string, unknown>[] }>;
  /** The data directory as a tarball (the test harness's template). */
  dumpDataDir(compression?: 'none' | 'gzip' | 'auto'): Promise<Blob>;
  close(): Promise<void>;
}

const ENTRY = new URL('./pglite-thread.ts', import.meta.url);

type Request = ThreadRequest extends infer R ? (R extends { id: number } ? Omit<R, 'id'> : never) : never;

/**
 * Start the thread and open the cluster in it (in memory without `dataDir`). Without
 * `loadDataDir` the thread is started before this returns its promise.
 */
export async function startEmbedded(options: {
  dataDir?: string;
  loadDataDir?: Blob | ArrayBuffer;
  /** A new cluster in `dataDir` is created from this template (db/template.ts). */
  templatePath?: string;
  /** Run the first statement as soon as the cluster is open (ThreadOptions.warm). */
  warm?: boolean;
  /** Told when the thread fails or exits while open (not after close()). */
  onFailure?: (error: Error) => void;
}): Promise<EmbeddedPostgres> {
  const data: ThreadOptions = {
    ...(options.dataDir === undefined ? {} : { dataDir: options.dataDir }),
    // An ArrayBuffer is handed to the thread as it is (transferred); a Blob is read first (node
    // reads one in small chunks: ~0.1 s of CPU for a 45 MB cluster).
    ...(options.loadDataDir === undefined
      ? {}
      : {
          loadDataDir:
            options.loadDataDir instanceof ArrayBuffer ? options.loadDataDir : await options.loadDataDir.arrayBuffer(),
        }),
    ...(options.templatePath === undefined ? {} : { templatePath: options.templatePath }),
    ...(options.warm === true ? { warm: true } : {}),
  };
  const link = new ThreadLink(spawnThread(data), options.onFailure);
  try {
    await link.ready;
  } catch (error) {
    link.gone ??= error as Error;
    await link.worker.terminate();
    throw error;
  }
  link.worker.unref();

  /** Channels the thread listens on (or is asked to), by key. */
  const listening = new Map<string, Promise<void>>();
  const channelKey = (channel: string) =>
    channel.startsWith('"') && channel.endsWith('"') ? channel.slice(1, -1) : channel.toLowerCase();

  return {
    socket: () => new ThreadSocket(link),
    async listen(channel, callback) {
      const key = channelKey(channel);
      let started = listening.get(key);
      if (started === undefined) {
        started = link.call<null>({ op: 'listen', channel: key }).then(
          () => {},
          (error: Error) => {
            // Not listening after all: the next listen() asks again.
            if (listening.get(key) === started) listening.delete(key);
            throw error;
          },
        );
        listening.set(key, started);
      }
      await started;
      let set = link.listeners.get(key);
      if (set === undefined) {
        set = new Set();
        link.listeners.set(key, set);
      }
      set.add(callback);
      return async () => {
        const current = link.listeners.get(key);
        if (current === undefined || !current.delete(callback) || current.size > 0) return;
        link.listeners.delete(key);
        listening.delete(key);
        if (link.gone === null) await link.call<null>({ op: 'unlisten', channel: key });
      };
    },
    query: (text, params = []) => link.call({ op: 'query', text, params }),
    async dumpDataDir(compression = 'auto') {
      const bytes = await link.call<ArrayBuffer>({ op: 'dump', compression });
      return new Blob([bytes]);
    },
    async close() {
      link.closing = true;
      try {
        if (link.gone === null) await link.call<null>({ op: 'close' });
      } finally {
        link.gone ??= new Error('the embedded database is closed');
        await link.worker.terminate();
      }
    },
  };
}

/** The thread, with the process's node flags when it may have them. */
function spawnThread(data: ThreadOptions): Worker {
  const spawn = (execArgv: string[]) =>
    // TypeScript, which node runs by stripping the types (node >= 22.18 does so by default, as
    // for `npm start`), in worker threads too.
    new Worker(ENTRY, {
      workerData: data,
      transferList: data.loadDataDir === undefined ? [] : [data.loadDataDir],
      execArgv,
    });
  try {
    return spawn([...process.execArgv]);
  } catch (error) {
    // A flag a thread may not have (--max-old-space-size, --stack-size, …): the thread goes without
    // the process's flags rather than the process without its database.
    if ((error as NodeJS.ErrnoException).code !== 'ERR_WORKER_INVALID_EXEC_ARGV') throw error;
    return spawn([]);
  }
}

/** The thread and what waits on it: calls by id, LISTEN callbacks, the connections open on it. */
class ThreadLink {
  readonly worker: Worker;
  /** Resolves when the thread has opened the cluster; rejects when it could not. */
  readonly ready: Promise<void>;
  readonly listeners = new Map<string, Set<(payload: string) => void>>();
  readonly sockets = new Set<ThreadSocket>();
  /** Why the thread can no longer be asked anything (it failed, exited or was closed); null while it runs. */
  gone: Error | null = null;
  /** close() was called: the thread's exit is the end asked for, not a failure. */
  closing = false;
  /** Connection ids, increasing: the thread ignores a reset from a connection older than its latest. */
  nextSocket = 1;
  readonly #pending = new Map<number, { resolve(value: unknown): void; reject(error: Error): void }>();
  #nextId = 1;

  constructor(worker: Worker, onFailure: ((error: Error) => void) | undefined) {
    this.worker = worker;
    this.ready = new Promise<void>((resolve, reject) => {
      worker.on('message', (reply: ThreadReply) => {
        if ('ready' in reply) {
          if (reply.ready) resolve();
          else reject(Object.assign(new Error(reply.error.message), { stack: reply.error.stack }));
          return;
        }
        this.#answer(reply);
      });
      // The thread failing (or exiting) fails what waits on it and every connection, as a server
      // going away would; pg reports it to the query and the pool drops the connection. After a close
      // asked for, its exit is no failure: what waits fails as closed, and a connection still open
      // (pg's pool ends its clients without waiting for them) just ends.
      const fail = (error: Error) => {
        if (this.gone === null && !this.closing) onFailure?.(error);
        this.gone ??= error;
        reject(error);
        for (const waiting of this.#pending.values()) waiting.reject(error);
        this.#pending.clear();
        for (const socket of this.sockets) socket.destroy(this.closing ? undefined : error);
      };
      worker.on('error', fail);
      worker.on('exit', (code) =>
        fail(
          new Error(
            this.closing ? 'the embedded database is closed' : `the embedded database's thread exited (code ${code})`,
          ),
        ),
      );
    });
  }

  /** Ask the thread; resolves with its answer. */
  call<T>(request: Request, transfer: ArrayBuffer[] = []): Promise<T> {
    if (this.gone !== null) return Promise.reject(this.gone);
    const id = this.#nextId++;
    // The thread keeps the process alive only while something waits on it, as PGlite in this
    // thread did not at all.
    if (this.#pending.size === 0) this.worker.ref();
    return new Promise<T>((resolve, reject) => {
      this.#pending.set(id, { resolve: resolve as (value: unknown) => void, reject });
      try {
        this.worker.postMessage({ ...request, id }, transfer);
      } catch (error) {
        // A value that cannot be sent (a function among a statement's parameters, …).
        this.#pending.delete(id);
        if (this.#pending.size === 0) this.worker.unref();
        reject(error);
      }
    });
  }

  /** A notification, or the answer to a call. */
  #answer(reply: Exclude<ThreadReply, { ready: boolean }>): void {
    if ('notify' in reply) {
      for (const callback of this.listeners.get(reply.notify.channel) ?? []) callback(reply.notify.payload);
      return;
    }
    const waiting = this.#pending.get(reply.id);
    if (waiting === undefined) return;
    this.#pending.delete(reply.id);
    if (this.#pending.size === 0) this.worker.unref();
    if (reply.ok) waiting.resolve(reply.value);
    else {
      const error = new Error(reply.error.message) as Error & { code?: string };
      if (reply.error.code !== undefined) error.code = reply.error.code;
      waiting.reject(error);
    }
  }
}

/** One pg connection: what a tick writes goes to the thread as one message, its answer comes back as read bytes. */
class ThreadSocket extends Duplex {
  readonly #link: ThreadLink;
  readonly #id: number;
  #waiting: Buffer[] = [];
  #scheduled = false;
  constructor(link: ThreadLink) {
    super();
    this.#link = link;
    this.#id = link.nextSocket++;
    link.sockets.add(this);
    this.once('close', () => link.sockets.delete(this));
  }
  connect(): this {
    process.nextTick(() => this.emit('connect'));
    return this;
  }
  setNoDelay(): this {
    return this;
  }
  setKeepAlive(): this {
    return this;
  }
  ref(): this {
    return this;
  }
  unref(): this {
    return this;
  }
  override _read(): void {}
  override _write(chunk: Buffer, _encoding: BufferEncoding, done: (error?: Error | null) => void): void {
    this.#waiting.push(chunk);
    if (!this.#scheduled) {
      this.#scheduled = true;
      queueMicrotask(() => this.#send());
    }
    done();
  }
  override _final(done: (error?: Error | null) => void): void {
    this.#send();
    this.#reset();
    // The end of the connection, once everything written before it is answered.
    this.#link.call<null>({ op: 'ping' }).then(
      () => {
        this.push(null);
        done();
      },
      (error: Error) => done(error),
    );
  }
  override _destroy(error: Error | null, done: (error?: Error | null) => void): void {
    this.#reset();
    done(error);
  }
  /**
   * A connection that goes away ends its transaction, as with a server: pg drops a client
   * mid-transaction on an error, and the next connection is the same PGlite session. (Sent at
   * once, so before a later connection's bytes; the thread ignores it once a newer connection
   * has started.)
   */
  #reset(): void {
    if (this.#link.gone === null) this.#link.call<null>({ op: 'reset', socket: this.#id }).catch(() => {});
  }
  #send(): void {
    this.#scheduled = false;
    if (this.destroyed) this.#waiting = [];
    if (this.#waiting.length === 0) return;
    const bytes = this.#waiting.length === 1 ? (this.#waiting[0] as Buffer) : Buffer.concat(this.#waiting);
    this.#waiting = [];
    // A copy of its own for the thread (pg's buffers may be pooled views).
    const message = new Uint8Array(bytes);
    this.#link.call<Uint8Array>({ op: 'exec', socket: this.#id, bytes: message }, [message.buffer as ArrayBuffer]).then(
      (answer) => {
        if (answer.length > 0 && !this.destroyed)
          this.push(Buffer.from(answer.buffer, answer.byteOffset, answer.byteLength));
      },
      (error: Error) => this.destroy(error),
    );
  }
}

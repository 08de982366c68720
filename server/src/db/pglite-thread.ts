// The embedded database's own thread. PGlite runs PostgreSQL compiled to WASM, and executing a
// statement is synchronous: in the server's thread every query — the request log's batches, a
// billing run, a search — held up every HTTP request for as long as it ran. Here it runs beside the
// event loop, as a PostgreSQL server would: this thread takes the wire protocol's bytes exactly as
// a client sends them and answers with the bytes PostgreSQL writes (db/embedded.ts is the other
// end). Messages are handled one at a time, in order.

import { readFile } from 'node:fs/promises';
import { parentPort, workerData } from 'node:worker_threads';
import { PGlite } from '@electric-sql/pglite';
import { btree_gin } from '@electric-sql/pglite/contrib/btree_gin';
import { pg_trgm } from '@electric-sql/pglite/contrib/pg_trgm';

export interface ThreadOptions {
  /** Where the cluster's files live; absent: in memory. */
  dataDir?: string;
  /** A `dumpDataDir()` tarball to start from. */
  loadDataDir?: ArrayBuffer;
  /** A `dumpDataDir()` tarball (not compressed) to create the new cluster in `dataDir` from (db/template.ts), read here. */
  templatePath?: string;
  /**
   * Run a first statement once open, before anything asked: the first costs a third to half a
   * second (PGlite's WebAssembly compiled on first use, the catalogue's caches filled), which a
   * thread started ahead of its process's modules (db/embedded-start.ts) pays while they load.
   */
  warm?: boolean;
}

export type ThreadRequest =
  /** Wire-protocol bytes of connection `socket` (each connection begins with its startup packet). */
  | { id: number; op: 'exec'; socket: number; bytes: Uint8Array }
  /** Connection `socket` ended: end its transaction, as a server does when a client goes away. */
  | { id: number; op: 'reset'; socket: number }
  | { id: number; op: 'listen'; channel: string }
  | { id: number; op: 'unlisten'; channel: string }
  | { id: number; op: 'query'; text: string; params: unknown[] }
  | { id: number; op: 'dump'; compression: 'none' | 'gzip' | 'auto' }
  | { id: number; op: 'ping' }
  | { id: number; op: 'close' };

export type ThreadReply =
  | { id: number; ok: true; value: unknown }
  | { id: number; ok: false; error: { message: string; stack?: string; code?: string } }
  | { notify: { channel: string; payload: string } }
  | { ready: true }
  | { ready: false; error: { message: string; stack?: string } };

if (parentPort === null) throw new Error('pglite-thread.ts runs as a worker thread');
const port = parentPort;
const post = (reply: ThreadReply, transfer: ArrayBuffer[] = []) => port.postMessage(reply, transfer);

/** NotificationResponse messages ('A') in a stretch of PostgreSQL's output, as they are sent on. */
function notificationsIn(bytes: Uint8Array): void {
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  let at = 0;
  while (at + 5 <= bytes.length) {
    const length = view.getInt32(at + 1);
    if (length < 4) break;
    if (bytes[at] === 0x41) {
      const start = at + 9; // type, length, the sender's pid
      const channelEnd = bytes.indexOf(0, start);
      const payloadEnd = bytes.indexOf(0, channelEnd + 1);
      const text = (from: number, to: number) => Buffer.from(bytes.buffer, bytes.byteOffset + from, to - from);
      post({
        notify: {
          channel: text(start, channelEnd).toString('utf8'),
          payload: text(channelEnd + 1, payloadEnd).toString('utf8'),
        },
      });
    }
    at += 1 + length;
  }
}

async function main(): Promise<void> {
  const pglite = await openCluster(workerData as ThreadOptions);
  if (pglite === null) return;
  const session = createSession(pglite);
  let queue = (workerData as ThreadOptions).warm ? warmUp(pglite) : Promise.resolve();
  port.on('message', (request: ThreadRequest) => {
    queue = queue.then(async () => {
      try {
        const handled = await session.handle(request);
        if (handled !== 'later') post({ id: request.id, ok: true, value: handled.value }, handled.transfer);
      } catch (error) {
        post({ id: request.id, ok: false, error: failure(error) });
      }
      if (request.op !== 'close') await session.outsideTransaction();
      else port.close();
    });
  });
  post({ ready: true });
}

/** The cluster, opened; null when it could not be (the other end is told why). */
async function openCluster(options: ThreadOptions): Promise<PGlite | null> {
  try {
    const load =
      options.loadDataDir !== undefined
        ? new Blob([options.loadDataDir])
        : options.templatePath !== undefined
          ? new Blob([await readFile(options.templatePath)])
          : undefined;
    return await PGlite.create({
      ...(options.dataDir === undefined ? {} : { dataDir: options.dataDir }),
      ...(load === undefined ? {} : { loadDataDir: load }),
      extensions: { pg_trgm, btree_gin },
    });
  } catch (error) {
    const e = error as Error;
    post({ ready: false, error: { message: e.message, ...(e.stack === undefined ? {} : { stack: e.stack }) } });
    return null;
  }
}

/** The first statement (ThreadOptions.warm), what every start asks first; its failure is no matter. */
async function warmUp(pglite: PGlite): Promise<void> {
  try {
    await pglite.query('select name from kysely_migration');
  } catch {
    // A database without it yet: the statement warmed what it could.
  }
}

/** An error as it crosses to the other end. */
function failure(error: unknown): { message: string; stack?: string; code?: string } {
  const e = error as Error & { code?: string };
  return {
    message: e.message,
    ...(e.stack === undefined ? {} : { stack: e.stack }),
    ...(e.code === undefined ? {} : { code: e.code }),
  };
}

type Handled = { value: unknown; transfer?: ArrayBuffer[] } | 'later';

/**
 * The one PGlite session every connection shares: whose transaction a reset may end, the
 * startup answer, the channels listened on, and LISTEN/UNLISTEN held back while a transaction is
 * open.
 */
function createSession(pglite: PGlite): {
  handle(request: ThreadRequest): Promise<Handled>;
  /** Run what waited for the end of a transaction, now that none is open. */
  outsideTransaction(): Promise<void>;
} {
  const unlisteners = new Map<string, () => Promise<void>>();
  /** The connection that sent the latest startup packet: a reset from an older one is late. */
  let current = 0;
  /** The answer to the first startup packet, given to later ones (each would cost PGlite memory). */
  let startupAnswer: Uint8Array | null = null;
  /**
   * LISTEN and UNLISTEN wait until no transaction is open: PGlite is one session, and run inside a
   * connection's transaction they would commit or roll back with it (a rolled-back LISTEN hears
   * nothing, silently).
   */
  const deferred: (() => Promise<void>)[] = [];

  const listen = async (channel: string) => {
    if (unlisteners.has(channel)) return;
    // Quoted: the channel is the name as given (PGlite strips the quotes for its own listeners).
    const quoted = `"${channel.replaceAll('"', '""')}"`;
    // Notifications in the answers of PGlite's own statements come here; those in the protocol's
    // answers are found by notificationsIn.
    unlisteners.set(channel, await pglite.listen(quoted, (payload) => post({ notify: { channel, payload } })));
  };
  const unlisten = async (channel: string) => {
    const stop = unlisteners.get(channel);
    unlisteners.delete(channel);
    await stop?.();
  };

  async function handle(request: ThreadRequest): Promise<Handled> {
    switch (request.op) {
      case 'exec': {
        if (request.bytes[0] === 0) {
          // A startup packet (its length's first byte): a new connection to the one session.
          current = request.socket;
          if (startupAnswer !== null) return { value: startupAnswer.slice() };
        }
        const answer = await execProtocol(pglite, request.bytes);
        if (request.bytes[0] === 0) startupAnswer = answer.slice();
        notificationsIn(answer);
        // Transferred when the answer has its buffer to itself (Buffer.concat's may be pooled).
        const whole = answer.byteOffset === 0 && answer.byteLength === answer.buffer.byteLength;
        return { value: answer, transfer: whole ? [answer.buffer as ArrayBuffer] : [] };
      }
      case 'reset': {
        if (request.socket === current && pglite.isInTransaction()) await pglite.exec('rollback');
        return { value: null };
      }
      case 'listen':
      case 'unlisten': {
        const run = () => (request.op === 'listen' ? listen(request.channel) : unlisten(request.channel));
        if (!pglite.isInTransaction()) {
          await run();
          return { value: null };
        }
        deferred.push(async () => {
          try {
            await run();
            post({ id: request.id, ok: true, value: null });
          } catch (error) {
            post({ id: request.id, ok: false, error: failure(error) });
          }
        });
        return 'later';
      }
      case 'query': {
        const result = await pglite.query(request.text, request.params);
        return { value: { rows: result.rows } };
      }
      case 'dump': {
        const file = await pglite.dumpDataDir(request.compression);
        const bytes = await file.arrayBuffer();
        return { value: bytes, transfer: [bytes] };
      }
      case 'ping':
        return { value: null };
      case 'close': {
        await pglite.close();
        return { value: null };
      }
    }
  }

  return {
    handle,
    async outsideTransaction() {
      while (deferred.length > 0 && !pglite.isInTransaction()) {
        const next = deferred.shift() as () => Promise<void>;
        await next();
      }
    },
  };
}

/**
 * Run wire-protocol bytes as PostgreSQL writes them, unparsed (the server's pg parses them);
 * PGlite's own parsing would also keep every message of every answer (its result list is reset
 * only by its own query methods).
 */
async function execProtocol(pglite: PGlite, bytes: Uint8Array): Promise<Uint8Array> {
  const chunks: Uint8Array[] = [];
  await pglite.execProtocolRawStream(bytes, { onRawData: (data) => chunks.push(data.slice()) });
  return chunks.length === 0
    ? new Uint8Array(0)
    : chunks.length === 1
      ? (chunks[0] as Uint8Array)
      : Buffer.concat(chunks);
}

await main();

// Opening the embedded database up to its thread answering: the data directory made private and
// locked, then the cluster opened in its thread (db/embedded.ts) — or, for an empty directory whose
// target allows it, created from the migrated template (db/template.ts) instead of by initdb.
//
// `npm start` begins this before the server's modules load (server/src/early-start.ts, from
// boot.ts): the thread starts PGlite, opens the cluster and runs its first statement on the second
// core while the main thread loads the modules, instead of after them (about 1.8 s of loading,
// then 1 to 2 s of opening, one after the other). openDatabase takes what was begun when its
// target is the same data directory. Nothing here imports in the main thread while it loads.

import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { type EmbeddedPostgres, startEmbedded } from './embedded.ts';
import { acquireDataDirLock, type DataDirLock, ensurePrivateDir, tightenTree } from './lock.ts';
import { cachedTemplate } from './template.ts';

export interface EmbeddedTarget {
  /** Directory holding the data files and the lock; null keeps everything in memory. */
  dataDir: string | null;
  /** A tarball from `dumpDataDir()` to start from (the test harness clones one per file). */
  loadDataDir?: Blob | ArrayBuffer;
  /** Shown to a second process that finds the lock taken. */
  role?: string;
  /**
   * An empty `dataDir` gets its cluster from the migrated template when this release's is built
   * (`npm start`; the CLIs create theirs the long way).
   */
  template?: boolean;
}

/** An embedded database on its way to open. */
export interface EmbeddedOpening {
  readonly target: EmbeddedTarget;
  readonly lock: DataDirLock | null;
  /** Files and directories of the data directory that were open to other users, now private. */
  readonly tightened: number;
  /** The template a new cluster is being created from; null when none. */
  readonly template: string | null;
  /** The thread, once it has opened the cluster; rejects (the lock released) when it could not. */
  readonly opened: Promise<EmbeddedPostgres>;
  /** Told when the thread fails once started (the process's logger, once there is one). */
  onFailure: ((error: Error) => void) | null;
}

/** Lock the data directory and start the thread (synchronously, without `loadDataDir`). */
export function beginEmbedded(target: EmbeddedTarget, options: { warm?: boolean } = {}): EmbeddedOpening {
  let lock: DataDirLock | null = null;
  let storage: string | undefined;
  let tightened = 0;
  if (target.dataDir !== null) {
    // F4: the data directory holds the whole database; nobody but its owner may enter it.
    const loose = ensurePrivateDir(target.dataDir);
    lock = acquireDataDirLock(target.dataDir, target.role ?? 'hostplane');
    storage = join(target.dataDir, 'pglite');
    try {
      ensurePrivateDir(storage);
      // Files left by older versions (0666, 0755); what is created from now on is private
      // through the umask and the tightening once the thread has opened the cluster.
      tightened = tightenTree(storage) + (loose ? 1 : 0);
    } catch (error) {
      lock.release();
      throw error;
    }
  }
  const template =
    storage !== undefined &&
    target.template === true &&
    target.loadDataDir === undefined &&
    !existsSync(join(storage, 'PG_VERSION'))
      ? cachedTemplate()
      : null;
  const opening: { -readonly [K in keyof EmbeddedOpening]: EmbeddedOpening[K] } = {
    target,
    lock,
    tightened,
    template,
    onFailure: null,
    opened: Promise.resolve(null as unknown as EmbeddedPostgres),
  };
  opening.opened = open(opening, storage, options.warm === true);
  // Awaited by whoever takes the opening; until then a failure must not count as unhandled.
  opening.opened.catch(() => {});
  return opening;
}

async function open(opening: EmbeddedOpening, storage: string | undefined, warm: boolean): Promise<EmbeddedPostgres> {
  const { target, lock, template } = opening;
  try {
    const pglite = await startEmbedded({
      ...(storage === undefined ? {} : { dataDir: storage }),
      ...(target.loadDataDir === undefined ? {} : { loadDataDir: target.loadDataDir }),
      ...(template === null ? {} : { templatePath: template }),
      warm,
      onFailure: (error) => opening.onFailure?.(error),
    });
    // PGlite unpacks a new cluster with the modes of its bundled archive (0666, 0755), not
    // through the umask: take group and other bits off what it just created.
    if (storage !== undefined) tightenTree(storage);
    return pglite;
  } catch (error) {
    lock?.release();
    throw error;
  }
}

/** What `prestartEmbedded` began and no openDatabase has taken yet. */
let prestarted: EmbeddedOpening | null = null;

/**
 * Begin opening `target` for a process that will open it later (early-start.ts); false when that
 * could not begin (a lock held by another process, a directory not ours, …): openDatabase then
 * meets the same problem itself and reports it.
 */
export function prestartEmbedded(target: EmbeddedTarget): boolean {
  try {
    prestarted = beginEmbedded(target, { warm: true });
    return true;
  } catch {
    return false;
  }
}

/**
 * The opening prestartEmbedded began for this target, or null. One begun for another target (no
 * entry point asks for one it will not open) is closed, its lock released.
 */
export async function takePrestarted(target: EmbeddedTarget): Promise<EmbeddedOpening | null> {
  const begun = prestarted;
  prestarted = null;
  if (begun === null) return null;
  const same =
    begun.target.dataDir === target.dataDir &&
    target.loadDataDir === undefined &&
    begun.target.template === target.template &&
    begun.target.role === target.role;
  if (same) return begun;
  try {
    await (await begun.opened).close();
  } catch {
    // It failed to open: nothing runs.
  } finally {
    begun.lock?.release();
  }
  return null;
}

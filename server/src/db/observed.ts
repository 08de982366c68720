// Which tables this process has just changed, told the moment the change is committed.
// In-memory read caches (core/services/list-cache.ts) drop what a write made stale; other
// processes learn of the same change from the database's own triggers (NOTIFY, core/bus.ts), but
// that message arrives a moment after the commit, while this process's next request may already
// be in. So the Kysely driver is wrapped: every statement's text is scanned for the tables it
// writes (`insert into`, `update`, `delete from`, `truncate`, also inside CTEs and raw SQL), and
// the writers are told after an autocommit statement returns, or after COMMIT returns for what a
// transaction wrote (nothing for a rollback). A listener runs synchronously, before the caller
// sees the statement or commit complete.

import {
  type CompiledQuery,
  type DatabaseConnection,
  type Driver,
  PostgresDialect,
  type PostgresDialectConfig,
  type QueryCompiler,
  type QueryResult,
  type TransactionSettings,
} from 'kysely';

export type WriteListener = (tables: ReadonlySet<string>) => void;

export interface WriteObserver {
  /** Called with the tables of each committed write of this process. */
  subscribe(listener: WriteListener): () => void;
}

const WRITE = /\b(?:insert\s+into|update|delete\s+from|truncate(?:\s+table)?)\s+(?:only\s+)?"?([a-z_][a-z0-9_]*)"?/gi;

/** The tables a statement writes (lower case), or null when it writes none. */
export function writtenTables(text: string): Set<string> | null {
  let found: Set<string> | null = null;
  for (const match of text.matchAll(WRITE)) {
    found ??= new Set();
    found.add((match[1] as string).toLowerCase());
  }
  return found;
}

class ObservedConnection implements DatabaseConnection {
  /** Tables written inside the open transaction (null outside one). */
  pending: Set<string> | null = null;

  readonly inner: DatabaseConnection;
  readonly #tell: (tables: ReadonlySet<string>) => void;

  constructor(inner: DatabaseConnection, tell: (tables: ReadonlySet<string>) => void) {
    this.inner = inner;
    this.#tell = tell;
  }

  async executeQuery<R>(query: CompiledQuery): Promise<QueryResult<R>> {
    const result = await this.inner.executeQuery<R>(query);
    const tables = writtenTables(query.sql);
    if (tables) {
      if (this.pending) for (const t of tables) this.pending.add(t);
      else this.#tell(tables);
    }
    return result;
  }

  streamQuery<R>(query: CompiledQuery, chunkSize?: number): AsyncIterableIterator<QueryResult<R>> {
    return this.inner.streamQuery<R>(query, chunkSize);
  }
}

class ObservedDriver implements Driver {
  readonly inner: Driver;
  readonly tell: (tables: ReadonlySet<string>) => void;

  constructor(inner: Driver, tell: (tables: ReadonlySet<string>) => void) {
    this.inner = inner;
    this.tell = tell;
  }

  init(): Promise<void> {
    return this.inner.init();
  }

  async acquireConnection(): Promise<DatabaseConnection> {
    return new ObservedConnection(await this.inner.acquireConnection(), this.tell);
  }

  async beginTransaction(connection: DatabaseConnection, settings: TransactionSettings): Promise<void> {
    const c = connection as ObservedConnection;
    await this.inner.beginTransaction(c.inner, settings);
    c.pending = new Set();
  }

  async commitTransaction(connection: DatabaseConnection): Promise<void> {
    const c = connection as ObservedConnection;
    const written = c.pending;
    c.pending = null;
    await this.inner.commitTransaction(c.inner);
    if (written && written.size > 0) this.tell(written);
  }

  async rollbackTransaction(connection: DatabaseConnection): Promise<void> {
    const c = connection as ObservedConnection;
    c.pending = null;
    await this.inner.rollbackTransaction(c.inner);
  }

  // Savepoints: what a rolled-back savepoint wrote is still counted (a spurious drop is harmless).
  async savepoint(
    connection: DatabaseConnection,
    name: string,
    compileQuery: QueryCompiler['compileQuery'],
  ): Promise<void> {
    await this.inner.savepoint?.((connection as ObservedConnection).inner, name, compileQuery);
  }

  async rollbackToSavepoint(
    connection: DatabaseConnection,
    name: string,
    compileQuery: QueryCompiler['compileQuery'],
  ): Promise<void> {
    await this.inner.rollbackToSavepoint?.((connection as ObservedConnection).inner, name, compileQuery);
  }

  async releaseSavepoint(
    connection: DatabaseConnection,
    name: string,
    compileQuery: QueryCompiler['compileQuery'],
  ): Promise<void> {
    await this.inner.releaseSavepoint?.((connection as ObservedConnection).inner, name, compileQuery);
  }

  releaseConnection(connection: DatabaseConnection): Promise<void> {
    const c = connection as ObservedConnection;
    c.pending = null;
    return this.inner.releaseConnection(c.inner);
  }

  destroy(): Promise<void> {
    return this.inner.destroy();
  }
}

/** PostgresDialect whose driver tells `observer`'s listeners of every committed write. */
export function observedPostgresDialect(config: PostgresDialectConfig): {
  dialect: PostgresDialect;
  observer: WriteObserver;
} {
  const listeners = new Set<WriteListener>();
  const tell = (tables: ReadonlySet<string>) => {
    for (const listener of listeners) {
      try {
        listener(tables);
      } catch {
        // A cache's bookkeeping never fails the write that already committed.
      }
    }
  };
  class Observed extends PostgresDialect {
    override createDriver(): Driver {
      return new ObservedDriver(super.createDriver(), tell);
    }
  }
  return {
    dialect: new Observed(config),
    observer: {
      subscribe(listener) {
        listeners.add(listener);
        return () => listeners.delete(listener);
      },
    },
  };
}

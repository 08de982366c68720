// Per-account read cache of what lists show: instance and service lists are polled by dashboards
// and scripts, and a list answered from the database every time costs two round trips and twenty
// rows to parse per poll. An entry is served until anything it was read from changes:
// - this process's own committed writes to the tables a list reads drop every entry at once,
//   before the commit returns (db/observed.ts): a client's next request sees its own change;
// - other processes' writes arrive as NOTIFY from the database's triggers (migration 0015,
//   core/bus.ts): the account's entries, or all of them for the catalog; milliseconds late;
// - a lost listener connection (the bus sends `all`) drops everything;
// - as a last guard an entry is never older than MAX_AGE_MS.
// A read that started before a drop is not stored (its rows may predate the change): each
// account and the whole cache carry a generation, compared before storing.

import type { WriteObserver } from '../../db/observed.ts';
import type { Bus, BusMessage } from '../bus.ts';

/** Even with no notice at all, an entry is read again after this long. */
export const MAX_AGE_MS = 10_000;
/** Accounts kept; the least recently filled go first. */
const MAX_ACCOUNTS = 20_000;
/** Distinct pages and filters kept per account (a client walking many pages starts again). */
const MAX_KEYS = 32;

export interface ReadCache<V> {
  /**
   * The cached value of the account's `key`, or what `load` reads: stored unless something changed
   * meanwhile, or `keep` says not to.
   */
  read(accountId: number, key: string, load: () => Promise<V>, keep?: (value: V) => boolean): Promise<V>;
  /** Drop one account's entries, or all of them. */
  drop(accountId?: number): void;
}

export interface ReadCacheOptions {
  bus: Bus;
  writes: WriteObserver;
  /** Tables whose committed writes in this process drop every entry. */
  tables: readonly string[];
  /** Bus topics that drop every entry (besides `all`). */
  sharedTopics: readonly BusMessage['topic'][];
  /** Keys kept per account (default 32); past it the account's entries start again. */
  maxKeys?: number;
  /** Bus topic whose `id` is an account: that account's entries drop (none: only shared drops). */
  accountTopic?: BusMessage['topic'];
}

export function createReadCache<V>(options: ReadCacheOptions): ReadCache<V> {
  interface Entry {
    value: V;
    at: number;
  }
  const accounts = new Map<number, Map<string, Entry>>();
  const generations = new Map<number, number>();
  let generation = 0;
  const watched = new Set(options.tables);
  const maxKeys = options.maxKeys ?? MAX_KEYS;

  function drop(accountId?: number): void {
    if (accountId === undefined) {
      generation++;
      accounts.clear();
      generations.clear();
      return;
    }
    // The bookkeeping of accounts noticed stays bounded: past the limit, start again from nothing.
    if (generations.size >= 4 * MAX_ACCOUNTS && !generations.has(accountId)) {
      drop();
      return;
    }
    generations.set(accountId, (generations.get(accountId) ?? 0) + 1);
    accounts.delete(accountId);
  }

  options.writes.subscribe((tables) => {
    for (const table of tables) {
      if (watched.has(table)) {
        drop();
        return;
      }
    }
  });
  options.bus.subscribe((message) => {
    if (message.topic === 'all' || options.sharedTopics.includes(message.topic)) drop();
    else if (options.accountTopic && message.topic === options.accountTopic && 'id' in message) drop(message.id);
  });

  /**
   * Reads under way, by account and key, with the generations they began under. Requests that
   * miss together share one read: otherwise every request of the account in flight reads the list
   * itself, and on a busy node those reads queue behind each other. A request joins a read only if
   * nothing was dropped since it began, so a client's next request still sees its own change.
   */
  const reading = new Map<string, { before: number; accountBefore: number; value: Promise<V> }>();

  return {
    drop,
    async read(accountId, key, load, keep) {
      const now = performance.now();
      const entry = accounts.get(accountId)?.get(key);
      if (entry && now - entry.at < MAX_AGE_MS) return entry.value;
      const before = generation;
      const accountBefore = generations.get(accountId) ?? 0;
      const readKey = `${accountId}\u0000${key}`;
      const under = reading.get(readKey);
      if (under && under.before === before && under.accountBefore === accountBefore) return under.value;
      const started = performance.now();
      const loading = load();
      const mine = { before, accountBefore, value: loading };
      reading.set(readKey, mine);
      let value: V;
      try {
        value = await loading;
      } finally {
        if (reading.get(readKey) === mine) reading.delete(readKey);
      }
      if (
        generation === before &&
        (generations.get(accountId) ?? 0) === accountBefore &&
        (keep === undefined || keep(value))
      ) {
        let entries = accounts.get(accountId);
        if (!entries) {
          if (accounts.size >= MAX_ACCOUNTS) {
            const oldest = accounts.keys().next().value;
            if (oldest !== undefined) accounts.delete(oldest);
          }
          entries = new Map();
          accounts.set(accountId, entries);
        } else if (entries.size >= maxKeys && !entries.has(key)) {
          entries.clear();
        }
        entries.set(key, { value, at: started });
      }
      return value;
    },
  };
}

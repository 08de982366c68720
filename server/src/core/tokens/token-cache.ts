// The per-process cache of looked-up API tokens (token.service.ts authenticates through it): a
// token's row with its account's suspension, kept while it is used and confirmed against the
// database every few seconds in one query off the request path (see refresh), so a cached token
// never makes its request wait. Revocation and suspension evict entries at once, here and in
// every other process, through the bus; tokens that do not exist are remembered briefly.

import { type Kysely, sql } from 'kysely';
import type { ApiToken, DB } from '../../db/tables.ts';
import type { Bus } from '../bus.ts';
import { parseCidr } from '../net/ip.ts';

/** Timing of the token cache (overridable for tests). */
export interface TokenCacheTiming {
  /** A cached token is used this long after the database last confirmed it; then it is looked up again. */
  ttlMs: number;
  /** Every this often, the tokens in use are confirmed again, in one query (well inside ttlMs). */
  refreshMs: number;
  /** A token unused this long is forgotten rather than confirmed (looked up again at its next use). */
  idleMs: number;
}
const CACHE_TIMING: TokenCacheTiming = { ttlMs: 10_000, refreshMs: 4_000, idleMs: 60_000 };
/** Tokens confirmed per refresh query. */
const REFRESH_CHUNK = 5_000;
/** How long, and for how many hashes at most, a lookup remembers that a token does not exist. */
const UNKNOWN_TTL_MS = 5_000;
const UNKNOWN_MAX = 10_000;

export interface CachedToken {
  token: Pick<ApiToken, 'id' | 'account_id' | 'name' | 'scopes' | 'allowed_cidrs' | 'expires_at' | 'revoked_at'>;
  cidrs: NonNullable<ReturnType<typeof parseCidr>>[];
  suspended: boolean;
  /** When the database last confirmed it (epoch ms: the time its query was sent). */
  at: number;
  /** When a request last used it. */
  used: number;
}

/** What the token cache did: database reads made for a request, and refresh queries. */
export interface TokenCacheStats {
  /** Requests that waited for a lookup: the token was not cached, or its entry was stale. */
  lookups: number;
  /** Refresh queries made (each confirms every token in use). */
  refreshes: number;
}

export interface TokenCacheOptions {
  db: Kysely<DB>;
  bus: Bus;
  cacheTiming?: Partial<TokenCacheTiming>;
  /** The cache's time in epoch ms (tests drive it by hand; the wall clock otherwise). */
  cacheNow?: () => number;
}

const TOKEN_COLUMNS = [
  'api_tokens.id',
  'api_tokens.account_id',
  'api_tokens.name',
  'api_tokens.scopes',
  'api_tokens.allowed_cidrs',
  'api_tokens.expires_at',
  'api_tokens.revoked_at',
  'accounts.suspended_at',
] as const;

const tokensWithAccount = (db: Kysely<DB>) =>
  db.selectFrom('api_tokens').innerJoin('accounts', 'accounts.id', 'api_tokens.account_id').select(TOKEN_COLUMNS);
type TokenRow = Awaited<ReturnType<ReturnType<typeof tokensWithAccount>['executeTakeFirstOrThrow']>>;

function entryOf(row: TokenRow, at: number, used: number): CachedToken {
  const { suspended_at, ...token } = row;
  return {
    token,
    cidrs: token.allowed_cidrs.map((c) => parseCidr(c)).filter((c) => c !== null),
    suspended: suspended_at !== null,
    at,
    used,
  };
}

/** The cache's entries and what evicts them, shared by its lookup and its refresh. */
interface CacheState {
  db: Kysely<DB>;
  now: () => number;
  timing: TokenCacheTiming;
  cache: Map<string, CachedToken>;
  stats: TokenCacheStats;
  /** Bumped by every eviction: a refresh that read the database before one must not undo it. */
  evictions(): number;
}

/** Evict, on the bus's word, every entry of a token, of an account, or all of them. */
function evictOnMessages(bus: Bus, cache: Map<string, CachedToken>, evicted: () => void): void {
  bus.subscribe((message) => {
    switch (message.topic) {
      case 'all':
        evicted();
        cache.clear();
        return;
      case 'token':
        evicted();
        for (const [k, v] of cache) if (v.token.id === message.id) cache.delete(k);
        return;
      case 'account':
        evicted();
        for (const [k, v] of cache) if (v.token.account_id === message.id) cache.delete(k);
        return;
    }
  });
}

/**
 * Confirm every cached token used in the last idleMs against the database, in one query per
 * REFRESH_CHUNK tokens, and forget the others. Each entry then stays fresh while it is used, so
 * the request path reads the database only for a token it has not seen, rather than once per
 * token in use every ttlMs. A token changed without a bus message (by hand in SQL) is seen
 * within refreshMs.
 */
async function refresh(state: CacheState): Promise<void> {
  const { cache, timing } = state;
  const sent = state.now();
  const due = new Map<number, string>();
  for (const [hash, entry] of cache) {
    if (sent - entry.used >= timing.idleMs) cache.delete(hash);
    else due.set(entry.token.id, hash);
  }
  const ids = [...due.keys()];
  for (let at = 0; at < ids.length; at += REFRESH_CHUNK) {
    const chunk = ids.slice(at, at + REFRESH_CHUNK);
    const since = state.evictions();
    state.stats.refreshes++;
    const rows = await tokensWithAccount(state.db)
      .select('api_tokens.token_hash')
      .where(sql<boolean>`api_tokens.id = any(${`{${chunk.join(',')}}`}::integer[])`)
      .execute();
    // An eviction (revocation, suspension) while the query ran: its entries may be cached anew
    // by then, and these rows may predate it. Leave them all to their ttl and the next refresh.
    if (state.evictions() !== since) continue;
    for (const { token_hash, ...row } of rows) {
      due.delete(row.id);
      const held = cache.get(token_hash);
      if (held !== undefined && held.token.id === row.id) cache.set(token_hash, entryOf(row, sent, held.used));
    }
    // What the query did not find was deleted meanwhile (with its account): no longer served.
    for (const id of chunk) {
      const hash = due.get(id);
      if (hash !== undefined && cache.get(hash)?.token.id === id) cache.delete(hash);
    }
  }
}

export function createTokenCache(options: TokenCacheOptions) {
  const now = options.cacheNow ?? Date.now;
  const timing: TokenCacheTiming = { ...CACHE_TIMING, ...options.cacheTiming };
  const cache = new Map<string, CachedToken>();
  const unknownTokens = new Map<string, number>();
  const stats: TokenCacheStats = { lookups: 0, refreshes: 0 };
  let evictions = 0;
  evictOnMessages(options.bus, cache, () => {
    evictions++;
  });
  const state: CacheState = { db: options.db, now, timing, cache, stats, evictions: () => evictions };

  let refreshing: Promise<void> | null = null;
  /** One refresh at a time. The database away: entries age past ttlMs and are looked up on the request path again. */
  const refreshCache = (): Promise<void> => {
    refreshing ??= refresh(state)
      .catch(() => undefined)
      .finally(() => {
        refreshing = null;
      });
    return refreshing;
  };
  const refresher = setInterval(() => {
    if (cache.size > 0) void refreshCache();
  }, timing.refreshMs);
  refresher.unref();

  /** The token of this sha256 hash, from the cache while fresh; null for no such token. */
  async function lookup(hash: string): Promise<CachedToken | null> {
    const hit = cache.get(hash);
    if (hit !== undefined) {
      const at = now();
      if (at - hit.at < timing.ttlMs) {
        hit.used = at;
        return hit;
      }
    }
    // A token not found is remembered for a few seconds (F8): a flood of one made-up token costs
    // one query a window. A real token is never missed for it: its secret is random, so no one
    // could have asked for its hash before it was created.
    const missed = unknownTokens.get(hash);
    if (missed !== undefined && now() - missed < UNKNOWN_TTL_MS) return null;
    stats.lookups++;
    const sent = now();
    const row = await tokensWithAccount(options.db).where('api_tokens.token_hash', '=', hash).executeTakeFirst();
    if (!row) {
      cache.delete(hash);
      unknownTokens.delete(hash);
      if (unknownTokens.size >= UNKNOWN_MAX) unknownTokens.delete(unknownTokens.keys().next().value as string);
      unknownTokens.set(hash, now());
      return null;
    }
    const entry = entryOf(row, sent, sent);
    if (cache.size > 10_000) cache.clear();
    cache.set(hash, entry);
    return entry;
  }

  return {
    lookup,
    /** What the cache did so far (tests, diagnostics). */
    cacheStats: (): TokenCacheStats => ({ ...stats }),
    /** Confirm the tokens in use now (the timer does it every refreshMs). */
    refreshCache,
    /** Stop the refresh timer. */
    close(): void {
      clearInterval(refresher);
    },
  };
}

// API tokens (spec §2 API token, §5; CONTRACT §4): `svc_` + 43 url-safe characters, shown once,
// stored as sha256; scopes; optional expiry; optional IPv4 allow-list. Authentication caches the
// looked-up token per process (it runs on every token-surface request); revocation, expiry and
// account suspension still take effect on the very next request: expiry is checked on every use,
// and revocation/suspension evict the entry here at once and in every other process through the
// bus. The tokens in use are confirmed against the database every few seconds, all in one query
// off the request path (see refresh), so a cached token never makes its request wait for one.

import { type Kysely, sql } from 'kysely';
import type { ApiToken, DB } from '../../db/tables.ts';
import { freeTextProblem } from '../accounts/rules.ts';
import type { Bus } from '../bus.ts';
import { randomToken, sha256Hex } from '../crypto/secrets.ts';
import { AppError } from '../errors.ts';
import { cidrContains, normalizeIp, parseCidr } from '../net/ip.ts';
import type { Clock } from '../time.ts';

export const SCOPES = ['read', 'orders.write', 'instances.write', 'billing.read', '*'] as const;
export type Scope = (typeof SCOPES)[number];
export type RouteScope = Exclude<Scope, '*'>;

export const MAX_TOKENS_PER_ACCOUNT = 20;
export const MAX_CIDRS_PER_TOKEN = 16;
const TOKEN = /^svc_[A-Za-z0-9_-]{43}$/;
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

export interface Principal {
  tokenId: number;
  accountId: number;
  scopes: Scope[];
  name: string;
  expiresAt: Date | null;
}

interface CachedToken {
  token: Pick<ApiToken, 'id' | 'account_id' | 'name' | 'scopes' | 'allowed_cidrs' | 'expires_at' | 'revoked_at'>;
  cidrs: NonNullable<ReturnType<typeof parseCidr>>[];
  suspended: boolean;
  /** When the database last confirmed it (epoch ms: the time its query was sent). */
  at: number;
  /** When a request last used it. */
  used: number;
}

export interface NewToken {
  name?: unknown;
  scopes?: unknown;
  expires_at?: unknown;
  allowed_cidrs?: unknown;
}

export function grants(scopes: readonly string[], required: RouteScope): boolean {
  return scopes.includes('*') || scopes.includes(required);
}

/**
 * Check a new token's fields; every problem is in `fields` (empty when `token` is usable). No
 * database: the create route also runs it on bodies its schema refused (`fieldRules`).
 */
export function checkNewToken(
  input: NewToken,
  now: Date,
): {
  fields: Record<string, string>;
  token: { name: string; scopes: string[]; expiresAt: Date | null; cidrs: string[] };
} {
  const fields: Record<string, string> = {};
  const name = typeof input.name === 'string' ? input.name.trim() : '';
  if (name.length < 1 || name.length > 64) fields.name = 'must be 1–64 characters';
  else {
    const problem = freeTextProblem(name);
    if (problem) fields.name = problem;
  }
  const scopes = Array.isArray(input.scopes) ? [...new Set(input.scopes)] : [];
  if (scopes.length === 0 || !scopes.every((s) => (SCOPES as readonly unknown[]).includes(s))) {
    fields.scopes = `must be a non-empty list of ${SCOPES.join(', ')}`;
  }
  let expiresAt: Date | null = null;
  if (input.expires_at !== undefined && input.expires_at !== null) {
    const parsed = typeof input.expires_at === 'string' ? new Date(input.expires_at) : new Date(Number.NaN);
    if (Number.isNaN(parsed.getTime()) || !/^\d{4}-\d\d-\d\d/.test(String(input.expires_at)))
      fields.expires_at = 'must be an ISO 8601 date-time';
    else if (parsed.getTime() <= now.getTime()) fields.expires_at = 'must be in the future';
    else if (parsed.getTime() > now.getTime() + 2 * 366 * 86_400_000) fields.expires_at = 'must be within two years';
    else expiresAt = parsed;
  }
  const cidrs: string[] = [];
  if (input.allowed_cidrs !== undefined && input.allowed_cidrs !== null) {
    if (!Array.isArray(input.allowed_cidrs) || input.allowed_cidrs.length > MAX_CIDRS_PER_TOKEN) {
      fields.allowed_cidrs = `must be a list of at most ${MAX_CIDRS_PER_TOKEN} IPv4 CIDRs`;
    } else {
      for (const raw of input.allowed_cidrs) {
        const cidr = typeof raw === 'string' ? parseCidr(raw) : null;
        if (cidr === null || cidr.kind !== 'ipv4') {
          fields.allowed_cidrs = `${JSON.stringify(raw)} is not an IPv4 address or CIDR such as 203.0.113.0/24`;
          break;
        }
        cidrs.push(cidr.text);
      }
    }
  }
  return { fields, token: { name, scopes: scopes as string[], expiresAt, cidrs: [...new Set(cidrs)] } };
}

/** What the token cache did: database reads made for a request, and refresh queries. */
export interface TokenCacheStats {
  /** Requests that waited for a lookup: the token was not cached, or its entry was stale. */
  lookups: number;
  /** Refresh queries made (each confirms every token in use). */
  refreshes: number;
}

export function createTokenService(options: {
  db: Kysely<DB>;
  clock: Clock;
  bus: Bus;
  cacheTiming?: Partial<TokenCacheTiming>;
  /** The cache's time in epoch ms (tests drive it by hand; the wall clock otherwise). */
  cacheNow?: () => number;
}) {
  const { db, clock, bus } = options;
  const now = options.cacheNow ?? Date.now;
  const timing: TokenCacheTiming = { ...CACHE_TIMING, ...options.cacheTiming };
  const cache = new Map<string, CachedToken>();
  const unknownTokens = new Map<string, number>();
  const stats: TokenCacheStats = { lookups: 0, refreshes: 0 };
  /** Bumped by every eviction: a refresh that read the database before one must not undo it. */
  let evictions = 0;
  bus.subscribe((message) => {
    switch (message.topic) {
      case 'all':
        evictions++;
        cache.clear();
        return;
      case 'token':
        evictions++;
        for (const [k, v] of cache) if (v.token.id === message.id) cache.delete(k);
        return;
      case 'account':
        evictions++;
        for (const [k, v] of cache) if (v.token.account_id === message.id) cache.delete(k);
        return;
    }
  });

  const tokenColumns = [
    'api_tokens.id',
    'api_tokens.account_id',
    'api_tokens.name',
    'api_tokens.scopes',
    'api_tokens.allowed_cidrs',
    'api_tokens.expires_at',
    'api_tokens.revoked_at',
    'accounts.suspended_at',
  ] as const;
  const tokensWithAccount = () =>
    db.selectFrom('api_tokens').innerJoin('accounts', 'accounts.id', 'api_tokens.account_id').select(tokenColumns);
  type TokenRow = Awaited<ReturnType<ReturnType<typeof tokensWithAccount>['executeTakeFirstOrThrow']>>;
  const entryOf = (row: TokenRow, at: number, used: number): CachedToken => {
    const { suspended_at, ...token } = row;
    return {
      token,
      cidrs: token.allowed_cidrs.map((c) => parseCidr(c)).filter((c) => c !== null),
      suspended: suspended_at !== null,
      at,
      used,
    };
  };

  /**
   * Confirm every cached token used in the last idleMs against the database, in one query per
   * REFRESH_CHUNK tokens, and forget the others. Each entry then stays fresh while it is used, so
   * the request path reads the database only for a token it has not seen (issue 18: with an entry
   * expiring every ttlMs, every token in use made one request a period wait for its own lookup;
   * with 3,600 tokens in use, 360 queries a second). A token changed without a bus message (by hand
   * in SQL) is seen within refreshMs, as it was within ttlMs before.
   */
  async function refresh(): Promise<void> {
    const sent = now();
    const due = new Map<number, string>();
    for (const [hash, entry] of cache) {
      if (sent - entry.used >= timing.idleMs) cache.delete(hash);
      else due.set(entry.token.id, hash);
    }
    const ids = [...due.keys()];
    for (let at = 0; at < ids.length; at += REFRESH_CHUNK) {
      const chunk = ids.slice(at, at + REFRESH_CHUNK);
      const since = evictions;
      stats.refreshes++;
      const rows = await tokensWithAccount()
        .select('api_tokens.token_hash')
        .where(sql<boolean>`api_tokens.id = any(${`{${chunk.join(',')}}`}::integer[])`)
        .execute();
      // An eviction (revocation, suspension) while the query ran: its entries may be cached anew
      // by then, and these rows may predate it. Leave them all to their ttl and the next refresh.
      if (evictions !== since) continue;
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
  let refreshing: Promise<void> | null = null;
  /** One refresh at a time. The database away: entries age past ttlMs and are looked up on the request path again. */
  const refreshCache = (): Promise<void> => {
    refreshing ??= refresh()
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
    const row = await tokensWithAccount().where('api_tokens.token_hash', '=', hash).executeTakeFirst();
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

  async function get(accountId: number, id: number): Promise<ApiToken> {
    const token = await db
      .selectFrom('api_tokens')
      .selectAll()
      .where('id', '=', id)
      .where('account_id', '=', accountId)
      .executeTakeFirst();
    if (!token) throw new AppError('not_owner');
    return token;
  }

  return {
    /** Resolve a bearer token for a request from `ip`; throws the token surface's auth errors. */
    async authenticate(raw: string, ip: string): Promise<Principal> {
      if (!TOKEN.test(raw)) throw new AppError('invalid_token');
      const entry = await lookup(sha256Hex(raw));
      if (!entry || entry.token.revoked_at !== null) throw new AppError('invalid_token');
      if (entry.token.expires_at !== null && entry.token.expires_at.getTime() <= clock().getTime())
        throw new AppError('token_expired');
      if (entry.suspended) throw new AppError('account_suspended');
      if (entry.cidrs.length > 0) {
        const address = normalizeIp(ip);
        if (address === null || !entry.cidrs.some((cidr) => cidrContains(cidr, address))) {
          throw new AppError('ip_not_allowed', { message: `This token may not be used from ${address ?? ip}.` });
        }
      }
      return {
        tokenId: entry.token.id,
        accountId: entry.token.account_id,
        scopes: entry.token.scopes as Scope[],
        name: entry.token.name,
        expiresAt: entry.token.expires_at,
      };
    },

    /**
     * Whose token this is, whatever its state (revoked, expired, refused from this address):
     * so that refused calls still show in the token's own request log. Null for no such token.
     */
    async identify(raw: string): Promise<{ tokenId: number; accountId: number } | null> {
      if (!TOKEN.test(raw)) return null;
      const entry = await lookup(sha256Hex(raw));
      return entry ? { tokenId: entry.token.id, accountId: entry.token.account_id } : null;
    },

    /** Create a token; the secret is in the result and nowhere else, ever. */
    async create(accountId: number, input: NewToken): Promise<{ token: ApiToken; secret: string }> {
      const { fields, token: checked } = checkNewToken(input, clock());
      if (Object.keys(fields).length > 0) throw AppError.fields(fields);
      const active = await db
        .selectFrom('api_tokens')
        .select((eb) => eb.fn.countAll<string>().as('n'))
        .where('account_id', '=', accountId)
        .where('revoked_at', 'is', null)
        .executeTakeFirstOrThrow();
      if (Number(active.n) >= MAX_TOKENS_PER_ACCOUNT) {
        throw new AppError('conflict', {
          message: `An account may hold ${MAX_TOKENS_PER_ACCOUNT} tokens; revoke one first.`,
        });
      }
      const secret = `svc_${randomToken(32)}`;
      const token = await db
        .insertInto('api_tokens')
        .values({
          account_id: accountId,
          name: checked.name,
          token_hash: sha256Hex(secret),
          hint: secret.slice(0, 8),
          scopes: checked.scopes,
          allowed_cidrs: checked.cidrs,
          expires_at: checked.expiresAt,
        })
        .returningAll()
        .executeTakeFirstOrThrow();
      return { token, secret };
    },

    list: (accountId: number) =>
      db.selectFrom('api_tokens').selectAll().where('account_id', '=', accountId).orderBy('id', 'desc').execute(),

    get,

    /** Revoke at once: this process and every other stop accepting it before the answer is sent. */
    async revoke(accountId: number, id: number): Promise<ApiToken> {
      return db.transaction().execute(async (trx) => {
        const token = await trx
          .updateTable('api_tokens')
          .set((eb) => ({ revoked_at: eb.fn.coalesce('revoked_at', eb.val(clock())) }))
          .where('id', '=', id)
          .where('account_id', '=', accountId)
          .returningAll()
          .executeTakeFirst();
        if (!token) throw new AppError('not_owner');
        await bus.publish(trx, { topic: 'token', id });
        return token;
      });
    },

    async logs(accountId: number, tokenId: number, limit: number) {
      await get(accountId, tokenId);
      return db
        .selectFrom('api_request_log')
        .selectAll()
        .where('token_id', '=', tokenId)
        .orderBy('id', 'desc')
        .limit(limit)
        .execute();
    },

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

export type TokenService = ReturnType<typeof createTokenService>;

// API tokens (spec §2 API token, §5; CONTRACT §4): `svc_` + 43 url-safe characters, shown once,
// stored as sha256; scopes; optional expiry; optional IPv4 allow-list. Authentication runs on
// every token-surface request and reads through the per-process cache (token-cache.ts);
// revocation, expiry and account suspension still take effect on the very next request: expiry is
// checked on every use, and revocation/suspension evict the cached entry everywhere at once.

import type { Kysely } from 'kysely';
import type { ApiToken, DB } from '../../db/tables.ts';
import { freeTextProblem } from '../accounts/rules.ts';
import { byClient, recordActivity, type Who } from '../activity/activity.ts';
import { randomToken, sha256Hex } from '../crypto/secrets.ts';
import { AppError } from '../errors.ts';
import { cidrContains, normalizeIp, parseCidr } from '../net/ip.ts';
import type { Clock } from '../time.ts';
import { type CachedToken, createTokenCache, type TokenCacheOptions } from './token-cache.ts';

export const SCOPES = ['read', 'orders.write', 'instances.write', 'billing.read', '*'] as const;
export type Scope = (typeof SCOPES)[number];
export type RouteScope = Exclude<Scope, '*'>;

export const MAX_TOKENS_PER_ACCOUNT = 20;
export const MAX_CIDRS_PER_TOKEN = 16;
const TOKEN = /^svc_[A-Za-z0-9_-]{43}$/;

/** Whose token it is, whatever its state: what the request log files a call under. */
export interface TokenHolder {
  tokenId: number;
  accountId: number;
}

export interface Principal extends TokenHolder {
  scopes: Scope[];
  name: string;
  expiresAt: Date | null;
}

/**
 * What authentication made of a token: the principal, or the refusal (the token surface's auth
 * error) with the holder of the refused token when it exists (revoked, expired, suspended, from
 * another address), so that the call still goes to that token's request log.
 */
export type Authentication = { principal: Principal } | { refused: AppError; token: TokenHolder | null };

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

/** Resolve a bearer token for a request from `ip`, through the cache. */
async function authenticate(
  lookup: (hash: string) => Promise<CachedToken | null>,
  clock: Clock,
  raw: string,
  ip: string,
): Promise<Authentication> {
  if (!TOKEN.test(raw)) return { refused: new AppError('invalid_token'), token: null };
  const entry = await lookup(sha256Hex(raw));
  if (!entry) return { refused: new AppError('invalid_token'), token: null };
  const token = { tokenId: entry.token.id, accountId: entry.token.account_id };
  if (entry.token.revoked_at !== null) return { refused: new AppError('invalid_token'), token };
  if (entry.token.expires_at !== null && entry.token.expires_at.getTime() <= clock().getTime())
    return { refused: new AppError('token_expired'), token };
  if (entry.suspended) return { refused: new AppError('account_suspended'), token };
  if (entry.cidrs.length > 0) {
    const address = normalizeIp(ip);
    if (address === null || !entry.cidrs.some((cidr) => cidrContains(cidr, address))) {
      const refused = new AppError('ip_not_allowed', { message: `This token may not be used from ${address ?? ip}.` });
      return { refused, token };
    }
  }
  return {
    principal: {
      tokenId: entry.token.id,
      accountId: entry.token.account_id,
      scopes: entry.token.scopes as Scope[],
      name: entry.token.name,
      expiresAt: entry.token.expires_at,
    },
  };
}

/** Create a token; the secret is in the result and nowhere else, ever. */
async function createToken(
  db: Kysely<DB>,
  clock: Clock,
  accountId: number,
  input: NewToken,
  who: Who,
): Promise<{ token: ApiToken; secret: string }> {
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
  const token = await db.transaction().execute(async (trx) => {
    const made = await trx
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
    await recordActivity(trx, {
      accountId,
      type: 'token_created',
      who,
      summary: `API token "${made.name}" created (${made.hint}…; ${made.scopes.join(', ')})`,
      details: {
        token_id: made.id,
        name: made.name,
        hint: `${made.hint}…`,
        scopes: made.scopes,
        expires_at: made.expires_at?.toISOString() ?? null,
      },
      at: clock(),
    });
    return made;
  });
  return { token, secret };
}

export function createTokenService(options: TokenCacheOptions & { clock: Clock }) {
  const { db, clock, bus } = options;
  const cache = createTokenCache(options);

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
    /** Resolve a bearer token for a request from `ip`: its principal, or why it is refused and whose it is. */
    authenticate: (raw: string, ip: string): Promise<Authentication> => authenticate(cache.lookup, clock, raw, ip),

    create: (accountId: number, input: NewToken, who: Who = byClient(null)) =>
      createToken(db, clock, accountId, input, who),

    list: (accountId: number) =>
      db.selectFrom('api_tokens').selectAll().where('account_id', '=', accountId).orderBy('id', 'desc').execute(),

    get,

    /** Revoke at once: this process and every other stop accepting it before the answer is sent. */
    async revoke(accountId: number, id: number, who: Who = byClient(null)): Promise<ApiToken> {
      return db.transaction().execute(async (trx) => {
        const before = await trx
          .selectFrom('api_tokens')
          .select('revoked_at')
          .where('id', '=', id)
          .where('account_id', '=', accountId)
          .forUpdate()
          .executeTakeFirst();
        if (!before) throw new AppError('not_owner');
        const token = await trx
          .updateTable('api_tokens')
          .set((eb) => ({ revoked_at: eb.fn.coalesce('revoked_at', eb.val(clock())) }))
          .where('id', '=', id)
          .returningAll()
          .executeTakeFirstOrThrow();
        await bus.publish(trx, { topic: 'token', id });
        // Revoking a revoked token changes nothing: it was logged the first time.
        if (before.revoked_at === null) {
          await recordActivity(trx, {
            accountId,
            type: 'token_revoked',
            who,
            summary: `API token "${token.name}" revoked (${token.hint}…)`,
            details: { token_id: token.id, name: token.name, hint: `${token.hint}…` },
            at: clock(),
          });
        }
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
    cacheStats: cache.cacheStats,

    /** Confirm the tokens in use now (the timer does it every refreshMs). */
    refreshCache: cache.refreshCache,

    /** Stop the cache's refresh timer. */
    close: cache.close,
  };
}

export type TokenService = ReturnType<typeof createTokenService>;

// Server-side sessions (CONTRACT §4). The cookie holds 32 random bytes; the database holds only
// their sha256. A request whose cookie matches no row is an anonymous session: its id still
// anchors a CSRF token (so login can be CSRF-checked) but costs no row. The CSRF token is
// derived, HMAC(SECRET_KEY, session id), so it rotates with the id and is never stored.

import type { Kysely } from 'kysely';
import type { DB } from '../../db/tables.ts';
import { hmacBase64url, randomToken, safeEqual, sha256Hex } from '../crypto/secrets.ts';
import type { ReadCache } from '../services/list-cache.ts';
import type { Clock } from '../time.ts';

export const SESSION_COOKIE = 'SVCSESSID';

export const SESSION_POLICY = {
  /** Without `remember`: ends after 2 h without a request, and 24 h after login at the latest. */
  idleSeconds: 2 * 3600,
  absoluteSeconds: 24 * 3600,
  /** With `remember`: 30 days after login, or 14 days without a request. */
  rememberIdleSeconds: 14 * 24 * 3600,
  rememberSeconds: 30 * 24 * 3600,
  /** last_seen_at is written at most this often, so reads do not become writes. */
  touchEverySeconds: 60,
  /** A half session (the second factor still to come) ends after 10 minutes (CONTRACT §11). */
  twoFactorStepSeconds: 10 * 60,
} as const;

const SESSION_ID = /^[A-Za-z0-9_-]{43}$/;

export function isSessionId(raw: string | undefined): raw is string {
  return raw !== undefined && SESSION_ID.test(raw);
}

export function newSessionId(): string {
  return randomToken(32);
}

export function csrfTokenFor(secretKey: Buffer, sessionId: string): string {
  return hmacBase64url(secretKey, 'csrf', sessionId);
}

export function csrfMatches(secretKey: Buffer, sessionId: string, presented: string | undefined): boolean {
  return presented !== undefined && presented !== '' && safeEqual(csrfTokenFor(secretKey, sessionId), presented);
}

export interface SessionAccount {
  id: number;
  name: string;
  email: string;
  username: string;
  emailVerifiedAt: Date | null;
  createdAt: Date;
}

export interface LoadedSession {
  idHash: string;
  /** What the sessions list names it by. */
  publicId: number;
  /**
   * A half session: the first factor is proven, the second is still to come. The session-auth
   * plugin never hands one to a route as signed in (only the second step and logout see it).
   */
  twoFactorPending: boolean;
  remember: boolean;
  expiresAt: Date;
  account: SessionAccount;
}

export interface NewSession {
  id: string;
  remember: boolean;
  expiresAt: Date;
  /**
   * The account had asked to be deleted, and this sign-in cancelled it (CONTRACT §11): the caller
   * mails the customer (core/privacy/mails.ts deletionCancelledMail).
   */
  deletionCancelled: boolean;
}

export async function createSession(
  db: Kysely<DB>,
  clock: Clock,
  accountId: number,
  options: { remember: boolean; ip: string | null; userAgent: string | null; twoFactorPending?: boolean },
): Promise<NewSession> {
  const id = newSessionId();
  const now = clock();
  const pending = options.twoFactorPending ?? false;
  const lifetime = pending
    ? SESSION_POLICY.twoFactorStepSeconds
    : options.remember
      ? SESSION_POLICY.rememberSeconds
      : SESSION_POLICY.absoluteSeconds;
  const expiresAt = new Date(now.getTime() + lifetime * 1000);
  await db
    .insertInto('sessions')
    .values({
      id_hash: sha256Hex(id),
      account_id: accountId,
      remember: options.remember,
      created_at: now,
      last_seen_at: now,
      expires_at: expiresAt,
      ip: options.ip,
      user_agent: options.userAgent?.slice(0, 256) ?? null,
      two_factor_pending: pending,
    })
    .execute();
  // Every way of signing in ends here: a full sign-in (not a half one waiting for its second
  // factor) cancels a deletion the account asked for.
  const cancelled = pending
    ? null
    : await db
        .updateTable('accounts')
        .set({ deletion_requested_at: null, deletion_scheduled_for: null, updated_at: now })
        .where('id', '=', accountId)
        .where('deletion_scheduled_for', 'is not', null)
        .where('deleted_at', 'is', null)
        .executeTakeFirst();
  return { id, remember: options.remember, expiresAt, deletionCancelled: Number(cancelled?.numUpdatedRows ?? 0) > 0 };
}

function sessionRow(db: Kysely<DB>, idHash: string) {
  return db
    .selectFrom('sessions')
    .innerJoin('accounts', 'accounts.id', 'sessions.account_id')
    .select([
      'sessions.public_id',
      'sessions.two_factor_pending',
      'sessions.remember',
      'sessions.expires_at',
      'sessions.last_seen_at',
      'accounts.id',
      'accounts.name',
      'accounts.email',
      'accounts.username',
      'accounts.email_verified_at',
      'accounts.suspended_at',
      'accounts.created_at',
    ])
    .where('sessions.id_hash', '=', idHash)
    .executeTakeFirst();
}

/** A session's row with its account's, as `loadSession` reads it. */
export type SessionRow = NonNullable<Awaited<ReturnType<typeof sessionRow>>>;

/**
 * Where session rows are cached between requests (core/services/list-cache.ts, key space of
 * account 0, keyed by the id's hash): any committed change to `sessions` or `accounts`, here or
 * in another process, drops them all, and every request still checks expiry, idleness and
 * suspension against the clock.
 */
export type SessionCache = ReadCache<SessionRow | null>;

/** The live session behind a cookie value, or null (unknown, expired, idle too long, account suspended). */
export async function loadSession(
  db: Kysely<DB>,
  clock: Clock,
  sessionId: string,
  cache?: SessionCache,
): Promise<LoadedSession | null> {
  const idHash = sha256Hex(sessionId);
  // An unknown id is not kept (a stream of made-up cookies must not fill the cache).
  const row = cache
    ? ((await cache.read(
        0,
        idHash,
        async () => (await sessionRow(db, idHash)) ?? null,
        (r) => r !== null,
      )) ?? undefined)
    : await sessionRow(db, idHash);
  if (!row) return null;
  const now = clock().getTime();
  const idle = (row.remember ? SESSION_POLICY.rememberIdleSeconds : SESSION_POLICY.idleSeconds) * 1000;
  if (row.expires_at.getTime() <= now || row.last_seen_at.getTime() + idle <= now || row.suspended_at !== null) {
    await db.deleteFrom('sessions').where('id_hash', '=', idHash).execute();
    return null;
  }
  if (now - row.last_seen_at.getTime() > SESSION_POLICY.touchEverySeconds * 1000) {
    await db
      .updateTable('sessions')
      .set({ last_seen_at: new Date(now) })
      .where('id_hash', '=', idHash)
      .execute();
  }
  return {
    idHash,
    publicId: row.public_id,
    twoFactorPending: row.two_factor_pending,
    remember: row.remember,
    expiresAt: row.expires_at,
    account: {
      id: row.id,
      name: row.name,
      email: row.email,
      username: row.username,
      emailVerifiedAt: row.email_verified_at,
      createdAt: row.created_at,
    },
  };
}

export async function destroySession(db: Kysely<DB>, sessionId: string): Promise<void> {
  await db.deleteFrom('sessions').where('id_hash', '=', sha256Hex(sessionId)).execute();
}

/** End every session of an account, but `keepIdHash` when given (the one changing the password). */
export async function destroyAccountSessions(db: Kysely<DB>, accountId: number, keepIdHash?: string): Promise<number> {
  let query = db.deleteFrom('sessions').where('account_id', '=', accountId);
  if (keepIdHash !== undefined) query = query.where('id_hash', '<>', keepIdHash);
  const result = await query.executeTakeFirst();
  return Number(result.numDeletedRows);
}

/** A live session of an account, as the sessions list shows it. */
export interface ListedSession {
  publicId: number;
  idHash: string;
  createdAt: Date;
  lastSeenAt: Date;
  ip: string | null;
  userAgent: string | null;
}

/** The account's signed-in sessions (not half ones), newest activity first; expired or idle ones left out. */
export async function listSessions(db: Kysely<DB>, clock: Clock, accountId: number): Promise<ListedSession[]> {
  const now = clock().getTime();
  const rows = await db
    .selectFrom('sessions')
    .select(['public_id', 'id_hash', 'created_at', 'last_seen_at', 'expires_at', 'remember', 'ip', 'user_agent'])
    .where('account_id', '=', accountId)
    .where('two_factor_pending', '=', false)
    .where('expires_at', '>', new Date(now))
    .orderBy('last_seen_at', 'desc')
    .orderBy('public_id', 'desc')
    .execute();
  return rows
    .filter((r) => {
      const idle = (r.remember ? SESSION_POLICY.rememberIdleSeconds : SESSION_POLICY.idleSeconds) * 1000;
      return r.last_seen_at.getTime() + idle > now;
    })
    .map((r) => ({
      publicId: r.public_id,
      idHash: r.id_hash,
      createdAt: r.created_at,
      lastSeenAt: r.last_seen_at,
      ip: r.ip,
      userAgent: r.user_agent,
    }));
}

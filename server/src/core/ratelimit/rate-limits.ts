// Named rate limits over rate-limiter-flexible. The store follows the deployment: memory when
// embedded (one process by construction), Redis when REDIS_URL is set (exact across processes),
// otherwise PostgreSQL (the UNLOGGED table `rate_limits`, exact across processes, one write per
// counted request). Every limit is declared in LIMITS with its numbers, so the README's table and
// the code cannot drift apart.

import { Redis } from 'ioredis';
import type pg from 'pg';
import {
  type IRateLimiterStoreOptions,
  type RateLimiterAbstract,
  RateLimiterMemory,
  RateLimiterPostgres,
  RateLimiterRedis,
  RateLimiterRes,
} from 'rate-limiter-flexible';
import { declareLimits, recordRefusal } from '../../metrics/metrics.ts';
import { AppError } from '../errors.ts';

export interface LimitSpec {
  points: number;
  /** Window in seconds. */
  duration: number;
  /** Once exceeded, refuse for this many seconds (default: until the window ends). */
  blockDuration?: number;
  description: string;
}

/** Every limit the platform enforces. Keys are normalised by the caller (see keys.ts). */
export const LIMITS = {
  csrf_ip: { points: 60, duration: 60, description: 'CSRF bootstrap, per IP' },
  register_ip: { points: 5, duration: 3600, description: 'registrations, per IP' },
  login_ip: { points: 30, duration: 60, description: 'login attempts, per IP' },
  login_fail_ip: { points: 50, duration: 3600, description: 'failed logins, per IP' },
  login_fail_account: {
    points: 5,
    duration: 900,
    blockDuration: 900,
    description: 'lockout: failed logins per account (or unknown identifier); 15 min lock after the 5th',
  },
  otp_request_identifier: { points: 3, duration: 900, description: 'one-time code requests, per identifier' },
  otp_request_ip: { points: 10, duration: 3600, description: 'one-time code requests, per IP' },
  otp_verify_identifier: { points: 10, duration: 900, description: 'one-time code checks, per identifier' },
  otp_verify_ip: { points: 30, duration: 900, description: 'one-time code checks, per IP' },
  forgot_identifier: { points: 3, duration: 3600, description: 'password-reset mails, per identifier' },
  forgot_ip: { points: 10, duration: 3600, description: 'password-reset requests, per IP' },
  reset_ip: { points: 10, duration: 3600, description: 'password resets, per IP' },
  verify_ip: { points: 20, duration: 3600, description: 'e-mail verifications, per IP' },
  account_update: { points: 10, duration: 900, description: 'profile and password changes, per account' },
  verify_resend: { points: 1, duration: 600, description: 'verification mail re-sent on login, per account' },
  deposit_account: { points: 5, duration: 3600, description: 'deposit submissions, per account' },
  deposit_daily_account: { points: 20, duration: 86_400, description: 'deposit submissions per day, per account' },
  token_requests: { points: 600, duration: 60, description: 'token-surface requests, per token' },
  token_auth_fail_ip: { points: 60, duration: 60, description: 'token-surface requests with a bad token, per IP' },
  deploy_account: {
    points: 10,
    duration: 3600,
    description: 'deploys and orders on either surface, per account (refused ones are given back)',
  },
  console_ticket_service: { points: 6, duration: 60, description: 'console tickets, per service' },
  console_ticket_account: { points: 20, duration: 60, description: 'console tickets, per account' },
  search: { points: 30, duration: 10, description: 'searches, per session or token (CONTRACT §8)' },
  live_status_account: { points: 60, duration: 60, description: 'live power/status reads, per account' },
  live_graph_account: { points: 20, duration: 60, description: 'live graph reads, per account' },
  game_invite_service: { points: 10, duration: 3600, description: 'game subuser invites, per service' },
  // Panel actions (T3-M5): all customers of a node share its panel key's allowance (Pterodactyl:
  // 720 a minute for the one panel user), so each account gets a share well below it.
  panel_read_account: { points: 120, duration: 60, description: 'panel reads (GET game/web/vps actions), per account' },
  panel_write_account: {
    points: 30,
    duration: 60,
    description: 'panel actions that change something (POST game/web/vps actions), per account',
  },
  panel_sso_account: {
    points: 10,
    duration: 60,
    description: 'panel sign-in links (services ?action=sso), per account',
  },
} as const satisfies Record<string, LimitSpec>;

export type LimitName = keyof typeof LIMITS;

declareLimits(Object.keys(LIMITS));

/** What the RateLimit-* headers report. */
export interface LimitState {
  limit: number;
  remaining: number;
  /** Seconds until the window (or block) ends. */
  reset: number;
}

export interface RateLimits {
  /** Count `points` against `key`; throws AppError rate_limited (or `code`) when over the limit. */
  consume(
    name: LimitName,
    key: string,
    options?: { points?: number; code?: 'rate_limited' | 'locked_out' },
  ): Promise<LimitState>;
  /** The current state without counting; throws like consume when already over. */
  check(name: LimitName, key: string, code?: 'rate_limited' | 'locked_out'): Promise<LimitState>;
  /** Give back points counted for a request that turned out not to count (e.g. invalid input). */
  refund(name: LimitName, key: string, points?: number): Promise<void>;
  /** Refuse `key` for `seconds` from now (a lockout that starts at the failure that triggers it). */
  block(name: LimitName, key: string, seconds: number): Promise<void>;
  /** Forget a key (e.g. the failure count after a successful login). */
  reset(name: LimitName, key: string): Promise<void>;
  /**
   * Every key the store holds under this instance's prefix, for audits (no key may hold a session
   * id, token or code: T3-M6): a SCAN of Redis, the `rate_limits` rows, the memory limiters' keys.
   */
  storedKeys(): Promise<string[]>;
  close(): Promise<void>;
}

export type RateLimitStore =
  | { kind: 'memory' }
  | { kind: 'redis'; url: string }
  /** `owned`: the pool is the store's own, ended by close(). */
  | { kind: 'postgres'; pool: pg.Pool; owned?: boolean };

/**
 * Counting for many keys in one round trip to Redis. Every token-surface request counts its
 * token here, and through rate-limiter-flexible each count was its own script call: command
 * objects, a pipeline and a promise chain per request, 20 % of the server's CPU on
 * `GET /api/v1/plans` with the GC it caused (issue 18 profile). The counts asked for meanwhile
 * (see flush) leave as one call of a script that does, per key, what
 * rate-limiter-flexible's does (create the key for its window if absent, INCRBY, PTTL), on the
 * same keys, so every other operation (refund, block, reset, check) still goes through it.
 * Exact as before: each key is counted by Redis, atomically, before the answer.
 *
 * Leases (issue 18, seventh pass): a count may also take up to `lease` more points of the key's
 * window for this process to hand out without asking Redis again (see consume). Only in the first
 * half of the window's limit, and never more than an eighth of what is left of that half, so the
 * second half is counted one by one and a lease never lets a request through over the limit.
 */
const BATCH_SCRIPT = `local out = {}
for i = 1, #KEYS do
  local points = tonumber(ARGV[4 * i - 3])
  local seconds = ARGV[4 * i - 2]
  redis.call('set', KEYS[i], 0, 'EX', seconds, 'NX')
  local room = math.floor(tonumber(ARGV[4 * i]) / 2) - tonumber(redis.call('get', KEYS[i])) - points
  local lease = 0
  if room > 0 then lease = math.min(tonumber(ARGV[4 * i - 1]), math.floor(room / 8)) end
  local consumed = redis.call('incrby', KEYS[i], points + lease)
  local ttl = redis.call('pttl', KEYS[i])
  if ttl == -1 then
    redis.call('expire', KEYS[i], seconds)
    ttl = 1000 * seconds
  end
  out[3 * i - 2] = consumed
  out[3 * i - 1] = ttl
  out[3 * i] = lease
end
return out`;

interface Counted {
  /** The key's count after this one, the lease included. */
  consumed: number;
  msBeforeNext: number;
  /** Points taken for this process beyond `points` (a lease); 0 when the window had no room. */
  leased: number;
}

interface PendingCount {
  key: string;
  points: number;
  seconds: number;
  lease: number;
  limit: number;
  resolve: (counted: Counted) => void;
  reject: (error: unknown) => void;
}

/**
 * Count `points` on a Redis key with a window of `seconds` (the key is created for it), taking up
 * to `lease` points more while the window of a `limit` has room for them.
 */
type BatchedCount = (key: string, points: number, seconds: number, lease: number, limit: number) => Promise<Counted>;

const BATCH_MAX = 2000;
/** Points a count may lease for this process: a thirtieth of the limit, at most 20 (token_requests: 20 of 600). */
const leaseSize = (spec: LimitSpec): number => Math.min(20, Math.floor(spec.points / 30));
/** Keys with a lease held at once; past it the leases are forgotten (their points count, unused). */
const LEASES_MAX = 100_000;
/** A lease unused this long gives its points back (and leases are swept this often). */
const LEASE_IDLE_MS = 1_000;
const CONNECT_WAIT_MS = 2_000;

/** Give unused leased points back to the windows they were taken from, if those still exist. */
const RETURN_SCRIPT = `for i = 1, #KEYS do
  if redis.call('exists', KEYS[i]) == 1 then redis.call('decrby', KEYS[i], ARGV[i]) end
end
return #KEYS`;

function batchedCounter(redis: Redis): BatchedCount {
  redis.defineCommand('hpCountBatch', { lua: BATCH_SCRIPT });
  const send = (redis as unknown as { hpCountBatch(n: number, ...args: (string | number)[]): Promise<number[]> })
    .hpCountBatch;
  let pending: PendingCount[] = [];
  // One call in flight at a time (a group commit): what is asked meanwhile leaves in the next,
  // so under load a call carries every count of a round trip (each call is a system call each
  // way, as dear as the client's answer), and an idle server still sends a count at once.
  let sending = false;
  // The first counts wait for the connection being made (at most CONNECT_WAIT_MS) rather than
  // being counted in memory while it is: a window's counts then all live in one place.
  let connected: Promise<void> | null = new Promise<void>((resolve) => {
    const done = () => {
      clearTimeout(timer);
      for (const event of ['ready', 'error', 'end'] as const) redis.off(event, done);
      resolve();
    };
    const timer = setTimeout(done, CONNECT_WAIT_MS);
    timer.unref();
    if (redis.status === 'ready') done();
    else for (const event of ['ready', 'error', 'end'] as const) redis.once(event, done);
  });
  const flush = (): void => {
    if (sending || pending.length === 0) return;
    if (connected !== null) {
      sending = true;
      void connected.then(() => {
        connected = null;
        sending = false;
        flush();
      });
      return;
    }
    sending = true;
    // At most BATCH_MAX a call (a script's arguments are spread onto the stack).
    const batch = pending.length <= BATCH_MAX ? pending : pending.splice(0, BATCH_MAX);
    if (batch === pending) pending = [];
    const args: (string | number)[] = batch.map((p) => p.key);
    for (const p of batch) args.push(p.points, p.seconds, p.lease, p.limit);
    // Through a promise even if the client throws at once: `sending` must always be cleared.
    Promise.resolve()
      .then(() => send.call(redis, batch.length, ...args))
      .then(
        (out) => {
          for (let i = 0; i < batch.length; i++)
            batch[i]?.resolve({
              consumed: Number(out[3 * i]),
              msBeforeNext: Number(out[3 * i + 1]),
              leased: Number(out[3 * i + 2]),
            });
        },
        (error: unknown) => {
          for (const p of batch) p.reject(error);
        },
      )
      .finally(() => {
        sending = false;
        flush();
      });
  };
  return (key, points, seconds, lease, limit) =>
    new Promise<Counted>((resolve, reject) => {
      if (pending.length === 0 && !sending) setImmediate(flush);
      pending.push({ key, points, seconds, lease, limit, resolve, reject });
    });
}

/** Numbers of some limits changed for this instance (tests that drive one account hard); README lists LIMITS. */
export type LimitOverrides = Partial<Record<LimitName, Partial<Pick<LimitSpec, 'points' | 'duration'>>>>;

export function createRateLimits(store: RateLimitStore, keyPrefix = 'hp', overrides: LimitOverrides = {}): RateLimits {
  const specOf = (name: LimitName): LimitSpec => {
    const changed = overrides[name];
    return changed === undefined ? LIMITS[name] : { ...LIMITS[name], ...changed };
  };
  const redis =
    store.kind === 'redis'
      ? new Redis(store.url, {
          enableOfflineQueue: false,
          maxRetriesPerRequest: 1,
          lazyConnect: false,
          // Every token-surface request counts here: commands issued in the same tick leave in
          // one write instead of one system call each (measured: bench token, docs/BENCHMARKS.md).
          enableAutoPipelining: true,
          // A Redis that stopped answering: counts fall back to this process alone, not hang.
          commandTimeout: 1_000,
        })
      : null;
  // An error event with no listener would crash the process; a Redis outage falls back to memory.
  redis?.on('error', () => {});
  const limiters = new Map<LimitName, RateLimiterAbstract>();
  // The batched counts on a connection of their own, without auto-pipelining (they are one call per
  // round trip already): in ioredis' auto-pipeline, a script sent before Redis had it loaded
  // (NOSCRIPT, then retried) broke the answers of the other commands of that pipeline.
  const counting = redis?.duplicate({ enableAutoPipelining: false }) ?? null;
  counting?.on('error', () => {});
  const count = counting ? batchedCounter(counting) : null;
  const baseOf = (name: LimitName) => {
    const spec = specOf(name);
    return {
      points: spec.points,
      duration: spec.duration,
      blockDuration: spec.blockDuration ?? 0,
      keyPrefix: `${keyPrefix}:${name}`,
    };
  };
  /**
   * While Redis is unreachable each process counts alone: one memory limiter per limit, shared by
   * the batched counts and rate-limiter-flexible's own operations (its insuranceLimiter).
   */
  const insurance = new Map<LimitName, RateLimiterMemory>();
  const insured = (name: LimitName): RateLimiterMemory => {
    let found = insurance.get(name);
    if (!found) {
      found = new RateLimiterMemory(baseOf(name));
      insurance.set(name, found);
    }
    return found;
  };

  const limiter = (name: LimitName): RateLimiterAbstract => {
    let found = limiters.get(name);
    if (found) return found;
    const base = baseOf(name);
    if (store.kind === 'memory') {
      found = new RateLimiterMemory(base);
    } else if (store.kind === 'redis') {
      const options: IRateLimiterStoreOptions = {
        ...base,
        storeClient: redis,
        // While Redis is unreachable the process counts alone rather than failing every request.
        insuranceLimiter: insured(name),
      };
      found = new RateLimiterRedis(options);
    } else {
      found = new RateLimiterPostgres({
        ...base,
        storeClient: store.pool,
        storeType: 'pool',
        tableName: 'rate_limits',
        tableCreated: true,
        clearExpiredByTimeout: name === 'csrf_ip', // one sweeper for the shared table is enough
      });
    }
    limiters.set(name, found);
    return found;
  };

  type Counts = Pick<RateLimiterRes, 'remainingPoints' | 'msBeforeNext'>;
  const state = (name: LimitName, res: Counts): LimitState => ({
    limit: specOf(name).points,
    remaining: Math.max(0, res.remainingPoints),
    reset: Math.max(1, Math.ceil(res.msBeforeNext / 1000)),
  });

  const refuse = (name: LimitName, res: Counts, code: 'rate_limited' | 'locked_out'): AppError => {
    const s = state(name, res);
    recordRefusal(name);
    return new AppError(code, {
      retryAfter: s.reset,
      details: { limit: s.limit, reset: s.reset },
      rateLimit: { ...s, remaining: 0 },
    });
  };

  /**
   * Leases (Redis only): points of a key's window that Redis has already counted for this process,
   * handed out here without a round trip. Every token-surface request counts its token; with a
   * lease, one request in (lease + 1) asks Redis, and an answer no longer waits for the count
   * calls in flight before it (issue 18, seventh pass: docs/BENCHMARKS.md). Never more than the
   * limit passes: the points were counted in Redis before any is handed out, and a lease ends with
   * its window. What a lease still holds is counted for every process, so another process could
   * refuse a few points early while this one still holds them: only leases of the window's first
   * half exist (BATCH_SCRIPT), so the second half is counted one by one, exactly, by every
   * process, and a lease unused for LEASE_IDLE_MS gives its points back to the window (a client
   * that moved to another process).
   */
  const leases = new Map<string, { points: number; consumed: number; until: number; used: number }>();
  /** Counts on their way to Redis, by key: whether they brought a lease. */
  const claims = new Map<string, Promise<boolean>>();
  /** The Redis key of a limit's key (rate-limiter-flexible's, so its operations act on the same). */
  const keyOf = (name: LimitName, key: string) => `${keyPrefix}:${name}:${key}`;
  /** A key's lease while its window lasts; an ended one is forgotten. */
  const liveLease = (full: string, now: number) => {
    const lease = leases.get(full);
    if (lease === undefined || lease.until > now) return lease;
    leases.delete(full);
    return undefined;
  };
  const fromLease = (name: LimitName, full: string, points: number): LimitState | null => {
    const now = Date.now();
    const lease = liveLease(full, now);
    if (lease === undefined || lease.points < points) return null;
    lease.points -= points;
    lease.used = now;
    return state(name, {
      remainingPoints: specOf(name).points - (lease.consumed - lease.points),
      msBeforeNext: lease.until - now,
    });
  };
  const dropLease = (name: LimitName, key: string) => leases.delete(keyOf(name, key));
  counting?.defineCommand('hpReturnLeases', { lua: RETURN_SCRIPT });
  /** Give back what idle leases (all of them: `everything`) hold, in one call; ended ones are forgotten. */
  const returnLeases = async (everything: boolean): Promise<void> => {
    const now = Date.now();
    const keys: string[] = [];
    const points: number[] = [];
    for (const [full, lease] of leases) {
      if (lease.until <= now) leases.delete(full);
      else if (everything || now - lease.used >= LEASE_IDLE_MS) {
        leases.delete(full);
        // Not in a window's last moments: the key may be gone and made anew by then.
        if (lease.points > 0 && lease.until - now > LEASE_IDLE_MS) {
          keys.push(full);
          points.push(lease.points);
        }
      }
    }
    if (counting === null || keys.length === 0) return;
    const send = (counting as unknown as { hpReturnLeases(n: number, ...args: (string | number)[]): Promise<number> })
      .hpReturnLeases;
    for (let at = 0; at < keys.length; at += BATCH_MAX) {
      const some = keys.slice(at, at + BATCH_MAX);
      await send.call(counting, some.length, ...some, ...points.slice(at, at + BATCH_MAX)).catch(() => undefined); // Redis away: the points stay counted until the window ends
    }
  };
  const sweep = count === null ? null : setInterval(() => void returnLeases(false), LEASE_IDLE_MS);
  sweep?.unref();
  const heldBy = (name: LimitName, key: string): number => liveLease(keyOf(name, key), Date.now())?.points ?? 0;

  const consumeOn = async (
    on: RateLimiterAbstract,
    name: LimitName,
    key: string,
    points: number,
    code: 'rate_limited' | 'locked_out',
  ): Promise<LimitState> => {
    try {
      return state(name, await on.consume(key, points));
    } catch (error) {
      if (error instanceof RateLimiterRes) throw refuse(name, error, code);
      throw error;
    }
  };

  return {
    async consume(name, key, options = {}) {
      const points = options.points ?? 1;
      const spec = specOf(name);
      // Limits with a lockout (blockDuration) keep rate-limiter-flexible's own consume.
      if (count !== null && spec.blockDuration === undefined) {
        const full = keyOf(name, key);
        // A count of the same key already on its way may bring a lease: wait for it, and ask
        // Redis only when no count is on its way and the lease cannot serve this one (a burst on
        // one key is one count in (lease + 1), not a count each that leases what nobody uses).
        for (;;) {
          const served = fromLease(name, full, points);
          if (served !== null) return served;
          const claiming = claims.get(full);
          // A count that leased nothing (the window is nearly used up): count directly, in the
          // batch with the others, rather than one after another.
          if (claiming === undefined || !(await claiming)) break;
        }
        const asked = Date.now();
        const claim = count(full, points, spec.duration, leaseSize(spec), spec.points);
        const settled = claim.then(
          (counted) => counted.leased > 0,
          () => false,
        );
        claims.set(full, settled);
        let counted: Counted;
        try {
          counted = await claim;
        } catch {
          return consumeOn(insured(name), name, key, points, options.code ?? 'rate_limited');
        } finally {
          if (claims.get(full) === settled) claims.delete(full);
        }
        if (counted.leased > 0) {
          if (leases.size >= LEASES_MAX) leases.clear();
          const held = liveLease(full, asked);
          // Two counts of a key answered in one batch: the second's lease adds to the first's.
          if (held !== undefined) {
            held.points += counted.leased;
            held.consumed = Math.max(held.consumed, counted.consumed);
          } else
            leases.set(full, {
              points: counted.leased,
              consumed: counted.consumed,
              until: asked + counted.msBeforeNext,
              used: asked,
            });
        }
        // This process's requests so far, seen from here: the count less what the lease still holds.
        const used = counted.consumed - counted.leased;
        const res = { remainingPoints: spec.points - used, msBeforeNext: counted.msBeforeNext };
        if (used > spec.points) throw refuse(name, res, options.code ?? 'rate_limited');
        return state(name, res);
      }
      return consumeOn(limiter(name), name, key, points, options.code ?? 'rate_limited');
    },
    async check(name, key, code = 'rate_limited') {
      const got = await limiter(name).get(key);
      if (got === null)
        return { limit: specOf(name).points, remaining: specOf(name).points, reset: specOf(name).duration };
      // What this process's lease still holds is counted in the store but not used.
      const res = { remainingPoints: got.remainingPoints + heldBy(name, key), msBeforeNext: got.msBeforeNext };
      if (res.remainingPoints <= 0 && res.msBeforeNext > 0) throw refuse(name, res, code);
      return state(name, res);
    },
    async refund(name, key, points = 1) {
      // Points of a key with a lease go back to the lease (they stay counted in Redis for this process).
      const lease = liveLease(keyOf(name, key), Date.now());
      if (lease !== undefined) {
        lease.points += points;
        return;
      }
      await limiter(name).reward(key, points);
    },
    async block(name, key, seconds) {
      dropLease(name, key);
      await limiter(name).block(key, seconds);
    },
    async reset(name, key) {
      dropLease(name, key);
      await limiter(name).delete(key);
    },
    async storedKeys() {
      // rate-limiter-flexible keeps a memory limiter's counts in a Map it does not expose.
      const inMemory = [...limiters.values(), ...insurance.values()].flatMap((l) => {
        const storage = (l as unknown as { _memoryStorage?: { _storage?: Map<string, unknown> } })._memoryStorage;
        return [...(storage?._storage?.keys() ?? [])];
      });
      if (redis !== null) {
        const found: string[] = [];
        for await (const keys of redis.scanStream({ match: `${keyPrefix}:*`, count: 1000 }))
          found.push(...(keys as string[]));
        return [...found, ...inMemory];
      }
      if (store.kind === 'postgres') {
        const rows = await store.pool.query<{ key: string }>('select key from rate_limits where left(key, $1) = $2', [
          keyPrefix.length + 1,
          `${keyPrefix}:`,
        ]);
        return rows.rows.map((row) => row.key);
      }
      return inMemory;
    },
    async close() {
      if (sweep !== null) clearInterval(sweep);
      await returnLeases(true);
      redis?.disconnect();
      counting?.disconnect();
      if (store.kind === 'postgres' && store.owned) await store.pool.end();
    },
  };
}

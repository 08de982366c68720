// Console tickets (spec 4.1 vnc/console): a one-time ticket, valid 60 s, bound to the account and
// the service, for our own WebSocket endpoint, which relays to the node's console. The node's
// own ticket (and where to dial) is sealed at rest; the client never learns the node's address
// or credentials.
//
// Limits (security review F3): tickets are counted per service and per account
// (console_ticket_service, console_ticket_account) before the node is asked for one (each
// vncproxy/termproxy starts a process on the node); and an account may have CONSOLES_PER_ACCOUNT
// consoles open at once, a node CONSOLES_PER_NODE, counted in console_sessions so the caps hold
// across processes. A redeemed ticket opens a session row with a short lease that the relaying
// process renews while the socket is open; the relay deletes it when the socket closes, and a
// row left by a crashed process stops counting when its lease runs out (CONSOLE_LEASE_MS).
// Redeeming re-checks that the account is not suspended and the service still active (F10).

import { type Kysely, sql } from 'kysely';
import type { DB, Service } from '../../db/tables.ts';
import type { UpstreamConsoleTicket } from '../../upstreams/driver.ts';
import { byClient, recordActivity, type Who } from '../activity/activity.ts';
import { decryptSecret, encryptSecret, randomToken, sha256Hex } from '../crypto/secrets.ts';
import { AppError } from '../errors.ts';
import type { RateLimits } from '../ratelimit/rate-limits.ts';
import { isoWithOffset } from '../time.ts';
import * as services from './service.repository.ts';
import type { ServiceActions } from './service-actions.ts';

export const CONSOLE_TICKET_SECONDS = 60;
/** A console session ends after this long, whatever happens on it. */
export const CONSOLE_SESSION_MS = 4 * 3600 * 1000;
/** How long an open console counts without its process renewing it (a crashed process's rows lapse). */
export const CONSOLE_LEASE_MS = 3 * 60 * 1000;
/** Consoles open at once, per account and per node. */
export const CONSOLES_PER_ACCOUNT = 4;
export const CONSOLES_PER_NODE = 50;
const AAD = 'console-ticket';

export interface IssuedTicket {
  ticket: string;
  url: string;
  kind: 'vnc' | 'serial' | 'game';
  password: string | null;
  expires_at: string;
}

export interface RedeemedTicket {
  /** The console_sessions row this socket holds; release it when the socket closes. */
  sessionId: number;
  serviceId: number;
  accountId: number;
  nodeId: number;
  upstream: UpstreamConsoleTicket;
}

export interface ConsolesOptions {
  db: Kysely<DB>;
  secretKey: Buffer;
  clock: () => Date;
  publicUrl: string;
  actions: ServiceActions;
  limits: RateLimits;
}

const tooMany = (what: string, limit: number) =>
  new AppError('rate_limited', {
    message: `Too many open consoles ${what} (at most ${limit}); close one and try again.`,
    retryAfter: 10,
    details: { limit, open: limit },
  });

const unknownTicket = () => new AppError('invalid_token', { message: 'Unknown, used or expired console ticket.' });

/** Throws 429 when the account or the node already has its share of open consoles. */
async function checkOpen(
  executor: Kysely<DB>,
  clock: () => Date,
  accountId: number,
  nodeId: number | null,
): Promise<void> {
  const now = clock();
  const byAccount = await executor
    .selectFrom('console_sessions')
    .select((eb) => eb.fn.countAll<string>().as('n'))
    .where('account_id', '=', accountId)
    .where('expires_at', '>', now)
    .executeTakeFirstOrThrow();
  if (Number(byAccount.n) >= CONSOLES_PER_ACCOUNT) throw tooMany('on this account', CONSOLES_PER_ACCOUNT);
  if (nodeId === null) return;
  const byNode = await executor
    .selectFrom('console_sessions')
    .select((eb) => eb.fn.countAll<string>().as('n'))
    .where('node_id', '=', nodeId)
    .where('expires_at', '>', now)
    .executeTakeFirstOrThrow();
  if (Number(byNode.n) >= CONSOLES_PER_NODE) throw tooMany('on this server node', CONSOLES_PER_NODE);
}

/** Refused here, the node never starts a console for the ticket: open sessions, then ticket allowances. */
async function gate({ db, clock, limits }: ConsolesOptions, accountId: number, owned: Service): Promise<void> {
  await checkOpen(db, clock, accountId, owned.node_id);
  await limits.consume('console_ticket_service', `service:${owned.id}`);
  await limits.consume('console_ticket_account', `account:${accountId}`);
}

/** Wrap the node's console session in one of our one-time tickets. */
async function mint(
  { db, secretKey, clock, publicUrl }: ConsolesOptions,
  accountId: number,
  service: Service,
  upstream: UpstreamConsoleTicket,
): Promise<IssuedTicket> {
  const raw = randomToken(32);
  const expiresAt = new Date(clock().getTime() + CONSOLE_TICKET_SECONDS * 1000);
  await db
    .insertInto('console_tickets')
    .values({
      ticket_hash: sha256Hex(raw),
      account_id: accountId,
      service_id: service.id,
      kind: upstream.kind,
      upstream_sealed: encryptSecret(secretKey, JSON.stringify({ nodeId: service.node_id, upstream }), AAD),
      expires_at: expiresAt,
    })
    .execute();
  return {
    ticket: raw,
    url: `${publicUrl.replace(/^http/, 'ws')}/ws/console/?t=${raw}`,
    kind: upstream.kind,
    password: upstream.kind === 'game' ? null : upstream.password,
    expires_at: isoWithOffset(expiresAt),
  };
}

/**
 * Use a ticket: once, before it expires. Two concurrent uses: one wins. Opens a console
 * session (counted against the caps) that `release` ends. A refusal leaves the ticket unused.
 */
async function redeem({ db, secretKey, clock }: ConsolesOptions, raw: string, who: Who): Promise<RedeemedTicket> {
  if (!/^[A-Za-z0-9_-]{43}$/.test(raw)) throw unknownTicket();
  return db.transaction().execute(async (trx) => {
    const row = await trx
      .updateTable('console_tickets')
      .set({ used_at: clock() })
      .where('ticket_hash', '=', sha256Hex(raw))
      .where('used_at', 'is', null)
      .where('expires_at', '>', clock())
      .returning(['service_id', 'account_id', 'upstream_sealed', 'kind'])
      .executeTakeFirst();
    if (!row) throw unknownTicket();
    // Access may have ended since the ticket was issued (up to a minute ago).
    const state = await services.ownConsoleState(trx, row.account_id, row.service_id);
    if (!state || state.suspended_at !== null)
      throw new AppError('invalid_token', {
        message: 'This console ticket is no longer valid: the account is suspended.',
      });
    if (state.status === 'suspended') throw new AppError('suspended');
    if (state.status !== 'active')
      throw new AppError('no_vm', { message: `The service is ${state.status}; its console is closed.` });
    const sealed = JSON.parse(decryptSecret(secretKey, row.upstream_sealed, AAD)) as {
      nodeId: number;
      upstream: UpstreamConsoleTicket;
    };
    // One redeem at a time per account and per node (always in this order), so the caps are exact.
    await sql`select pg_advisory_xact_lock(hashtextextended(${`console:account:${row.account_id}`}, 0))`.execute(trx);
    await sql`select pg_advisory_xact_lock(hashtextextended(${`console:node:${sealed.nodeId}`}, 0))`.execute(trx);
    await trx
      .deleteFrom('console_sessions')
      .where('account_id', '=', row.account_id)
      .where('expires_at', '<=', clock())
      .execute();
    await checkOpen(trx, clock, row.account_id, sealed.nodeId);
    const session = await trx
      .insertInto('console_sessions')
      .values({
        account_id: row.account_id,
        service_id: row.service_id,
        node_id: sealed.nodeId,
        expires_at: new Date(clock().getTime() + CONSOLE_LEASE_MS),
      })
      .returning('id')
      .executeTakeFirstOrThrow();
    await consoleOpened(trx, clock, row, who);
    return {
      sessionId: session.id,
      serviceId: row.service_id,
      accountId: row.account_id,
      nodeId: sealed.nodeId,
      upstream: sealed.upstream,
    };
  });
}

const CONSOLE_WORDS: Record<string, string> = { vnc: 'screen (VNC)', serial: 'serial console', game: 'console' };

/** The activity log's `console` event: a console of the account's service opened (its ticket used). */
async function consoleOpened(
  trx: Kysely<DB>,
  clock: () => Date,
  row: { account_id: number; service_id: number; kind: string },
  who: Who,
): Promise<void> {
  const { label } = await trx
    .selectFrom('services')
    .select('label')
    .where('id', '=', row.service_id)
    .executeTakeFirstOrThrow();
  await recordActivity(trx, {
    accountId: row.account_id,
    type: 'console',
    who,
    summary: `Opened the ${CONSOLE_WORDS[row.kind] ?? 'console'} of ${label}`,
    details: { service_id: row.service_id, label, console: row.kind },
    at: clock(),
  });
}

export function createConsoles(options: ConsolesOptions) {
  const { db, clock } = options;
  return {
    async issue(accountId: number, serviceId: number, kind: 'vnc' | 'serial'): Promise<IssuedTicket> {
      const { service, upstream } = await options.actions.console(accountId, serviceId, kind, (owned) =>
        gate(options, accountId, owned),
      );
      return mint(options, accountId, service, upstream);
    },

    /** The console hooks of a management route's actions (ActionContext gate and mintConsole). */
    hooksFor(accountId: number) {
      let owned: Service | null = null;
      return {
        gate: async (service: Service) => {
          owned = service;
          await gate(options, accountId, service);
        },
        mintConsole: async (upstream: UpstreamConsoleTicket) => {
          if (!owned) throw new Error('a console ticket is minted only after its gate');
          const { ticket, url, expires_at } = await mint(options, accountId, owned, upstream);
          return { ticket, url, expires_at };
        },
      };
    },

    /** Use a ticket once, opening a console session (see `redeem` above), logged as `who`'s. */
    redeem: (raw: string, who: Who = byClient(null)): Promise<RedeemedTicket> => redeem(options, raw, who),

    /** These sessions' sockets are still open in this process: extend their leases. */
    async renew(sessionIds: number[]): Promise<void> {
      if (sessionIds.length === 0) return;
      await db
        .updateTable('console_sessions')
        .set({ expires_at: new Date(clock().getTime() + CONSOLE_LEASE_MS) })
        .where('id', 'in', sessionIds)
        .execute();
    },

    /** The console socket of this session closed: it no longer counts. */
    async release(sessionId: number): Promise<void> {
      await db.deleteFrom('console_sessions').where('id', '=', sessionId).execute();
    },

    /** Of these sessions' services, the ones whose console must close now (account suspended, service not active). */
    async revoked(serviceIds: number[]): Promise<Set<number>> {
      if (serviceIds.length === 0) return new Set();
      const rows = await services.consoleStatesById(db, serviceIds);
      const fine = new Set(rows.filter((r) => r.suspended_at === null && r.status === 'active').map((r) => r.id));
      return new Set(serviceIds.filter((id) => !fine.has(id)));
    },
  };
}

export type Consoles = ReturnType<typeof createConsoles>;

// Console tickets (spec 4.1 vnc/console): a one-time ticket, valid 60 s, bound to the account and
// the service, for our own WebSocket endpoint, which relays to the node's console. The node's
// own ticket (and where to dial) is sealed at rest; the client never learns the node's address
// or credentials.

import type { Kysely } from 'kysely';
import type { DB } from '../../db/tables.ts';
import type { ConsoleTicket } from '../../upstreams/hypervisor.ts';
import { decryptSecret, encryptSecret, randomToken, sha256Hex } from '../crypto/secrets.ts';
import { AppError } from '../errors.ts';
import { isoWithOffset } from '../time.ts';
import type { ServiceActions } from './service-actions.ts';

export const CONSOLE_TICKET_SECONDS = 60;
const AAD = 'console-ticket';

export interface IssuedTicket {
  ticket: string;
  url: string;
  kind: 'vnc' | 'serial';
  password: string | null;
  expires_at: string;
}

export interface RedeemedTicket {
  serviceId: number;
  accountId: number;
  nodeId: number;
  upstream: ConsoleTicket;
}

export function createConsoles(options: {
  db: Kysely<DB>;
  secretKey: Buffer;
  clock: () => Date;
  publicUrl: string;
  actions: ServiceActions;
}) {
  const { db, secretKey, clock } = options;
  const wsBase = options.publicUrl.replace(/^http/, 'ws');
  return {
    async issue(accountId: number, serviceId: number, kind: 'vnc' | 'serial'): Promise<IssuedTicket> {
      const { service, upstream } = await options.actions.console(accountId, serviceId, kind);
      const raw = randomToken(32);
      const expiresAt = new Date(clock().getTime() + CONSOLE_TICKET_SECONDS * 1000);
      await db
        .insertInto('console_tickets')
        .values({
          ticket_hash: sha256Hex(raw),
          account_id: accountId,
          service_id: service.id,
          kind,
          upstream_sealed: encryptSecret(secretKey, JSON.stringify({ nodeId: service.node_id, upstream }), AAD),
          expires_at: expiresAt,
        })
        .execute();
      return {
        ticket: raw,
        url: `${wsBase}/ws/console/?t=${raw}`,
        kind,
        password: upstream.password,
        expires_at: isoWithOffset(expiresAt),
      };
    },

    /** Use a ticket: once, before it expires. Two concurrent uses: one wins. */
    async redeem(raw: string): Promise<RedeemedTicket> {
      if (!/^[A-Za-z0-9_-]{43}$/.test(raw))
        throw new AppError('invalid_token', { message: 'Unknown, used or expired console ticket.' });
      const row = await db
        .updateTable('console_tickets')
        .set({ used_at: clock() })
        .where('ticket_hash', '=', sha256Hex(raw))
        .where('used_at', 'is', null)
        .where('expires_at', '>', clock())
        .returning(['service_id', 'account_id', 'upstream_sealed'])
        .executeTakeFirst();
      if (!row) throw new AppError('invalid_token', { message: 'Unknown, used or expired console ticket.' });
      const sealed = JSON.parse(decryptSecret(secretKey, row.upstream_sealed, AAD)) as {
        nodeId: number;
        upstream: ConsoleTicket;
      };
      return { serviceId: row.service_id, accountId: row.account_id, nodeId: sealed.nodeId, upstream: sealed.upstream };
    },
  };
}

export type Consoles = ReturnType<typeof createConsoles>;

// The staff console's first page (CONTRACT §14): today's money in and out (the India Standard Time
// day), failed jobs, nodes in trouble, and the deposits waiting for a decision. Reads only.

import { type Kysely, sql } from 'kysely';
import type { DB, Job, NodeRow } from '../../db/tables.ts';

const IST_OFFSET_MS = 330 * 60_000;

/** The IST calendar day holding `now`, as [start, end) instants. */
export function istDay(now: Date): { start: Date; end: Date } {
  const local = new Date(now.getTime() + IST_OFFSET_MS);
  const midnight = Date.UTC(local.getUTCFullYear(), local.getUTCMonth(), local.getUTCDate()) - IST_OFFSET_MS;
  return { start: new Date(midnight), end: new Date(midnight + 86_400_000) };
}

export interface NodeLoad extends NodeRow {
  /** Services on it that are not terminated or failed (what placement counts). */
  used: number;
}

/** Every node with the services it carries. */
export async function nodeLoads(db: Kysely<DB>): Promise<NodeLoad[]> {
  const rows = await db
    .selectFrom('nodes as n')
    .selectAll('n')
    .select(
      sql<string>`(select count(*) from services s where s.node_id = n.id and s.status not in ('terminated', 'failed'))`.as(
        'used',
      ),
    )
    .orderBy('n.id')
    .execute();
  return rows.map((r) => ({ ...r, used: Number(r.used) }));
}

/** Down (its last check failed), or carrying more than its capacity. */
export const inTrouble = (n: NodeLoad): boolean => n.health === 'down' || n.used > n.capacity;

export interface Dashboard {
  day: { start: Date; end: Date };
  moneyIn: { depositsPaise: bigint; depositsCount: number; onlinePaise: bigint; onlineCount: number };
  moneyOut: { withdrawalsPaise: bigint; withdrawalsCount: number; refundsPaise: bigint; refundsCount: number };
  failedJobs: { today: number; latest: Job[] };
  nodes: NodeLoad[];
  depositsWaiting: { count: number; oldest: Date | null };
}

async function moneyIn(db: Kysely<DB>, day: { start: Date; end: Date }) {
  const rows = await db
    .selectFrom('deposits')
    .select(['method', sql<string>`coalesce(sum(amount_paise), 0)`.as('sum'), sql<string>`count(*)`.as('n')])
    .where('status', '=', 'approved')
    .where('reviewed_at', '>=', day.start)
    .where('reviewed_at', '<', day.end)
    .groupBy('method')
    .execute();
  const of = (online: boolean) => rows.filter((r) => (r.method === 'manual') !== online);
  const sum = (rs: typeof rows) => rs.reduce((a, r) => a + BigInt(r.sum), 0n);
  const count = (rs: typeof rows) => rs.reduce((a, r) => a + Number(r.n), 0);
  return {
    depositsPaise: sum(of(false)),
    depositsCount: count(of(false)),
    onlinePaise: sum(of(true)),
    onlineCount: count(of(true)),
  };
}

async function moneyOut(db: Kysely<DB>, day: { start: Date; end: Date }) {
  const rows = await db
    .selectFrom('wallet_transactions')
    .select(['kind', sql<string>`coalesce(sum(amount_paise), 0)`.as('sum'), sql<string>`count(*)`.as('n')])
    .where('kind', 'in', ['withdrawal', 'refund'])
    .where('created_at', '>=', day.start)
    .where('created_at', '<', day.end)
    .groupBy('kind')
    .execute();
  const withdrawal = rows.find((r) => r.kind === 'withdrawal');
  const refund = rows.find((r) => r.kind === 'refund');
  return {
    // Withdrawals are negative ledger rows: the money paid out, as a positive amount.
    withdrawalsPaise: -BigInt(withdrawal?.sum ?? 0),
    withdrawalsCount: Number(withdrawal?.n ?? 0),
    refundsPaise: BigInt(refund?.sum ?? 0),
    refundsCount: Number(refund?.n ?? 0),
  };
}

export async function dashboard(db: Kysely<DB>, now: Date): Promise<Dashboard> {
  const day = istDay(now);
  const [inToday, outToday, failedToday, latest, nodes, waiting] = await Promise.all([
    moneyIn(db, day),
    moneyOut(db, day),
    db
      .selectFrom('jobs')
      .select(sql<string>`count(*)`.as('n'))
      .where('status', '=', 'failed')
      .where('finished_at', '>=', day.start)
      .where('finished_at', '<', day.end)
      .executeTakeFirstOrThrow(),
    db
      .selectFrom('jobs')
      .selectAll()
      .where('status', '=', 'failed')
      .orderBy('finished_at', 'desc')
      .orderBy('id', 'desc')
      .limit(5)
      .execute(),
    nodeLoads(db),
    db
      .selectFrom('deposits')
      .select([sql<string>`count(*)`.as('n'), sql<Date | null>`min(created_at)`.as('oldest')])
      .where('status', '=', 'pending')
      .executeTakeFirstOrThrow(),
  ]);
  return {
    day,
    moneyIn: inToday,
    moneyOut: outToday,
    failedJobs: { today: Number(failedToday.n), latest },
    nodes: nodes.filter(inTrouble),
    depositsWaiting: {
      count: Number(waiting.n),
      oldest: waiting.oldest === null ? null : new Date(waiting.oldest),
    },
  };
}

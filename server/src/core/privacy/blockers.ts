// What stands in the way of deleting an account (CONTRACT §11: 409 deletion_blocked with
// details.reasons), checked when the customer asks and again when the deletion is due. Each reason
// says what to do about it, for the panel to show as it is:
//
// - services that run, are set up or suspended (pending, provisioning, active, suspended): they
//   cost money and hold data on our nodes; the customer terminates them first;
// - unpaid orders: money owed is settled (paid, or cancelled by terminating the service it renews);
// - deposits waiting for our review, and online payments started in the last day: money on its way
//   must land somewhere we can refund it from;
// - money in the wallet: we refund rather than erase it (as Indian practice expects of prepaid
//   balances), so the customer asks support to refund it first. A balance of ₹0.00 is the rule.

import type { Kysely } from 'kysely';
import type { DB } from '../../db/tables.ts';
import { formatPaise } from '../money.ts';
import { DAY_MS } from './options.ts';

export type BlockerCode = 'services' | 'unpaid_orders' | 'pending_deposits' | 'wallet_balance';

export interface DeletionBlocker {
  code: BlockerCode;
  /** What to do about it, in words a customer acts on. */
  message: string;
  items: { id: number; ref: string; status?: string; amount?: string }[];
}

const BLOCKING_SERVICE = ['pending', 'provisioning', 'active', 'suspended'] as const;

const list = (refs: string[]) =>
  refs.length <= 5 ? refs.join(', ') : `${refs.slice(0, 5).join(', ')} and ${refs.length - 5} more`;

export async function deletionBlockers(db: Kysely<DB>, accountId: number, now: Date): Promise<DeletionBlocker[]> {
  const found: DeletionBlocker[] = [];
  const services = await db
    .selectFrom('services')
    .select(['id', 'label', 'status'])
    .where('account_id', '=', accountId)
    .where('status', 'in', BLOCKING_SERVICE)
    .orderBy('id')
    .execute();
  if (services.length > 0) {
    found.push({
      code: 'services',
      message: `Terminate your services first (on each service's page, "Request termination…"; staff approve it): ${list(
        services.map((s) => `${s.label} (${s.status})`),
      )}.`,
      items: services.map((s) => ({ id: s.id, ref: s.label, status: s.status })),
    });
  }
  const unpaid = await db
    .selectFrom('orders')
    .select(['id', 'public_id', 'amount_paise'])
    .where('account_id', '=', accountId)
    .where('status', '=', 'unpaid')
    .orderBy('id')
    .execute();
  if (unpaid.length > 0) {
    found.push({
      code: 'unpaid_orders',
      message: `Pay your unpaid orders from the wallet, or terminate the services they renew: ${list(
        unpaid.map((o) => `${o.public_id} (₹${formatPaise(o.amount_paise)})`),
      )}.`,
      items: unpaid.map((o) => ({ id: o.id, ref: o.public_id, amount: formatPaise(o.amount_paise) })),
    });
  }
  const deposits = await db
    .selectFrom('deposits')
    .select(['id', 'public_id', 'amount_paise', 'method'])
    .where('account_id', '=', accountId)
    .where('status', '=', 'pending')
    .where((eb) => eb.or([eb('method', '=', 'manual'), eb('created_at', '>', new Date(now.getTime() - DAY_MS))]))
    .orderBy('id')
    .execute();
  if (deposits.length > 0) {
    found.push({
      code: 'pending_deposits',
      message: `Wait until these payments are settled (we review reported payments within a working day): ${list(
        deposits.map((d) => `${d.public_id} (₹${formatPaise(d.amount_paise)})`),
      )}.`,
      items: deposits.map((d) => ({
        id: d.id,
        ref: d.public_id,
        amount: formatPaise(d.amount_paise),
        status: d.method,
      })),
    });
  }
  const wallet = await db
    .selectFrom('wallets')
    .select('balance_paise')
    .where('account_id', '=', accountId)
    .executeTakeFirst();
  if (wallet && BigInt(wallet.balance_paise) > 0n) {
    const balance = formatPaise(wallet.balance_paise);
    found.push({
      code: 'wallet_balance',
      message: `Your wallet holds ₹${balance}. We refund money rather than delete it: ask support to refund the balance to you, then delete the account.`,
      items: [{ id: accountId, ref: 'wallet', amount: balance }],
    });
  }
  return found;
}

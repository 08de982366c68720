// wallet credit EMAIL AMOUNT --note | wallet show ACCOUNT (CONTRACT §1).

import { byOperator } from '../../core/audit/audit.ts';
import { formatPaise } from '../../core/money.ts';
import { isoWithOffset } from '../../core/time.ts';
import { type Command, clean, requiredOption, table } from '../command.ts';

export const walletCommands: Command[] = [
  {
    noun: 'wallet',
    verb: 'credit',
    summary: "Add money to an account's wallet (an `adjustment` ledger row with the note)",
    args: ['ACCOUNT', 'AMOUNT'],
    options: { note: { type: 'string', required: true, description: 'why (kept on the ledger row)' } },
    async run(deps, { args, options, actor }) {
      const account = await deps.accounts.find(args[0] as string);
      const entry = await deps.wallet.credit(
        account.id,
        args[1],
        `${requiredOption(options, 'note')} (${actor})`,
        byOperator(),
      );
      // The credit may have paid unpaid renewal orders at once (the billing cycle): the balance now.
      const balance = await deps.wallet.balance(account.id);
      return {
        json: {
          account: account.email,
          transaction: entry.public_id,
          amount: formatPaise(entry.amount_paise),
          balance: formatPaise(balance),
        },
        text: `credited ₹${formatPaise(entry.amount_paise)} to ${clean(account.email)} (${entry.public_id}); balance ₹${formatPaise(balance)}`,
      };
    },
  },
  {
    noun: 'wallet',
    verb: 'refund',
    summary:
      'Record money of the wallet paid back to the customer outside the platform (a `withdrawal` row), e.g. before the account is deleted',
    args: ['ACCOUNT', 'AMOUNT'],
    options: { note: { type: 'string', required: true, description: 'how it was paid back (bank or UPI reference)' } },
    async run(deps, { args, options, actor }) {
      const account = await deps.accounts.find(args[0] as string);
      const entry = await deps.wallet.withdraw(
        account.id,
        args[1],
        `${requiredOption(options, 'note')} (${actor})`,
        byOperator(),
      );
      const balance = await deps.wallet.balance(account.id);
      return {
        json: {
          account: account.email,
          transaction: entry.public_id,
          amount: formatPaise(entry.amount_paise),
          balance: formatPaise(balance),
        },
        text: `refunded ₹${formatPaise(-BigInt(entry.amount_paise))} to ${clean(account.email)} (${entry.public_id}); balance ₹${formatPaise(balance)}`,
      };
    },
  },
  {
    noun: 'wallet',
    verb: 'show',
    summary: "An account's balance and latest ledger rows",
    args: ['ACCOUNT'],
    async run(deps, { args }) {
      const account = await deps.accounts.find(args[0] as string);
      const [balance, page] = await Promise.all([
        deps.wallet.balance(account.id),
        deps.wallet.history(account.id, 1, 20),
      ]);
      const rows = page.rows.map((r) => ({
        id: r.id,
        public_id: r.public_id,
        kind: r.kind,
        amount: formatPaise(r.amount_paise),
        balance_after: formatPaise(r.balance_after_paise),
        note: r.note,
        at: isoWithOffset(r.created_at),
      }));
      return {
        json: { account: account.email, balance: formatPaise(balance), currency: 'INR', transactions: rows },
        text: `${clean(account.email)}: ₹${formatPaise(balance)}\n\n${table(rows, ['public_id', 'kind', 'amount', 'balance_after', 'note', 'at'])}`,
      };
    },
  },
];

// accounts list|show|verify|suspend|unsuspend (CONTRACT §1), 2fa-reset (CONTRACT §11).

import { accountStatus } from '../../core/accounts/account.service.ts';
import { byOperator } from '../../core/audit/audit.ts';
import { AppError } from '../../core/errors.ts';
import { isoWithOffset } from '../../core/time.ts';
import { counted } from '../../core/words.ts';
import type { Account } from '../../db/tables.ts';
import { type Command, clean, keyValues, table, UsageError } from '../command.ts';

function view(account: Account) {
  return {
    id: account.id,
    name: account.name,
    email: account.email,
    username: account.username,
    status: accountStatus(account),
    email_verified_at: account.email_verified_at ? isoWithOffset(account.email_verified_at) : null,
    suspended_at: account.suspended_at ? isoWithOffset(account.suspended_at) : null,
    suspended_reason: account.suspended_reason,
    created_at: isoWithOffset(account.created_at),
  };
}

function detail(account: Account): string {
  return keyValues(view(account), 18);
}

export const accountCommands: Command[] = [
  {
    noun: 'accounts',
    verb: 'list',
    summary: 'List accounts (newest last)',
    options: {
      status: { type: 'string', description: 'active, unverified or suspended' },
      search: { type: 'string', description: 'part of an e-mail, username or name' },
      limit: { type: 'string', description: 'rows to show (default 50)' },
      offset: { type: 'string', description: 'rows to skip' },
    },
    async run(deps, { options }) {
      const status = options.status as string | undefined;
      if (status !== undefined && !['active', 'unverified', 'suspended'].includes(status)) {
        throw new UsageError('--status is active, unverified or suspended');
      }
      const limit = Number(options.limit ?? 50);
      const offset = Number(options.offset ?? 0);
      if (!Number.isInteger(limit) || limit < 1 || limit > 1000 || !Number.isInteger(offset) || offset < 0) {
        throw new UsageError('--limit is 1–1000 and --offset a whole number');
      }
      const rows = (
        await deps.accounts.list({
          limit,
          offset,
          ...(status ? { status: status as 'active' } : {}),
          ...(options.search ? { search: String(options.search) } : {}),
        })
      ).map(view);
      return { json: rows, text: table(rows, ['id', 'email', 'username', 'name', 'status', 'created_at']) };
    },
  },
  {
    noun: 'accounts',
    verb: 'show',
    summary: 'Show one account (by id, e-mail or username)',
    args: ['ACCOUNT'],
    async run(deps, { args }) {
      const account = await deps.accounts.find(args[0] as string);
      return { json: view(account), text: detail(account) };
    },
  },
  {
    noun: 'accounts',
    verb: 'verify',
    summary: "Mark an account's e-mail address verified",
    args: ['ACCOUNT'],
    async run(deps, { args }) {
      const account = await deps.accounts.markVerified((await deps.accounts.find(args[0] as string)).id);
      return { json: view(account), text: `verified ${clean(account.email)}` };
    },
  },
  {
    noun: 'accounts',
    verb: 'suspend',
    summary: 'Suspend an account: no sign-in, every session ends',
    args: ['ACCOUNT'],
    options: { reason: { type: 'string', description: 'why (kept on the account)' } },
    async run(deps, { args, options }) {
      const found = await deps.accounts.find(args[0] as string);
      if (found.suspended_at !== null)
        throw new AppError('suspended', { message: `${clean(found.email)} is already suspended.` });
      const { account, endedSessions } = await deps.accounts.suspend(
        found.id,
        (options.reason as string | undefined) ?? null,
        byOperator(),
      );
      return {
        json: { ...view(account), sessions_ended: endedSessions },
        text: `suspended ${clean(account.email)}; ${counted(endedSessions, 'session')} ended`,
      };
    },
  },
  {
    noun: 'accounts',
    verb: 'unsuspend',
    summary: 'Lift a suspension',
    args: ['ACCOUNT'],
    async run(deps, { args }) {
      const found = await deps.accounts.find(args[0] as string);
      if (found.suspended_at === null)
        throw new AppError('conflict', { message: `${clean(found.email)} is not suspended.` });
      const account = await deps.accounts.unsuspend(found.id, byOperator());
      return { json: view(account), text: `unsuspended ${clean(account.email)}` };
    },
  },
  {
    noun: 'accounts',
    verb: '2fa-reset',
    summary:
      "Turn an account's two-factor sign-in off: recovery codes deleted, every session ended, the customer mailed",
    args: ['ACCOUNT'],
    async run(deps, { args }) {
      const account = await deps.accounts.find(args[0] as string);
      const { wasOn, endedSessions } = await deps.twoFactor.staffReset(account, byOperator());
      return {
        json: { ...view(account), two_factor_was_on: wasOn, sessions_ended: endedSessions },
        text: `two-factor sign-in ${wasOn ? 'turned off' : 'was not on'} for ${clean(account.email)}; ${counted(endedSessions, 'session')} ended; the customer was mailed`,
      };
    },
  },
];

// /api/v1/staff/accounts (CONTRACT §14): customers' accounts. GET searches (support) and shows one
// with its services, recent ledger and activity (support); POST {action, id, reason?, amount_paise?}
// changes one through the same core services as the staff CLI (`accounts suspend|unsuspend|2fa-reset`,
// `wallet credit|refund`), audited in their transactions (whoOfStaff), the customer's activity log told.
// refund_outside records money of the wallet already paid back outside the platform (bank or UPI;
// `wallet refund`, core wallet.withdraw: a `withdrawal` row, never below zero).
// The row is `support` (reset_2fa, resend_verification); suspend, unsuspend, credit, debit and
// refund_outside need `billing` (403 forbidden_role below it).

import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyInstance } from 'fastify';
import { Type } from 'typebox';
import { listActivity } from '../../core/activity/activity.ts';
import type { Deps } from '../../core/deps.ts';
import { AppError } from '../../core/errors.ts';
import { formatPaise } from '../../core/money.ts';
import type { StaffRole } from '../../core/staff/roles.ts';
import { mutationBody, okSchema } from '../client/envelopes.ts';
import { sessionErrors } from '../schemas.ts';
import { requireRole, whoOfStaff } from './context.ts';
import {
  accountView,
  activityView,
  ledgerView,
  Reason,
  StaffAccountSchema,
  StaffActivitySchema,
  StaffLedgerSchema,
  StaffServiceSchema,
  serviceView,
} from './views.ts';

const tags = ['staff: accounts'];

const ACTIONS = [
  'suspend',
  'unsuspend',
  'credit',
  'debit',
  'refund_outside',
  'reset_2fa',
  'resend_verification',
] as const;
type Action = (typeof ACTIONS)[number];
/** The actions that move money (amount_paise required). */
const MONEY_ACTIONS: readonly Action[] = ['credit', 'debit', 'refund_outside'];

/** The least role of each action (the route's row is the least of these). */
export const ACCOUNT_ACTION_ROLES: Record<Action, StaffRole> = {
  suspend: 'billing',
  unsuspend: 'billing',
  credit: 'billing',
  debit: 'billing',
  refund_outside: 'billing',
  reset_2fa: 'support',
  resend_verification: 'support',
};

const IdParams = Type.Object({ id: Type.Integer({ minimum: 1 }) });

export async function staffAccountRoutes(root: FastifyInstance, { deps }: { deps: Deps }): Promise<void> {
  const app = root.withTypeProvider<TypeBoxTypeProvider>();

  app.get(
    '/accounts',
    {
      schema: {
        operationId: 'staffAccounts',
        tags,
        summary: 'Search accounts by e-mail, username, name or id (oldest first)',
        querystring: Type.Object({
          q: Type.Optional(
            Type.String({ maxLength: 200, description: 'part of an e-mail, username or name; or an id' }),
          ),
          limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 200, default: 50 })),
          cursor: Type.Optional(
            Type.String({ pattern: '^[0-9]{1,9}$', description: 'next_cursor of the page before' }),
          ),
        }),
        response: {
          200: okSchema({
            accounts: Type.Array(StaffAccountSchema),
            next_cursor: Type.Union([Type.String(), Type.Null()]),
          }),
        },
      },
    },
    async (request) => {
      const limit = request.query.limit ?? 50;
      const offset = Number(request.query.cursor ?? 0);
      const q = request.query.q?.trim() ?? '';
      const rows = await deps.accounts.list({ limit: limit + 1, offset, ...(q ? { search: q } : {}) });
      // An id: that account first (a search by text would not find it by its number).
      if (/^\d{1,9}$/.test(q) && offset === 0) {
        const byId = await deps.accounts.find(q).catch(() => null);
        if (byId) rows.splice(0, rows.length, byId, ...rows.filter((a) => a.id !== byId.id));
      }
      const more = rows.length > limit;
      return {
        success: true as const,
        message: 'Accounts.',
        accounts: rows.slice(0, limit).map(accountView),
        next_cursor: more ? String(offset + limit) : null,
      };
    },
  );

  app.get(
    '/accounts/:id',
    {
      schema: {
        operationId: 'staffAccount',
        tags,
        summary: 'One account: profile, balance, two-factor state, services, latest ledger rows and activity',
        params: IdParams,
        response: {
          200: okSchema({
            account: StaffAccountSchema,
            balance: Type.String({ description: 'INR' }),
            two_factor: Type.Boolean({ description: 'two-factor sign-in is on (reset_2fa turns it off)' }),
            services: Type.Array(StaffServiceSchema),
            ledger: Type.Array(StaffLedgerSchema),
            activity: Type.Array(StaffActivitySchema),
          }),
          ...sessionErrors(404, 422),
        },
      },
    },
    async (request) => {
      const account = await deps.accounts.find(String(request.params.id));
      const [balance, twoFactor, services, ledger, activity] = await Promise.all([
        deps.wallet.balance(account.id),
        deps.twoFactor.status(account.id),
        deps.serviceStaff.listServices({ accountId: account.id, limit: 100 }),
        deps.wallet.history(account.id, 1, 20),
        listActivity(deps.database.db, account.id, { page: 1, perPage: 20, types: null }),
      ]);
      return {
        success: true as const,
        message: 'Account.',
        account: accountView(account),
        balance: formatPaise(balance),
        two_factor: twoFactor.totp,
        services: services.map(serviceView),
        ledger: ledger.rows.map(ledgerView),
        activity: activity.rows.map(activityView),
      };
    },
  );

  app.post(
    '/accounts',
    {
      schema: {
        operationId: 'staffAccountAction',
        tags,
        summary:
          'Suspend, unsuspend, credit or debit the wallet, record a refund paid outside, reset two-factor sign-in, resend the verification mail',
        description:
          'suspend, unsuspend, credit, debit, refund_outside: billing or admin; reset_2fa, resend_verification: ' +
          'support and above. credit and debit need amount_paise and a reason (kept on the ledger row and in the ' +
          'audit log); suspend needs a reason. refund_outside records money of the wallet already paid back to the ' +
          'customer outside the platform (bank transfer or UPI; as `npm run admin -- wallet refund`): a `withdrawal` ' +
          "ledger row, audited wallet.refund, the customer's activity told; it needs amount_paise and, as reason, " +
          'how it was paid back (the bank or UPI reference). A debit or refund_outside beyond the balance is 422 ' +
          'insufficient_funds (its message and details say the balance) and changes nothing.',
        body: mutationBody({
          action: Type.Union(ACTIONS.map((a) => Type.Literal(a))),
          id: Type.Integer({ minimum: 1 }),
          reason: Reason,
          amount_paise: Type.Optional(
            Type.Integer({ minimum: 1, description: 'credit, debit, refund_outside: paise' }),
          ),
        }),
        response: {
          200: okSchema({
            account: StaffAccountSchema,
            balance: Type.String({ description: 'INR, after the change' }),
          }),
          ...sessionErrors(404, 409, 422),
        },
      },
    },
    async (request) => {
      const { action, id, amount_paise } = request.body;
      requireRole(request, ACCOUNT_ACTION_ROLES[action]);
      const reason = request.body.reason?.trim() ?? '';
      const fields: Record<string, string> = {};
      if (MONEY_ACTIONS.includes(action) && amount_paise === undefined) fields.amount_paise = 'is required';
      if (action === 'refund_outside' && reason.length < 3)
        fields.reason = 'say how it was paid back: the bank or UPI reference (at least 3 characters)';
      else if (['credit', 'debit', 'suspend'].includes(action) && reason.length < 3)
        fields.reason = 'say why (at least 3 characters; kept in the audit log)';
      if (Object.keys(fields).length > 0) throw AppError.fields(fields);
      const account = await deps.accounts.find(String(id));
      const who = whoOfStaff(request);
      const message = await run(deps, action, account, { reason, amount_paise, who });
      return {
        success: true as const,
        message,
        account: accountView(await deps.accounts.find(String(id))),
        balance: formatPaise(await deps.wallet.balance(id)),
      };
    },
  );
}

async function run(
  deps: Deps,
  action: Action,
  account: Awaited<ReturnType<Deps['accounts']['find']>>,
  input: { reason: string; amount_paise: number | undefined; who: ReturnType<typeof whoOfStaff> },
): Promise<string> {
  const { reason, who } = input;
  const amount = input.amount_paise === undefined ? undefined : formatPaise(BigInt(input.amount_paise));
  switch (action) {
    case 'suspend':
      if (account.suspended_at !== null)
        throw new AppError('conflict', { message: 'The account is already suspended.' });
      await deps.accounts.suspend(account.id, reason, who);
      return 'Suspended; every session of the account ended.';
    case 'unsuspend':
      if (account.suspended_at === null) throw new AppError('conflict', { message: 'The account is not suspended.' });
      await deps.accounts.unsuspend(account.id, who);
      return 'The suspension is lifted.';
    case 'credit':
      await deps.wallet.credit(account.id, amount, reason, who);
      return `₹${amount} added to the wallet.`;
    case 'debit':
      await deps.wallet.debit(account.id, amount, reason, who);
      return `₹${amount} taken out of the wallet.`;
    case 'refund_outside':
      await deps.wallet.withdraw(account.id, amount, reason, who);
      return `₹${amount} recorded as paid back outside the platform.`;
    case 'reset_2fa': {
      const { wasOn } = await deps.twoFactor.staffReset(account, who);
      return wasOn ? 'Two-factor sign-in is off; the customer was mailed.' : 'Two-factor sign-in was not on.';
    }
    case 'resend_verification':
      if (account.email_verified_at !== null)
        throw new AppError('conflict', { message: 'The e-mail address is already verified.' });
      await deps.accounts.resendVerification(account, who);
      return 'A new verification link was mailed.';
  }
}

// One customer's account (GET accounts/{id}): the profile with the wallet's balance and whether
// two-factor sign-in is on, the services, the latest 20 ledger rows and activity rows. The actions
// the member's role may use (POST accounts) each ask first, in a dialog, for what the API needs:
// suspend (a reason), credit and debit (an amount and a reason), record a refund paid outside the
// platform (an amount and the bank or UPI reference; the dialog shows the balance after) — billing
// and admin; reset two-factor sign-in and resend the verification mail — support and above.

import { useMutation, useQuery } from '@tanstack/react-query';
import { useState } from 'react';
import { Link, useParams } from 'react-router';
import { Alert, Button, ErrorAlert, fieldError, Loading, PageHeader, Status, TextField } from '../components/ui.tsx';
import { day, rupees, when } from '../lib/format.ts';
import { useStaffTitle } from './AuthPages.tsx';
import { call, staffApi } from './api.ts';
import { ActionDialog, paiseOf, ReasonField, useActionDialog } from './Dialog.tsx';
import { ForbiddenOr } from './Forbidden.tsx';
import { StaffTable } from './StaffTable.tsx';
import { mayUse, type StaffRole, useMe } from './session.tsx';

type Action = 'suspend' | 'unsuspend' | 'credit' | 'debit' | 'refund_outside' | 'reset_2fa' | 'resend_verification';

/** Each action: its button, the least role (the API's ACCOUNT_ACTION_ROLES), what it asks for. */
const ACTIONS: Record<Action, { label: string; least: StaffRole; danger?: boolean; reason?: true; amount?: true }> = {
  credit: { label: 'Credit the wallet', least: 'billing', reason: true, amount: true },
  debit: { label: 'Debit the wallet', least: 'billing', reason: true, amount: true },
  refund_outside: { label: 'Record refund paid outside', least: 'billing', reason: true, amount: true },
  suspend: { label: 'Suspend', least: 'billing', danger: true, reason: true },
  unsuspend: { label: 'Lift the suspension', least: 'billing' },
  reset_2fa: { label: 'Reset two-factor sign-in', least: 'support' },
  resend_verification: { label: 'Resend the verification mail', least: 'support' },
};

/** Who did it, as the activity row says (a staff row names "Hostplane staff" or "operator"). */
const WHO: Record<string, string> = { self: 'the customer', system: 'Hostplane' };

export default function AccountPage() {
  const id = Number(useParams().id);
  const me = useMe();
  const role = me.data?.staff.role;
  const key = ['staff', 'account', id];
  const detail = useQuery({
    queryKey: key,
    queryFn: () => call(staffApi.GET('/api/v1/staff/accounts/{id}', { params: { path: { id } } })),
  });
  useStaffTitle(detail.data ? detail.data.account.email : 'Account');
  const dialog = useActionDialog<Action>(key);

  if (detail.isPending) return <Loading what="Loading the account" />;
  if (detail.isError)
    return (
      <ForbiddenOr error={detail.error}>
        <PageHeader title="Account" />
        <ErrorAlert error={detail.error} />
        <Link to="/staff/accounts">Back to the accounts</Link>
      </ForbiddenOr>
    );
  const { account, balance, two_factor, services, ledger, activity } = detail.data;
  const offered = (Object.keys(ACTIONS) as Action[]).filter((action) => {
    if (!mayUse(role, ACTIONS[action].least)) return false;
    if (action === 'suspend') return account.suspended_at === null;
    if (action === 'unsuspend') return account.suspended_at !== null;
    if (action === 'resend_verification') return account.email_verified_at === null;
    return true;
  });

  return (
    <>
      <p className="staff-back">
        <Link to="/staff/accounts">Accounts</Link>
      </p>
      <PageHeader title={account.email} />
      {dialog.done ? <Alert kind="success">{dialog.done}</Alert> : null}
      <section className="card" aria-labelledby="profile-title">
        <h2 id="profile-title">Profile</h2>
        <dl className="staff-facts">
          <dt>Account</dt>
          <dd>#{account.id}</dd>
          <dt>Status</dt>
          <dd>
            <Status value={account.status} />
            {account.suspended_at ? (
              <span className="muted">
                {' '}
                since {when(account.suspended_at)}: {account.suspended_reason ?? 'no reason given'}
              </span>
            ) : null}
          </dd>
          <dt>Name</dt>
          <dd>{account.name}</dd>
          <dt>Username</dt>
          <dd>{account.username ?? '—'}</dd>
          <dt>E-mail verified</dt>
          <dd>{account.email_verified_at ? when(account.email_verified_at) : 'not yet'}</dd>
          <dt>Two-factor sign-in</dt>
          <dd>{two_factor ? 'on' : 'off'}</dd>
          <dt>Wallet balance</dt>
          <dd className="staff-amount">{rupees(balance)}</dd>
          <dt>Customer since</dt>
          <dd>{day(account.created_at)}</dd>
        </dl>
        {offered.length > 0 ? (
          <div className="staff-row-actions">
            {offered.map((action) => (
              <Button
                key={action}
                variant={ACTIONS[action].danger ? 'danger' : 'secondary'}
                onClick={() => dialog.ask(action)}
              >
                {ACTIONS[action].label}
              </Button>
            ))}
          </div>
        ) : null}
      </section>
      {dialog.open ? (
        <AccountActionDialog
          action={dialog.open}
          account={account}
          balance={balance}
          onClose={dialog.close}
          onDone={dialog.finish}
        />
      ) : null}

      <h2>Services</h2>
      {services.length === 0 ? (
        <p className="muted">No services.</p>
      ) : (
        <StaffTable
          caption="Services of this account"
          columns={['Service', 'Status', { label: 'Price a month', num: true }, 'Paid until']}
        >
          {services.map((s) => (
            <tr key={s.id}>
              <td data-label="Service">
                <Link to={`/staff/services/${s.id}`}>{s.label}</Link> <span className="muted">{s.type}</span>
              </td>
              <td data-label="Status">
                <Status value={s.status} />
              </td>
              <td data-label="Price" className="num">
                {rupees(s.price)}
              </td>
              <td data-label="Paid until">{day(s.paid_until)}</td>
            </tr>
          ))}
        </StaffTable>
      )}

      <h2>Ledger</h2>
      {ledger.length === 0 ? (
        <p className="muted">No wallet movements yet.</p>
      ) : (
        <StaffTable
          caption="The latest 20 wallet movements, newest first"
          className="staff-ledger"
          columns={['When', 'Kind', { label: 'Amount', num: true }, { label: 'Balance after', num: true }, 'Note']}
        >
          {ledger.map((r) => (
            <tr key={r.public_id}>
              <td data-label="When">{when(r.at)}</td>
              <td data-label="Kind">{r.kind}</td>
              <td data-label="Amount" className="num">
                {rupees(r.amount)}
              </td>
              <td data-label="Balance after" className="num">
                {rupees(r.balance_after)}
              </td>
              <td data-label="Note" className="staff-wrap">
                {r.note ?? ''}
              </td>
            </tr>
          ))}
        </StaffTable>
      )}

      <h2>Activity</h2>
      {activity.length === 0 ? (
        <p className="muted">No activity yet.</p>
      ) : (
        <StaffTable caption="The latest 20 activity rows, newest first" columns={['When', 'Who', 'What', 'From']}>
          {activity.map((r, i) => (
            // biome-ignore lint/suspicious/noArrayIndexKey: activity rows have no id; the list is replaced whole
            <tr key={`${r.at}-${i}`}>
              <td data-label="When">{when(r.at)}</td>
              <td data-label="Who">{WHO[r.actor] ?? r.staff_name ?? r.actor}</td>
              <td data-label="What" className="staff-wrap">
                {r.summary}
              </td>
              <td data-label="From">
                <span className="mono">{r.ip ?? '—'}</span>
              </td>
            </tr>
          ))}
        </StaffTable>
      )}
    </>
  );
}

function AccountActionDialog({
  action,
  account,
  balance,
  onClose,
  onDone,
}: {
  action: Action;
  account: { id: number; email: string };
  /** The wallet's balance (INR), for the balance a refund leaves. */
  balance: string;
  onClose: () => void;
  onDone: (message: string) => Promise<void>;
}) {
  const spec = ACTIONS[action];
  const [reason, setReason] = useState('');
  const [amount, setAmount] = useState('');
  const [amountError, setAmountError] = useState<string | undefined>();
  const change = useMutation({
    mutationFn: (body: { action: Action; id: number; reason?: string; amount_paise?: number }) =>
      call(staffApi.POST('/api/v1/staff/accounts', { body })),
    onSuccess: (data) => onDone(`${data.message} Balance now ${rupees(data.balance)}.`),
  });
  const submit = () => {
    let amount_paise: number | undefined;
    if (spec.amount) {
      const paise = paiseOf(amount);
      if (paise === null) {
        setAmountError('Enter an amount in rupees, e.g. 1250.50.');
        return;
      }
      setAmountError(undefined);
      amount_paise = paise;
    }
    change.mutate({
      action,
      id: account.id,
      ...(spec.reason ? { reason } : {}),
      ...(amount_paise ? { amount_paise } : {}),
    });
  };
  const what: Record<Action, string> = {
    credit: `Add money to the wallet of ${account.email}. The ledger row keeps the reason.`,
    debit: `Take money out of the wallet of ${account.email}; never below zero. The ledger row keeps the reason.`,
    refund_outside: `Record money of the wallet of ${account.email} that was already paid back by bank transfer or UPI (nothing is sent from here): a withdrawal row on the ledger, never below zero.`,
    suspend: `${account.email} is signed out everywhere at once and cannot sign in until the suspension is lifted.`,
    unsuspend: `${account.email} can sign in again.`,
    reset_2fa: `Two-factor sign-in of ${account.email} is turned off and every session ends; the customer is mailed and can enrol again.`,
    resend_verification: `A new verification link is mailed to ${account.email}.`,
  };
  return (
    <ActionDialog
      title={`${spec.label}?`}
      submitLabel={spec.label}
      variant={spec.danger ? 'danger' : 'primary'}
      busy={change.isPending}
      error={change.error}
      fields={['reason', 'amount_paise']}
      onSubmit={submit}
      onClose={onClose}
    >
      <p>{what[action]}</p>
      {spec.amount ? (
        <TextField
          label="Amount in rupees"
          inputMode="decimal"
          autoComplete="off"
          value={amount}
          onChange={(e) => setAmount(e.target.value)}
          error={amountError ?? fieldError(change.error, 'amount_paise')}
        />
      ) : null}
      {action === 'refund_outside' ? <BalanceAfter balance={balance} amount={amount} /> : null}
      {spec.reason ? (
        <ReasonField
          value={reason}
          onChange={setReason}
          error={change.error}
          {...(action === 'refund_outside' ? { label: 'How it was paid back (bank or UPI reference)' } : {})}
        />
      ) : null}
    </ActionDialog>
  );
}

/** The wallet now and after taking out the amount typed (or that it is more than the wallet holds). */
function BalanceAfter({ balance, amount }: { balance: string; amount: string }) {
  const held = Math.round(Number(balance) * 100);
  const paise = paiseOf(amount);
  const left = paise === null ? null : held - paise;
  return (
    <p aria-live="polite">
      The wallet holds {rupees(balance)}.{' '}
      {left === null ? null : left < 0 ? (
        <strong>That is more than the wallet holds.</strong>
      ) : (
        <>
          Balance after: <strong>{rupees(left / 100)}</strong>
        </>
      )}
    </p>
  );
}

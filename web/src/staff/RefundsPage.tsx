// Online deposits and their refunds (billing and admin; GET deposits?status=approved&method=razorpay):
// each paid deposit, newest first, and whether it was refunded. Refund (POST deposits {action:
// refund}) sends all or part of it back to the card, UPI or bank account it came from through
// Razorpay, and takes it out of the wallet in the same transaction — never below zero, once per
// deposit. Money refunded into the wallet (a credit note) is on the invoice's page instead.

import { useMutation, useQuery } from '@tanstack/react-query';
import { useState } from 'react';
import { Link } from 'react-router';
import { Alert, Button, Empty, ErrorAlert, fieldError, Loading, PageHeader, TextField } from '../components/ui.tsx';
import { rupees, when } from '../lib/format.ts';
import { useStaffTitle } from './AuthPages.tsx';
import { call, staffApi } from './api.ts';
import { ActionDialog, paiseOf, ReasonField, useActionDialog } from './Dialog.tsx';
import { ForbiddenOr } from './Forbidden.tsx';
import { StaffTable } from './StaffTable.tsx';

const KEY = ['staff', 'deposits', 'online'] as const;

interface Target {
  id: number;
  public_id: string;
  amount: string;
  email: string;
}

export default function RefundsPage() {
  useStaffTitle('Refunds');
  const list = useQuery({
    queryKey: KEY,
    queryFn: async () =>
      (
        await call(
          staffApi.GET('/api/v1/staff/deposits', {
            params: { query: { status: 'approved', method: 'razorpay', limit: 200 } },
          }),
        )
      ).deposits,
  });
  const dialog = useActionDialog<Target>(KEY);

  return (
    <ForbiddenOr error={list.error}>
      <PageHeader title="Refunds" />
      <p className="muted">
        Online (Razorpay) deposits, newest first. A refund goes back to where the money came from and leaves the wallet;
        to give money back into the wallet, credit the invoice on its page (<Link to="/staff/invoices">Invoices</Link>
        ).
      </p>
      {dialog.done ? <Alert kind="success">{dialog.done}</Alert> : null}
      {list.isPending ? (
        <Loading what="Loading the online deposits" />
      ) : list.isError ? (
        <ErrorAlert error={list.error} />
      ) : list.data.length === 0 ? (
        <Empty title="No online deposits">Customers have not paid online yet.</Empty>
      ) : (
        <StaffTable
          caption="Approved online deposits, newest first"
          columns={['Deposit', 'Customer', { label: 'Amount', num: true }, 'Refund', 'Action']}
        >
          {list.data.map((d) => (
            <tr key={d.id}>
              <td data-label="Deposit" className="staff-wrap">
                <span className="mono">{d.public_id}</span>
                <div className="muted">paid {when(d.reviewed_at ?? d.created_at)}</div>
              </td>
              <td data-label="Customer" className="staff-wrap">
                <Link to={`/staff/accounts/${d.account.id}`}>{d.account.email}</Link>
              </td>
              <td data-label="Amount" className="num">
                {rupees(d.amount)}
              </td>
              <td data-label="Refund" className="staff-wrap">
                {d.refund ? (
                  <>
                    {rupees(d.refund.amount)} refunded {when(d.refund.at)}
                    <div className="muted">{d.refund.reason ?? ''}</div>
                  </>
                ) : (
                  'none'
                )}
              </td>
              <td data-label="Action">
                {d.refund ? (
                  '—'
                ) : (
                  <Button
                    variant="secondary"
                    aria-label={`Refund ${d.public_id}`}
                    onClick={() =>
                      dialog.ask({ id: d.id, public_id: d.public_id, amount: d.amount, email: d.account.email })
                    }
                  >
                    Refund
                  </Button>
                )}
              </td>
            </tr>
          ))}
        </StaffTable>
      )}
      {dialog.open ? <RefundDialog target={dialog.open} onClose={dialog.close} onDone={dialog.finish} /> : null}
    </ForbiddenOr>
  );
}

function RefundDialog({
  target,
  onClose,
  onDone,
}: {
  target: Target;
  onClose: () => void;
  onDone: (message: string) => Promise<void>;
}) {
  const [amount, setAmount] = useState('');
  const [reason, setReason] = useState('');
  const [amountError, setAmountError] = useState<string | undefined>();
  const refund = useMutation({
    mutationFn: (body: { action: 'refund'; id: number; amount_paise?: number; reason: string }) =>
      call(staffApi.POST('/api/v1/staff/deposits', { body })),
    onSuccess: (data) =>
      onDone(
        `${target.public_id}: ₹${data.deposit.refund?.amount ?? ''} refunded to the payer; the wallet is debited.`,
      ),
  });
  const submit = () => {
    let amount_paise: number | undefined;
    if (amount.trim() !== '') {
      const paise = paiseOf(amount);
      if (paise === null) {
        setAmountError('Enter an amount in rupees, e.g. 250.50, or leave it empty for the whole deposit.');
        return;
      }
      amount_paise = paise;
    }
    setAmountError(undefined);
    refund.mutate({ action: 'refund', id: target.id, reason, ...(amount_paise ? { amount_paise } : {}) });
  };
  return (
    <ActionDialog
      title={`Refund ${target.public_id}?`}
      submitLabel="Refund through Razorpay"
      variant="danger"
      busy={refund.isPending}
      error={refund.error}
      fields={['amount_paise', 'reason']}
      onSubmit={submit}
      onClose={onClose}
    >
      <p>
        Up to {rupees(target.amount)} goes back to the card, UPI or bank account {target.email} paid with, and leaves
        their wallet. A deposit is refunded once; the wallet never goes below zero.
      </p>
      <TextField
        label="Amount in rupees (empty: the whole deposit)"
        inputMode="decimal"
        autoComplete="off"
        value={amount}
        onChange={(e) => setAmount(e.target.value)}
        error={amountError ?? fieldError(refund.error, 'amount_paise')}
      />
      <ReasonField
        label="Reason (the customer reads it; kept in the audit log)"
        value={reason}
        onChange={setReason}
        error={refund.error}
      />
    </ActionDialog>
  );
}

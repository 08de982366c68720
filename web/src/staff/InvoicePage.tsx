// One tax invoice or credit note (billing and admin; GET invoices/{id}): who it is for, its lines
// and tax heads, its PDF (the one the customer downloads), the credit notes against it, and —
// for an invoice not fully credited — a credit note from here (POST invoices {action: credit}): an
// amount (all that is left when empty) and a reason printed on the note; the money goes back to
// the customer's wallet in the same transaction, and the audit trail keeps it.

import { useMutation, useQuery } from '@tanstack/react-query';
import { Fragment, useState } from 'react';
import { Link, useParams } from 'react-router';
import { Alert, Button, ErrorAlert, fieldError, Loading, PageHeader, TextField } from '../components/ui.tsx';
import { day, rupees, when } from '../lib/format.ts';
import { useStaffTitle } from './AuthPages.tsx';
import { call, staffApi } from './api.ts';
import { ActionDialog, paiseOf, ReasonField, useActionDialog } from './Dialog.tsx';
import { ForbiddenOr } from './Forbidden.tsx';
import { StaffTable } from './StaffTable.tsx';

export default function InvoicePage() {
  const id = Number(useParams().id);
  const key = ['staff', 'invoice', id];
  const detail = useQuery({
    queryKey: key,
    queryFn: () => call(staffApi.GET('/api/v1/staff/invoices/{id}', { params: { path: { id } } })),
  });
  useStaffTitle(detail.data ? detail.data.invoice.number : 'Invoice');
  const dialog = useActionDialog<'credit'>(key);

  if (detail.isPending) return <Loading what="Loading the invoice" />;
  if (detail.isError)
    return (
      <ForbiddenOr error={detail.error}>
        <PageHeader title="Invoice" />
        <ErrorAlert error={detail.error} />
        <Link to="/staff/invoices">Back to the invoices</Link>
      </ForbiddenOr>
    );
  const { invoice, credit_notes, pdf_url } = detail.data;
  const isInvoice = invoice.kind === 'invoice';
  const heads = [
    ['CGST', invoice.tax.cgst],
    ['SGST', invoice.tax.sgst],
    ['IGST', invoice.tax.igst],
  ].filter(([, v]) => v !== '0.00');

  return (
    <>
      <p className="staff-back">
        <Link to="/staff/invoices">Invoices</Link>
      </p>
      <PageHeader title={invoice.number}>
        <a className="btn btn-secondary" href={pdf_url} download>
          Download the PDF
        </a>
      </PageHeader>
      {dialog.done ? <Alert kind="success">{dialog.done}</Alert> : null}
      <section className="card" aria-labelledby="doc-title">
        <h2 id="doc-title">{isInvoice ? 'Tax invoice' : 'Credit note'}</h2>
        <dl className="staff-facts">
          <dt>Customer</dt>
          <dd>
            <Link to={`/staff/accounts/${invoice.account.id}`}>{invoice.account.email}</Link>
          </dd>
          <dt>Billed to</dt>
          <dd>
            {invoice.buyer.legal_name}
            {invoice.buyer.gstin ? <span className="mono"> · GSTIN {invoice.buyer.gstin}</span> : null}
          </dd>
          <dt>Issued</dt>
          <dd>{when(invoice.issued_at)}</dd>
          {invoice.original_number && invoice.original_invoice_id ? (
            <>
              <dt>Against</dt>
              <dd>
                <Link to={`/staff/invoices/${invoice.original_invoice_id}`} className="mono">
                  {invoice.original_number}
                </Link>
                {invoice.original_issued_at ? ` of ${day(invoice.original_issued_at)}` : ''}
              </dd>
              <dt>Reason</dt>
              <dd>{invoice.reason ?? '—'}</dd>
            </>
          ) : null}
          <dt>Place of supply</dt>
          <dd>
            {invoice.place_of_supply_name} ({invoice.place_of_supply})
          </dd>
          <dt>Taxable value</dt>
          <dd>
            {rupees(invoice.taxable_value)} <span className="muted">(GST {invoice.tax.rate}%)</span>
          </dd>
          {heads.map(([head, amount]) => (
            <Fragment key={head}>
              <dt>{head}</dt>
              <dd>{rupees(amount)}</dd>
            </Fragment>
          ))}
          <dt>Total</dt>
          <dd className="staff-amount">{rupees(invoice.total)}</dd>
          {isInvoice ? (
            <>
              <dt>Credited so far</dt>
              <dd>{rupees(invoice.credited)}</dd>
              <dt>Left to credit</dt>
              <dd>{rupees(invoice.creditable)}</dd>
            </>
          ) : null}
        </dl>
        {isInvoice && invoice.creditable !== '0.00' ? (
          <div className="staff-row-actions">
            <Button variant="secondary" onClick={() => dialog.ask('credit')}>
              Issue a credit note
            </Button>
          </div>
        ) : null}
      </section>
      {dialog.open ? <CreditDialog invoice={invoice} onClose={dialog.close} onDone={dialog.finish} /> : null}

      <h2>Lines</h2>
      <StaffTable
        caption="What the document is for"
        columns={['Description', 'SAC', { label: 'Taxable', num: true }, { label: 'Total', num: true }]}
      >
        {invoice.lines.map((l, i) => (
          // biome-ignore lint/suspicious/noArrayIndexKey: an invoice's lines never change
          <tr key={i}>
            <td data-label="Description" className="staff-wrap">
              {l.description}
            </td>
            <td data-label="SAC" className="mono">
              {l.sac}
            </td>
            <td data-label="Taxable" className="num">
              {rupees(l.taxable_value)}
            </td>
            <td data-label="Total" className="num">
              {rupees(l.total)}
            </td>
          </tr>
        ))}
      </StaffTable>

      {isInvoice ? (
        <>
          <h2>Credit notes</h2>
          {credit_notes.length === 0 ? (
            <p className="muted">None against this invoice.</p>
          ) : (
            <StaffTable
              caption="Credit notes against this invoice, oldest first"
              columns={['Number', 'Issued', 'Reason', { label: 'Credited', num: true }]}
            >
              {credit_notes.map((n) => (
                <tr key={n.id}>
                  <td data-label="Number">
                    <Link to={`/staff/invoices/${n.id}`} className="mono">
                      {n.number}
                    </Link>
                  </td>
                  <td data-label="Issued">{day(n.issued_at)}</td>
                  <td data-label="Reason" className="staff-wrap">
                    {n.reason ?? ''}
                  </td>
                  <td data-label="Credited" className="num">
                    {rupees(n.total)}
                  </td>
                </tr>
              ))}
            </StaffTable>
          )}
        </>
      ) : null}
    </>
  );
}

function CreditDialog({
  invoice,
  onClose,
  onDone,
}: {
  invoice: { id: number; number: string; creditable: string; account: { email: string } };
  onClose: () => void;
  onDone: (message: string) => Promise<void>;
}) {
  const [amount, setAmount] = useState('');
  const [reason, setReason] = useState('');
  const [amountError, setAmountError] = useState<string | undefined>();
  const credit = useMutation({
    mutationFn: (body: { action: 'credit'; id: number; amount_paise?: number; reason: string }) =>
      call(staffApi.POST('/api/v1/staff/invoices', { body })),
    onSuccess: (data) => onDone(`${data.message} Balance now ${rupees(data.balance)}.`),
  });
  const submit = () => {
    let amount_paise: number | undefined;
    if (amount.trim() !== '') {
      const paise = paiseOf(amount);
      if (paise === null) {
        setAmountError('Enter an amount in rupees, e.g. 250.50, or leave it empty for all that is left.');
        return;
      }
      amount_paise = paise;
    }
    setAmountError(undefined);
    credit.mutate({ action: 'credit', id: invoice.id, reason, ...(amount_paise ? { amount_paise } : {}) });
  };
  return (
    <ActionDialog
      title={`Credit ${invoice.number}?`}
      submitLabel="Issue the credit note"
      busy={credit.isPending}
      error={credit.error}
      fields={['amount_paise', 'reason']}
      onSubmit={submit}
      onClose={onClose}
    >
      <p>
        A credit note against {invoice.number}; the amount goes back to the wallet of {invoice.account.email} at once.
        Up to {rupees(invoice.creditable)} is left to credit. The service, if any, is not touched.
      </p>
      <TextField
        label="Amount in rupees, with GST (empty: all that is left)"
        inputMode="decimal"
        autoComplete="off"
        value={amount}
        onChange={(e) => setAmount(e.target.value)}
        error={amountError ?? fieldError(credit.error, 'amount_paise')}
      />
      <ReasonField
        label="Reason (printed on the credit note; kept in the audit log)"
        value={reason}
        onChange={setReason}
        error={credit.error}
      />
    </ActionDialog>
  );
}

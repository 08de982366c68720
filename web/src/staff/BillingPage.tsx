// Billing (billing and admin): the billing cycle on demand — a dry run first (POST billing
// {action: preview}: what it would do to each service, nothing changes), then the run itself after
// a confirmation (audited) — and a month's invoices for GSTR-1: its totals on the page and the CSV
// to download (GET invoices/export; the month is India Standard Time's).

import { useMutation, useQuery } from '@tanstack/react-query';
import { type FormEvent, useState } from 'react';
import { Link } from 'react-router';
import { Alert, Button, Empty, ErrorAlert, fieldError, Loading, PageHeader, TextField } from '../components/ui.tsx';
import { plural, rupees, when } from '../lib/format.ts';
import { useStaffTitle } from './AuthPages.tsx';
import { call, staffApi } from './api.ts';
import { ActionDialog, ReasonField } from './Dialog.tsx';
import { ForbiddenOr } from './Forbidden.tsx';
import { StaffTable } from './StaffTable.tsx';

interface BillingAction {
  service: number;
  label: string;
  account: number;
  action: string;
  detail: string;
}

export default function BillingPage() {
  useStaffTitle('Billing');
  return (
    <>
      <PageHeader title="Billing" />
      <BillingRun />
      <InvoiceExport />
    </>
  );
}

function BillingRun() {
  const [confirming, setConfirming] = useState(false);
  const [reason, setReason] = useState('');
  const preview = useMutation({
    mutationFn: () => call(staffApi.POST('/api/v1/staff/billing', { body: { action: 'preview' } })),
  });
  const run = useMutation({
    mutationFn: () =>
      call(
        staffApi.POST('/api/v1/staff/billing', {
          body: { action: 'run', ...(reason.trim() ? { reason: reason.trim() } : {}) },
        }),
      ),
    onSuccess: () => {
      setConfirming(false);
      preview.reset();
    },
  });
  const shown = run.data ?? preview.data;

  return (
    <ForbiddenOr error={preview.error ?? run.error}>
      <section className="card" aria-labelledby="run-title">
        <h2 id="run-title">Billing cycle</h2>
        <p className="muted">
          The cycle the worker runs: reminders, renewals, unpaid orders, overdue suspensions and terminations. Preview
          it first; nothing changes until you run it.
        </p>
        <div className="row">
          <Button
            variant="secondary"
            busy={preview.isPending}
            onClick={() => {
              run.reset();
              preview.mutate();
            }}
          >
            Preview
          </Button>
          <Button disabled={!preview.data || run.isPending} onClick={() => setConfirming(true)}>
            Run the cycle now
          </Button>
        </div>
        {preview.error || run.data ? (
          <div className="staff-result">
            <ErrorAlert error={preview.error} />
            {run.data ? <Alert kind="success">{run.data.message} The run is in the audit trail.</Alert> : null}
          </div>
        ) : null}
        {shown ? (
          <div className="staff-result">
            <BillingActions at={shown.at} dryRun={shown.dry_run} actions={shown.actions} />
          </div>
        ) : null}
      </section>
      {confirming ? (
        <ActionDialog
          title="Run the billing cycle now?"
          submitLabel="Run the cycle"
          busy={run.isPending}
          error={run.error}
          fields={['reason']}
          onSubmit={() => run.mutate()}
          onClose={() => setConfirming(false)}
        >
          <p>
            It does what the preview listed ({plural(preview.data?.actions.length ?? 0, 'action')}), and anything that
            has become due since. Customers are charged, reminded and suspended as the cycle decides.
          </p>
          <ReasonField
            label="Reason (optional; kept in the audit log)"
            value={reason}
            onChange={setReason}
            error={run.error}
          />
        </ActionDialog>
      ) : null}
    </ForbiddenOr>
  );
}

function BillingActions({ at, dryRun, actions }: { at: string; dryRun: boolean; actions: BillingAction[] }) {
  const title = dryRun ? `Preview at ${when(at)}` : `Run at ${when(at)}`;
  if (actions.length === 0)
    return <Empty title={title}>{dryRun ? 'Nothing is due: a run would do nothing.' : 'Nothing was due.'}</Empty>;
  return (
    <StaffTable
      caption={
        <>
          {title}: {plural(actions.length, 'action')}
          {dryRun ? ' it would take' : ''}
        </>
      }
      shownCaption
      columns={['Service', 'Account', 'Action', 'Detail']}
    >
      {actions.map((a, i) => (
        // biome-ignore lint/suspicious/noArrayIndexKey: a service may have two actions of one kind; the list is replaced whole
        <tr key={`${a.service}-${a.action}-${i}`}>
          <td data-label="Service" className="staff-wrap">
            <Link to={`/staff/services/${a.service}`}>{a.label}</Link>
          </td>
          <td data-label="Account">
            <Link to={`/staff/accounts/${a.account}`}>#{a.account}</Link>
          </td>
          <td data-label="Action">
            <span className="mono">{a.action}</span>
          </td>
          <td data-label="Detail" className="staff-wrap">
            {a.detail}
          </td>
        </tr>
      ))}
    </StaffTable>
  );
}

/** The month before this one in India Standard Time, "YYYY-MM" (the month usually filed). */
function lastMonth(now = new Date()): string {
  const [year = 2000, month = 1] = new Intl.DateTimeFormat('en-CA', {
    timeZone: 'Asia/Kolkata',
    year: 'numeric',
    month: '2-digit',
  })
    .format(now)
    .split('-')
    .map(Number);
  return month === 1 ? `${year - 1}-12` : `${year}-${String(month - 1).padStart(2, '0')}`;
}

interface Heads {
  value: string;
  taxable: string;
  igst: string;
  cgst: string;
  sgst: string;
  count: number;
}

interface ExportDoc {
  month: string;
  totals: Record<'invoices' | 'credit_notes' | 'net', Heads>;
  reconciliation: { reconciles: boolean; difference: string };
}

function InvoiceExport() {
  const [typed, setTyped] = useState(lastMonth);
  const [month, setMonth] = useState<string | null>(null);
  const totals = useQuery({
    queryKey: ['staff', 'gstr1', month],
    enabled: month !== null,
    queryFn: async () => {
      const data = await call(
        staffApi.GET('/api/v1/staff/invoices/export', {
          params: { query: { month: month as string, format: 'json' } },
        }),
      );
      // format=json answers the envelope (the CSV string is format=csv's).
      return (data as { export: unknown }).export as ExportDoc;
    },
  });
  const show = (event: FormEvent) => {
    event.preventDefault();
    setMonth(typed);
  };
  const valid = /^\d{4}-(0[1-9]|1[0-2])$/.test(typed);

  return (
    <section className="card" aria-labelledby="export-title">
      <h2 id="export-title">Invoice export (GSTR-1)</h2>
      <p className="muted">A month's invoices and credit notes in GSTR-1 sections, the month in India Standard Time.</p>
      <form className="staff-filters" onSubmit={show}>
        <TextField
          label="Month (YYYY-MM)"
          className="staff-month"
          type="month"
          value={typed}
          onChange={(e) => setTyped(e.target.value)}
          error={fieldError(totals.error, 'month')}
        />
        <Button type="submit" variant="secondary" disabled={!valid}>
          Show totals
        </Button>
        {valid ? (
          <a
            className="btn btn-primary"
            href={`/api/v1/staff/invoices/export?month=${typed}&format=csv`}
            download={`gstr1-${typed}.csv`}
          >
            Download CSV
          </a>
        ) : null}
      </form>
      {month === null ? null : totals.isPending ? (
        <Loading what="Adding up the month" />
      ) : totals.isError ? (
        <ErrorAlert error={totals.error} fields={['month']} />
      ) : (
        <ExportTotals doc={totals.data} />
      )}
    </section>
  );
}

/** IGST + CGST + SGST, added in paise (the API's amounts are decimal strings). */
function taxOf(h: Heads): string {
  const paise = [h.igst, h.cgst, h.sgst].reduce((sum, v) => sum + Math.round(Number(v) * 100), 0);
  return (paise / 100).toFixed(2);
}

function ExportTotals({ doc }: { doc: ExportDoc }) {
  const rows: [string, Heads][] = [
    ['Invoices', doc.totals.invoices],
    ['Credit notes', doc.totals.credit_notes],
    ['Net', doc.totals.net],
  ];
  return (
    <>
      <StaffTable
        caption={<>Totals of {doc.month}</>}
        shownCaption
        columns={[
          'Documents',
          { label: 'Count', num: true },
          { label: 'Taxable', num: true },
          { label: 'Tax (IGST + CGST + SGST)', num: true },
          { label: 'Value', num: true },
        ]}
      >
        {rows.map(([name, h]) => (
          <tr key={name}>
            <td data-label="Documents">{name}</td>
            <td data-label="Count" className="num">
              {h.count}
            </td>
            <td data-label="Taxable" className="num">
              {rupees(h.taxable)}
            </td>
            <td data-label="Tax" className="num">
              {rupees(taxOf(h))}
            </td>
            <td data-label="Value" className="num">
              {rupees(h.value)}
            </td>
          </tr>
        ))}
      </StaffTable>
      {doc.reconciliation.reconciles ? (
        <Alert kind="success">The documents agree with the wallet ledger.</Alert>
      ) : (
        <Alert kind="warning">
          The documents and the wallet ledger differ by {rupees(doc.reconciliation.difference)}: see the CSV's
          reconciliation section.
        </Alert>
      )}
    </>
  );
}

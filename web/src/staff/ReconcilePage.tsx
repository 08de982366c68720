// Statement reconciliation (billing and admin; POST deposits/reconcile): upload a bank or UPI
// statement (CSV), see first what it would do (preview: nothing changes), then approve the pending
// deposits it shows paid, after a confirmation. Every line is listed with its outcome, with the
// lines that could not be read and the pending deposits of those days no line names. The same run
// as `npm run admin -- deposits reconcile FILE` (docs/RECONCILIATION.md).

import { useMutation } from '@tanstack/react-query';
import { type ChangeEvent, type FormEvent, useState } from 'react';
import { Alert, Button, ErrorAlert, fieldError, PageHeader, SelectField } from '../components/ui.tsx';
import { rupees, when } from '../lib/format.ts';
import { useStaffTitle } from './AuthPages.tsx';
import { call, staffApi } from './api.ts';
import { ActionDialog, ReasonField } from './Dialog.tsx';
import { ForbiddenOr } from './Forbidden.tsx';
import { counted } from './format.ts';
import { StaffTable } from './StaffTable.tsx';

/** The API's limit on a statement, in characters. */
const MAX_CHARS = 2_000_000;

type Layout = '' | 'bank' | 'upi';
type Report = Awaited<ReturnType<typeof reconcile>>;

interface Upload {
  name: string;
  text: string;
}

function reconcile(action: 'preview' | 'apply', upload: Upload, layout: Layout, reason?: string) {
  return call(
    staffApi.POST('/api/v1/staff/deposits/reconcile', {
      body: {
        action,
        file_name: upload.name,
        statement: upload.text,
        ...(layout ? { layout } : {}),
        ...(reason?.trim() ? { reason: reason.trim() } : {}),
      },
    }),
  );
}

const OUTCOME_WORDS: Record<string, string> = {
  approved: 'approved',
  would_approve: 'would approve',
  already_approved: 'approved before',
  amount_mismatch: 'amount differs',
  ambiguous: 'ambiguous',
  rejected_before: 'rejected before',
  duplicate_line: 'duplicate line',
  unmatched: 'no deposit',
};

export default function ReconcilePage() {
  useStaffTitle('Reconciliation');
  const [upload, setUpload] = useState<Upload | null>(null);
  const [fileError, setFileError] = useState<string | undefined>();
  const [layout, setLayout] = useState<Layout>('');
  const [confirming, setConfirming] = useState(false);
  const [reason, setReason] = useState('');
  const preview = useMutation({ mutationFn: (u: Upload) => reconcile('preview', u, layout) });
  const apply = useMutation({
    mutationFn: (u: Upload) => reconcile('apply', u, layout, reason),
    onSuccess: () => setConfirming(false),
  });

  const choose = async (event: ChangeEvent<HTMLInputElement>) => {
    preview.reset();
    apply.reset();
    setUpload(null);
    const file = event.target.files?.[0];
    if (!file) return;
    const text = await file.text();
    if (text.length > MAX_CHARS) {
      setFileError('The file is larger than a statement can be (2 MB of text); split it by dates.');
      return;
    }
    setFileError(undefined);
    setUpload({ name: file.name, text });
  };
  const submit = (event: FormEvent) => {
    event.preventDefault();
    if (!upload) {
      setFileError('Choose the statement file (CSV) first.');
      return;
    }
    apply.reset();
    preview.mutate(upload);
  };
  const shown: Report | undefined = apply.data ?? preview.data;
  const toApprove = preview.data?.summary.would_approve ?? 0;

  return (
    <ForbiddenOr error={preview.error ?? apply.error}>
      <PageHeader title="Reconciliation" />
      <section className="card" aria-labelledby="upload-title">
        <h2 id="upload-title">Bank or UPI statement</h2>
        <p className="muted">
          The CSV export of the bank account or the UPI settlement report. A credit line approves the pending deposit
          whose reference it carries when the amount is exact; nothing changes until you approve after the preview.
        </p>
        <form className="staff-filters" onSubmit={submit} aria-label="Upload a statement">
          <div className={`field${fileError || fieldError(preview.error, 'statement') ? ' has-error' : ''}`}>
            <label htmlFor="statement-file">Statement (CSV)</label>
            <input
              id="statement-file"
              type="file"
              accept=".csv,text/csv,text/plain"
              onChange={choose}
              aria-describedby={fileError ? 'statement-file-error' : undefined}
              aria-invalid={fileError ? true : undefined}
            />
            {fileError || fieldError(preview.error, 'statement') ? (
              <p className="field-error" id="statement-file-error">
                {fileError ?? fieldError(preview.error, 'statement')}
              </p>
            ) : null}
          </div>
          <SelectField
            label="Layout"
            value={layout}
            onChange={(e) => {
              setLayout(e.target.value as Layout);
              preview.reset();
            }}
          >
            <option value="">Detect it</option>
            <option value="bank">Bank statement</option>
            <option value="upi">UPI report</option>
          </SelectField>
          <Button type="submit" variant="secondary" busy={preview.isPending}>
            Preview
          </Button>
          <Button disabled={!upload || toApprove === 0 || apply.isSuccess} onClick={() => setConfirming(true)}>
            Approve {counted(toApprove, 'deposit')}
          </Button>
        </form>
        <ErrorAlert error={preview.error} fields={['statement']} />
        {apply.data ? (
          <Alert kind="success">
            {counted(apply.data.summary.approved, 'deposit')} approved. Each approval and the run are in the audit
            trail; the customers were told.
          </Alert>
        ) : null}
      </section>
      {shown ? <ReconcileReport report={shown} /> : null}
      {confirming && upload ? (
        <ActionDialog
          title={`Approve ${counted(toApprove, 'deposit')}?`}
          submitLabel="Approve"
          busy={apply.isPending}
          error={apply.error}
          fields={['reason']}
          onSubmit={() => apply.mutate(upload)}
          onClose={() => setConfirming(false)}
        >
          <p>
            The deposits the preview of {upload.name} matched are approved: their wallets are credited and the customers
            told. A deposit decided meanwhile is left as it is.
          </p>
          <ReasonField
            label="Reason (optional; kept in the audit log)"
            value={reason}
            onChange={setReason}
            error={apply.error}
          />
        </ActionDialog>
      ) : null}
    </ForbiddenOr>
  );
}

function ReconcileReport({ report }: { report: Report }) {
  const counts = Object.entries(report.summary).filter(([, n]) => n > 0);
  return (
    <section className="card staff-result" aria-labelledby="report-title">
      <h2 id="report-title">{report.dry_run ? 'Preview' : 'Applied'}</h2>
      <p>
        {report.file}, {report.layout} layout,{' '}
        {report.period ? `${report.period.from} to ${report.period.to}` : 'no dated lines'}:{' '}
        {counts.map(([k, n]) => `${n} ${OUTCOME_WORDS[k] ?? k.replace(/_/g, ' ')}`).join(', ') || 'nothing to do'}.
      </p>
      {report.lines.length > 0 ? (
        <StaffTable
          caption="Credit lines"
          shownCaption
          columns={['Line', 'Date', 'Reference', { label: 'Amount', num: true }, 'Outcome', 'Detail']}
        >
          {report.lines.map((l) => (
            <tr key={l.line}>
              <td data-label="Line">{l.line}</td>
              <td data-label="Date">{l.date}</td>
              <td data-label="Reference" className="mono staff-wrap">
                {l.reference || '—'}
              </td>
              <td data-label="Amount" className="num">
                {rupees(l.amount)}
              </td>
              <td data-label="Outcome">
                <strong>{OUTCOME_WORDS[l.outcome] ?? l.outcome}</strong>
                {l.deposit ? <div className="mono muted">{l.deposit}</div> : null}
              </td>
              <td data-label="Detail" className="staff-wrap">
                {l.detail}
              </td>
            </tr>
          ))}
        </StaffTable>
      ) : null}
      {report.invalid_lines.length > 0 ? (
        <StaffTable caption="Lines not read" shownCaption columns={['Line', 'Problem', 'As written']}>
          {report.invalid_lines.map((l) => (
            <tr key={l.line}>
              <td data-label="Line">{l.line}</td>
              <td data-label="Problem" className="staff-wrap">
                {l.problem}
              </td>
              <td data-label="As written" className="mono staff-wrap">
                {l.raw}
              </td>
            </tr>
          ))}
        </StaffTable>
      ) : null}
      {report.period ? (
        report.unmatched_deposits.length === 0 ? (
          <p className="muted">Every pending deposit of these days is on the statement.</p>
        ) : (
          <StaffTable
            caption="Pending deposits of these days that no line names"
            shownCaption
            columns={['Deposit', 'Reference', { label: 'Amount', num: true }, 'Reported']}
          >
            {report.unmatched_deposits.map((d) => (
              <tr key={d.id}>
                <td data-label="Deposit" className="mono">
                  {d.public_id}
                </td>
                <td data-label="Reference" className="mono staff-wrap">
                  {d.txn_ref}
                </td>
                <td data-label="Amount" className="num">
                  {rupees(d.amount)}
                </td>
                <td data-label="Reported">{when(d.created_at)}</td>
              </tr>
            ))}
          </StaffTable>
        )
      ) : null}
    </section>
  );
}

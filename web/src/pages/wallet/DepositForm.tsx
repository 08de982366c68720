// Add funds: pay by UPI (step 1), then report the payment (step 2: amount, UTR, proof) for staff
// approval. Everything the server would refuse for its form (amount, reference, file type and
// size) is checked here first so a 5 MiB upload is not sent only to be refused; what the server
// still refuses is shown next to the field it names. The upload shows its progress and can be
// cancelled.

import { useMutation, useQueryClient } from '@tanstack/react-query';
import { type FormEvent, useEffect, useRef, useState } from 'react';
import { Link } from 'react-router';
import { Alert, Button, ErrorAlert, TextField } from '../../components/ui.tsx';
import { ApiError, uploadWithProgress } from '../../lib/api.ts';
import { bytes, rupees } from '../../lib/format.ts';
import type { Deposit } from './Deposits.tsx';
import {
  amountProblem,
  MAX_PROOF_BYTES,
  normaliseAmount,
  PROOF_TYPES,
  proofProblem,
  sniffProof,
  txnRefProblem,
  type UpiDetails,
} from './money.ts';
import { UpiPayment } from './UpiPayment.tsx';

const NOT_A_PROOF = 'This file is not really a PNG, JPEG, WebP or PDF (its content says otherwise). Export it again.';

type FieldName = 'amount' | 'txn_ref' | 'screenshot';
const FIELDS: FieldName[] = ['amount', 'txn_ref', 'screenshot'];

interface Submitted {
  success: true;
  message: string;
  deposit: Deposit;
}

/** "in 42 seconds" / "in 12 minutes" / "in 3 hours", from a Retry-After in seconds. */
export function waitText(seconds: number | null): string {
  if (!seconds) return 'later';
  if (seconds < 90) return `in ${seconds} seconds`;
  if (seconds < 5400) return `in ${Math.ceil(seconds / 60)} minutes`;
  return `in ${Math.ceil(seconds / 3600)} hours`;
}

export function DepositForm({
  initialAmount,
  returnTo,
  upi,
  note,
  pending,
}: {
  initialAmount: string | null;
  returnTo: { to: string; label: string } | null;
  upi: UpiDetails | null;
  note: string;
  pending: Deposit[];
}) {
  const client = useQueryClient();
  const [amount, setAmount] = useState(initialAmount ?? '');
  const [txnRef, setTxnRef] = useState('');
  const [file, setFile] = useState<File | null>(null);
  const [fileKey, setFileKey] = useState(0);
  const [preview, setPreview] = useState<string | null>(null);
  const [local, setLocal] = useState<Partial<Record<FieldName, string>>>({});
  // Fields edited since the server's answer: its message for them no longer applies.
  const [edited, setEdited] = useState<Set<FieldName>>(new Set());
  const [progress, setProgress] = useState(0);
  const abort = useRef<AbortController | null>(null);
  const form = useRef<HTMLFormElement>(null);
  const doneHeading = useRef<HTMLHeadingElement>(null);

  // Leaving the page stops an upload in flight.
  useEffect(() => () => abort.current?.abort(), []);

  // A new ?amount= (the order page's "top up ₹N") replaces the amount.
  useEffect(() => {
    if (initialAmount) setAmount(initialAmount);
  }, [initialAmount]);

  // The file's content is checked (as the server will) and an image is previewed; the object
  // URL is revoked when the file changes or the form goes.
  const [contentOk, setContentOk] = useState<boolean | null>(null);
  useEffect(() => {
    setPreview(null);
    setContentOk(null);
    if (!file || proofProblem(file)) return;
    let live = true;
    let url: string | null = null;
    sniffProof(file)
      .then((kind) => {
        if (!live) return;
        setContentOk(kind !== null);
        if (kind === null) {
          setLocal((rest) => ({ ...rest, screenshot: NOT_A_PROOF }));
        } else if (kind !== 'PDF') {
          url = URL.createObjectURL(file);
          setPreview(url);
        }
      })
      .catch(() => {
        if (live) setContentOk(null);
      });
    return () => {
      live = false;
      if (url) URL.revokeObjectURL(url);
    };
  }, [file]);

  const submit = useMutation({
    mutationFn: async () => {
      const body = new FormData();
      body.set('amount', (normaliseAmount(amount) ?? amount).trim());
      body.set('txn_ref', txnRef.trim());
      if (file) body.set('screenshot', file, file.name);
      const controller = new AbortController();
      abort.current = controller;
      setProgress(0);
      try {
        return await uploadWithProgress<Submitted>(
          '/api/v1/client/wallet/deposit/',
          body,
          setProgress,
          controller.signal,
        );
      } finally {
        abort.current = null;
      }
    },
    onSuccess: () => {
      client.invalidateQueries({ queryKey: ['wallet-deposits'] });
    },
  });

  const error = submit.error;
  const apiError = error instanceof ApiError ? error : null;

  function message(name: FieldName): string | undefined {
    if (local[name]) return local[name];
    if (!apiError || edited.has(name)) return undefined;
    if (name === 'screenshot' && (apiError.status === 413 || apiError.status === 415)) return apiError.message;
    const reason = apiError.field(name);
    if (!reason) return undefined;
    const what = name === 'amount' ? 'The amount' : name === 'txn_ref' ? 'The reference' : 'The file';
    return `${what} ${reason}.`.replace(/\.\.$/, '.');
  }

  // After a refused submission, the first field with a message gets the focus.
  useEffect(() => {
    if (submit.isError || Object.keys(local).length > 0) {
      form.current?.querySelector<HTMLElement>('[aria-invalid="true"]')?.focus();
    }
  }, [submit.isError, local]);

  useEffect(() => {
    if (submit.isSuccess) doneHeading.current?.focus();
  }, [submit.isSuccess]);

  function touch(name: FieldName) {
    setLocal(({ [name]: _gone, ...rest }) => rest);
    setEdited((set) => new Set(set).add(name));
  }

  function onSubmit(event: FormEvent) {
    event.preventDefault();
    if (submit.isPending) return;
    const problems: Partial<Record<FieldName, string>> = {};
    const a = amountProblem(amount);
    if (a) problems.amount = a;
    const t = txnRefProblem(txnRef);
    if (t) problems.txn_ref = t;
    const s = proofProblem(file) ?? (contentOk === false ? NOT_A_PROOF : null);
    if (s) problems.screenshot = s;
    setLocal(problems);
    if (Object.keys(problems).length > 0) return;
    setEdited(new Set());
    submit.mutate();
  }

  function reset() {
    submit.reset();
    setAmount('');
    setTxnRef('');
    setFile(null);
    setFileKey((k) => k + 1);
    setLocal({});
    setEdited(new Set());
  }

  if (submit.isSuccess) {
    const deposit = submit.data.deposit;
    return (
      <div className="deposit-done">
        <h3 ref={doneHeading} tabIndex={-1}>
          Deposit reported
        </h3>
        <Alert kind="success">
          <p>
            {submit.data.message} We will add {rupees(deposit.amount)} to your wallet once staff have checked reference{' '}
            <span className="mono">{deposit.txn_ref}</span>. You will get an email and a notification; the list of
            deposits on this page updates by itself.
          </p>
        </Alert>
        {returnTo ? (
          <p className="muted">
            The money can be spent once the deposit is approved and shows in your balance; this page and the deposit
            list update by themselves.
          </p>
        ) : null}
        <div className="row">
          {returnTo ? (
            <Link className="btn btn-primary" to={returnTo.to}>
              {returnTo.label}
            </Link>
          ) : null}
          <Button variant="secondary" onClick={reset}>
            Report another payment
          </Button>
        </div>
      </div>
    );
  }

  const normalised = normaliseAmount(amount);
  const sizeText = file
    ? contentOk === false || !(file.type in PROOF_TYPES)
      ? bytes(file.size)
      : `${PROOF_TYPES[file.type]}, ${bytes(file.size)}`
    : null;
  const uploading = submit.isPending;

  return (
    <div className="deposit">
      <ol className="steps">
        <li>
          <h3>Pay{normalised ? ` ${rupees(normalised)}` : ''} by UPI</h3>
          <UpiPayment upi={upi} amount={normalised} note={note} />
        </li>
        <li>
          <h3>Report the payment</h3>
          {pending.length > 0 ? (
            <Alert kind="warning">
              <p>
                {pending.length <= 2
                  ? `You already have ${pending.length === 1 ? 'a deposit' : '2 deposits'} waiting for approval (${pending.map((d) => `${rupees(d.amount)}, reference ${d.txn_ref}`).join('; ')}).`
                  : `You already have ${pending.length} deposits waiting for approval (${rupees(pending.reduce((sum, d) => sum + Number(d.amount), 0))} in all; see Your deposits).`}{' '}
                Report a payment again only if it is a different payment with its own reference.
              </p>
            </Alert>
          ) : null}
          <form ref={form} onSubmit={onSubmit} noValidate aria-describedby="deposit-help">
            <p className="hint" id="deposit-help">
              Staff approve deposits by hand, usually within a few hours. The reference must be the one from this
              payment; a reference that was already reported is refused.
            </p>
            <TextField
              label="Amount paid (₹)"
              name="amount"
              inputMode="decimal"
              autoComplete="off"
              value={amount}
              onChange={(e) => {
                setAmount(e.target.value);
                touch('amount');
              }}
              error={message('amount')}
              hint="Rupees, as paid: for example 500 or 499.50. At most ₹1,00,000.00 in one deposit."
              disabled={uploading}
            />
            <TextField
              label="UTR / transaction reference"
              name="txn_ref"
              autoComplete="off"
              autoCapitalize="characters"
              spellCheck={false}
              maxLength={64}
              value={txnRef}
              onChange={(e) => {
                setTxnRef(e.target.value);
                touch('txn_ref');
              }}
              error={message('txn_ref')}
              hint="The 12-digit UPI reference (UTR) shown in your payment app, or the IMPS/NEFT/RTGS reference from your bank."
              disabled={uploading}
            />
            <TextField
              key={fileKey}
              label="Payment screenshot or receipt"
              name="screenshot"
              type="file"
              accept="image/png,image/jpeg,image/webp,application/pdf"
              onChange={(e) => {
                const chosen = e.target.files?.[0] ?? null;
                setFile(chosen);
                setEdited((set) => new Set(set).add('screenshot'));
                setLocal(({ screenshot: _gone, ...rest }) => {
                  const problem = proofProblem(chosen);
                  return chosen && problem ? { ...rest, screenshot: problem } : rest;
                });
              }}
              error={message('screenshot')}
              hint={`PNG, JPEG, WebP or PDF, at most ${MAX_PROOF_BYTES / 1024 / 1024} MiB. It should show the amount, the date and the reference.`}
              disabled={uploading}
            />
            {file ? (
              <div className="proof">
                {preview ? (
                  <img src={preview} alt={`Preview of ${file.name}`} onError={() => setPreview(null)} />
                ) : null}
                <p className="muted">
                  <span className="proof-name">{file.name}</span> ({sizeText})
                </p>
              </div>
            ) : null}

            {uploading ? (
              <div className="upload-progress" role="status">
                <label htmlFor="deposit-progress">
                  {progress < 1 ? `Uploading… ${Math.round(progress * 100)}%` : 'Uploaded; checking the file…'}
                </label>
                <progress id="deposit-progress" className="progress" max={1} value={progress} />
              </div>
            ) : null}

            <RefusalAlert error={error} fileChanged={edited.has('screenshot')} />

            <div className="row">
              <Button type="submit" busy={uploading}>
                {uploading ? 'Submitting…' : 'Submit deposit for approval'}
              </Button>
              {uploading ? (
                <Button variant="secondary" onClick={() => abort.current?.abort()}>
                  Cancel upload
                </Button>
              ) : null}
            </div>
          </form>
        </li>
      </ol>
    </div>
  );
}

/** The form-level part of a refusal: rate limits and storage said plainly, the rest as sent. */
function RefusalAlert({ error, fileChanged }: { error: unknown; fileChanged: boolean }) {
  if (!(error instanceof ApiError)) return error ? <ErrorAlert error={error} /> : null;
  if (error.status === 429) {
    return (
      <Alert kind="error">
        <p>
          <strong>Too many deposit reports for now.</strong> {error.message} An account can report 5 deposits an hour
          and 20 a day, with at most 2 uploads at a time. Try again {waitText(error.retryAfter)}. Your payment is not
          lost: keep its reference.
        </p>
      </Alert>
    );
  }
  if (error.status === 507) {
    return (
      <Alert kind="error">
        <p>
          <strong>The server cannot store uploads right now</strong> (it is short of disk space). Nothing was submitted
          and your payment is not lost: try again later, or contact support with the reference.
        </p>
      </Alert>
    );
  }
  if (error.code === 'aborted') {
    return (
      <Alert kind="info">
        <p>The upload was cancelled; nothing was submitted.</p>
      </Alert>
    );
  }
  // 413/415 name the file; the message is shown beside the file field.
  if (error.status === 413 || error.status === 415) {
    if (fileChanged) return null;
    return (
      <Alert kind="error">
        <p>The file was refused; see the message beside it. Nothing was submitted.</p>
      </Alert>
    );
  }
  return <ErrorAlert error={error} fields={FIELDS} />;
}

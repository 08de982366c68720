// The deposit work queue: pending manual deposits, oldest first, with their age, the customer,
// the claimed amount and UTR, and the uploaded proof beside them. Billing decides with one key —
// `a` approves, `r` rejects (the reason field takes the focus; Enter sends) — and `j`/`k` move
// between deposits; after a decision the next deposit is selected. Support reads it only.

import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { type FormEvent, useEffect, useRef, useState } from 'react';
import { Alert, Button, Empty, ErrorAlert, fieldError, Loading, PageHeader, TextField } from '../components/ui.tsx';
import { relative, rupees, when } from '../lib/format.ts';
import { useStaffTitle } from './AuthPages.tsx';
import { call, staffApi } from './api.ts';
import { ForbiddenOr } from './Forbidden.tsx';
import { age } from './format.ts';
import { mayUse, useMe } from './session.tsx';

const QUEUE_KEY = ['staff', 'deposits', 'pending'] as const;

function typing(target: EventTarget | null): boolean {
  const el = target as HTMLElement | null;
  return (
    !!el && (el.tagName === 'INPUT' || el.tagName === 'TEXTAREA' || el.tagName === 'SELECT' || el.isContentEditable)
  );
}

export default function DepositsPage() {
  useStaffTitle('Deposits');
  const me = useMe();
  const canDecide = mayUse(me.data?.staff.role, 'billing');
  const client = useQueryClient();
  const queue = useQuery({
    queryKey: QUEUE_KEY,
    // Oldest first (the server's order): the one waiting longest is decided first.
    queryFn: async () =>
      (
        await call(
          staffApi.GET('/api/v1/staff/deposits', {
            params: { query: { status: 'pending', sort: 'oldest', limit: 200 } },
          }),
        )
      ).deposits,
    refetchInterval: 30_000,
  });
  const deposits = queue.data ?? [];
  const [selectedId, setSelectedId] = useState<number | null>(null);
  const [reason, setReason] = useState('');
  const [done, setDone] = useState<string | null>(null);
  const reasonField = useRef<HTMLInputElement>(null);
  const index = Math.max(
    0,
    deposits.findIndex((d) => d.id === selectedId),
  );
  const selected = deposits[index];

  const decide = useMutation({
    mutationFn: (v: { action: 'approve' | 'reject'; id: number; reason?: string }) =>
      call(staffApi.POST('/api/v1/staff/deposits', { body: v })),
    onSuccess: async (data, v) => {
      const at = deposits.findIndex((d) => d.id === v.id);
      const next = deposits[at + 1] ?? deposits[at - 1];
      setSelectedId(next?.id ?? null);
      setReason('');
      setDone(
        `${v.action === 'approve' ? 'Approved' : 'Rejected'} ${data.deposit.public_id}: ${rupees(data.deposit.amount)} for ${data.deposit.account.email}.`,
      );
      await client.invalidateQueries({ queryKey: QUEUE_KEY });
    },
  });

  const approve = () => {
    if (selected && canDecide && !decide.isPending) decide.mutate({ action: 'approve', id: selected.id });
  };
  const reject = (event?: FormEvent) => {
    event?.preventDefault();
    if (!selected || !canDecide || decide.isPending) return;
    decide.mutate({ action: 'reject', id: selected.id, reason });
  };

  useEffect(() => {
    const onKey = (event: KeyboardEvent) => {
      if (event.ctrlKey || event.metaKey || event.altKey) return;
      if (typing(event.target)) {
        if (event.key === 'Escape') (event.target as HTMLElement).blur();
        return;
      }
      const move = (by: number) => {
        const next = deposits[Math.min(deposits.length - 1, Math.max(0, index + by))];
        if (next) {
          setSelectedId(next.id);
          document.getElementById(`deposit-${next.id}`)?.focus();
        }
      };
      if (event.key === 'j') move(1);
      else if (event.key === 'k') move(-1);
      else if (event.key === 'a' && canDecide) approve();
      else if (event.key === 'r' && canDecide && selected) reasonField.current?.focus();
      else return;
      event.preventDefault();
    };
    window.addEventListener('keydown', onKey);
    return () => window.removeEventListener('keydown', onKey);
  });

  return (
    <ForbiddenOr error={queue.error}>
      <PageHeader title="Deposits" />
      <KeyLegend canDecide={canDecide} />
      {done ? <Alert kind="success">{done}</Alert> : null}
      {!canDecide ? <Alert>Your role reads the queue; billing staff approve and reject.</Alert> : null}
      {queue.isPending ? (
        <Loading what="Loading the queue" />
      ) : queue.isError ? (
        <ErrorAlert error={queue.error} />
      ) : deposits.length === 0 ? (
        <Empty title="No pending deposits">Every reported payment has been decided.</Empty>
      ) : (
        <div className="staff-queue">
          <ol className="staff-queue-list" aria-label="Pending deposits, oldest first">
            {deposits.map((d) => (
              <li key={d.id}>
                <button
                  type="button"
                  id={`deposit-${d.id}`}
                  className={`staff-queue-item${d.id === selected?.id ? ' selected' : ''}`}
                  aria-current={d.id === selected?.id ? 'true' : undefined}
                  onClick={() => setSelectedId(d.id)}
                >
                  <span className="staff-amount">{rupees(d.amount)}</span>
                  <span className="staff-email">{d.account.email}</span>
                  <span className="muted">
                    waiting {age(d.created_at)} · UTR {d.txn_ref ?? '—'}
                  </span>
                </button>
              </li>
            ))}
          </ol>
          {selected ? (
            <section className="card staff-deposit" aria-labelledby="deposit-title">
              <h2 id="deposit-title">
                {rupees(selected.amount)} from {selected.account.email}
              </h2>
              <dl className="staff-facts">
                <dt>Deposit</dt>
                <dd className="mono">{selected.public_id}</dd>
                <dt>Customer</dt>
                <dd>
                  {selected.account.email} <span className="muted">(account {selected.account.id})</span>
                </dd>
                <dt>Claimed amount</dt>
                <dd>{rupees(selected.amount)}</dd>
                <dt>UTR</dt>
                <dd className="mono">{selected.txn_ref ?? '—'}</dd>
                <dt>Reported</dt>
                <dd>
                  {when(selected.created_at)} ({relative(selected.created_at)})
                </dd>
                <dt>Method</dt>
                <dd>{selected.method}</dd>
              </dl>
              <Proof id={selected.id} method={selected.method} />
              {canDecide ? (
                <div className="staff-decide">
                  <ErrorAlert error={decide.error} fields={['reason']} />
                  <Button onClick={approve} busy={decide.isPending && decide.variables?.action === 'approve'}>
                    Approve <kbd>a</kbd>
                  </Button>
                  <form onSubmit={reject} className="staff-reject">
                    <TextField
                      ref={reasonField}
                      label="Reason to reject (the customer reads it)"
                      value={reason}
                      maxLength={500}
                      onChange={(e) => setReason(e.target.value)}
                      error={fieldError(decide.error, 'reason')}
                    />
                    <Button
                      type="submit"
                      variant="danger"
                      busy={decide.isPending && decide.variables?.action === 'reject'}
                    >
                      Reject <kbd>r</kbd>
                    </Button>
                  </form>
                </div>
              ) : null}
            </section>
          ) : null}
        </div>
      )}
    </ForbiddenOr>
  );
}

function Proof({ id, method }: { id: number; method: string }) {
  const [failed, setFailed] = useState(false);
  // biome-ignore lint/correctness/useExhaustiveDependencies: a new deposit, a new try
  useEffect(() => setFailed(false), [id]);
  if (method !== 'manual') return <p className="muted">Paid online: no proof file.</p>;
  return (
    <figure className="staff-proof">
      {failed ? (
        <p className="muted">The proof file could not be loaded.</p>
      ) : (
        <a href={`/api/v1/staff/deposit-proof?id=${id}`} target="_blank" rel="noreferrer">
          <img
            src={`/api/v1/staff/deposit-proof?id=${id}`}
            alt={`Payment proof uploaded with deposit ${id}`}
            onError={() => setFailed(true)}
          />
        </a>
      )}
      <figcaption className="muted">The customer's uploaded proof (opens full size).</figcaption>
    </figure>
  );
}

function KeyLegend({ canDecide }: { canDecide: boolean }) {
  return (
    <ul className="staff-keys" aria-label="Keys">
      <li>
        <kbd>j</kbd> next
      </li>
      <li>
        <kbd>k</kbd> previous
      </li>
      {canDecide ? (
        <>
          <li>
            <kbd>a</kbd> approve
          </li>
          <li>
            <kbd>r</kbd> reject (type the reason, Enter)
          </li>
        </>
      ) : null}
    </ul>
  );
}

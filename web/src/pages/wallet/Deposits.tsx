// The account's deposits and their review: pending (checked again every 20 s while any is
// pending), approved (added to the balance) or rejected (with the staff's reason). Online
// payments (method razorpay) say "Paid online" and carry the gateway's payment id instead of a
// reference and a proof; one still pending was not completed. One deposit can be opened on its
// own with /wallet?deposit=ID (GET …/wallet/deposit/?id=).

import type { paths } from '@hostplane/sdk/schema';
import { useQuery } from '@tanstack/react-query';
import { useEffect, useRef } from 'react';
import { Alert, Button, Empty, ErrorAlert, Loading, Status } from '../../components/ui.tsx';
import { api, unwrap } from '../../lib/api.ts';
import { bytes, rupees, when } from '../../lib/format.ts';
import { gatewayWords } from './money.ts';

type DepositsAnswer = paths['/api/v1/client/wallet/deposit/']['get']['responses'][200]['content']['application/json'];
export type Deposit = Extract<DepositsAnswer, { deposit: unknown }>['deposit'];
type DepositList = Extract<DepositsAnswer, { deposits: unknown }>;

export const PENDING_REFRESH_MS = 20_000;
/** An online payment still pending after this long was abandoned: it is not polled for. */
const ONLINE_PENDING_MS = 30 * 60_000;

/** Whether a deposit may still change by itself (worth checking again). */
function mayChange(d: Deposit): boolean {
  if (d.status !== 'pending') return false;
  if (d.method !== 'razorpay') return true;
  return Date.now() - new Date(d.created_at).getTime() < ONLINE_PENDING_MS;
}
export const DEPOSITS_PER_PAGE = 10;

export function useDeposits(page: number) {
  return useQuery({
    queryKey: ['wallet-deposits', page],
    queryFn: async () =>
      (await unwrap(
        api.GET('/api/v1/client/wallet/deposit/', { params: { query: { page, per_page: DEPOSITS_PER_PAGE } } }),
      )) as DepositList,
    refetchInterval: (query) => (query.state.data?.deposits.some(mayChange) ? PENDING_REFRESH_MS : false),
    placeholderData: (previous) => previous,
  });
}

export function useDeposit(id: number | null) {
  return useQuery({
    queryKey: ['wallet-deposits', 'one', id],
    enabled: id !== null,
    queryFn: async () => {
      const answer = await unwrap(api.GET('/api/v1/client/wallet/deposit/', { params: { query: { id: id ?? 0 } } }));
      if (typeof answer !== 'object' || !('deposit' in answer))
        throw new Error('The server answered with a list instead of the deposit.');
      return answer.deposit;
    },
    refetchInterval: (query) => (query.state.data && mayChange(query.state.data) ? PENDING_REFRESH_MS : false),
  });
}

const PROOF_NAMES: Record<string, string> = { png: 'PNG', jpeg: 'JPEG', webp: 'WebP', pdf: 'PDF' };

export function DepositItem({ deposit }: { deposit: Deposit }) {
  if (deposit.method === 'razorpay') return <OnlineDepositItem deposit={deposit} />;
  return (
    <article className="deposit-item" aria-label={`Deposit of ${rupees(deposit.amount)}, ${deposit.status}`}>
      <div className="deposit-head">
        <strong className="deposit-amount">{rupees(deposit.amount)}</strong>
        <Status value={deposit.status} />
      </div>
      <p className="deposit-meta">
        Reference <span className="mono">{deposit.txn_ref}</span>
        <span className="sep" aria-hidden="true">
          ·
        </span>
        <span>Reported {when(deposit.created_at)}</span>
      </p>
      {deposit.status === 'pending' ? (
        <p className="muted">Waiting for staff to check the payment. This updates by itself.</p>
      ) : null}
      {deposit.status === 'approved' ? (
        <p className="deposit-outcome good">
          Approved {when(deposit.reviewed_at)}; {rupees(deposit.amount)} was added to your balance.
        </p>
      ) : null}
      {deposit.status === 'rejected' ? (
        <div className="deposit-outcome bad">
          <p>
            Not approved {when(deposit.reviewed_at)}.{' '}
            {deposit.reason ? (
              <>
                Reason: <q>{deposit.reason}</q>
              </>
            ) : (
              'No reason was given.'
            )}
          </p>
          <p className="muted">If you think this is a mistake, reply to the email about it or contact support.</p>
        </div>
      ) : null}
      <p className="deposit-proof">
        {deposit.screenshot ? (
          <a href={deposit.screenshot.url} download>
            Download proof ({PROOF_NAMES[deposit.screenshot.type] ?? deposit.screenshot.type},{' '}
            {bytes(deposit.screenshot.bytes)})
            <span className="sr-only">
              {' '}
              of the {rupees(deposit.amount)} deposit, reference {deposit.txn_ref}
            </span>
          </a>
        ) : (
          <span className="muted">No proof attached</span>
        )}
        <span className="muted mono deposit-id">{deposit.public_id}</span>
      </p>
    </article>
  );
}

/** A deposit paid (or started) online: no reference or proof; the gateway's payment id instead. */
function OnlineDepositItem({ deposit }: { deposit: Deposit }) {
  const status = deposit.status === 'pending' ? 'not paid' : deposit.status === 'approved' ? 'paid' : 'failed';
  return (
    <article className="deposit-item" aria-label={`Deposit of ${rupees(deposit.amount)}, ${deposit.status}`}>
      <div className="deposit-head">
        <strong className="deposit-amount">{rupees(deposit.amount)}</strong>
        <span
          className={`status status-${deposit.status === 'approved' ? 'good' : deposit.status === 'pending' ? 'off' : 'bad'}`}
        >
          {status}
        </span>
      </div>
      <p className="deposit-meta">
        <span className="deposit-online">{deposit.status === 'approved' ? 'Paid online' : 'Online payment'}</span>
        <span className="sep" aria-hidden="true">
          ·
        </span>
        <span>Started {when(deposit.created_at)}</span>
      </p>
      {deposit.status === 'approved' ? (
        <p className="deposit-outcome good">
          Paid {when(deposit.reviewed_at)}; {rupees(deposit.amount)} was added to your balance.
        </p>
      ) : null}
      {deposit.status === 'pending' ? (
        <p className="muted">
          The payment was not completed. If you closed the payment page, nothing was taken; if you have just paid, this
          updates by itself.
        </p>
      ) : null}
      {deposit.status === 'rejected' ? (
        <div className="deposit-outcome bad">
          <p>
            The payment failed.{' '}
            {gatewayWords(deposit.reason) ? <>Razorpay said: “{gatewayWords(deposit.reason)}.” </> : null}
            Nothing was added to your wallet.
          </p>
        </div>
      ) : null}
      <p className="deposit-proof">
        {deposit.gateway_payment_id ? (
          <span className="muted">
            Payment <span className="mono">{deposit.gateway_payment_id}</span>
          </span>
        ) : (
          <span />
        )}
        <span className="muted mono deposit-id">{deposit.public_id}</span>
      </p>
    </article>
  );
}

export function DepositList({
  query,
  page,
  onPage,
}: {
  query: ReturnType<typeof useDeposits>;
  page: number;
  onPage: (page: number) => void;
}) {
  if (query.isPending) return <Loading what="Loading your deposits" />;
  if (query.isError) return <ErrorAlert error={query.error} />;
  const { deposits, pagination } = query.data;
  if (deposits.length === 0) {
    return (
      <Empty title="No deposits yet">
        <p>Pay online, or pay by UPI or bank transfer and report the payment with the form on this page.</p>
      </Empty>
    );
  }
  const pending = deposits.some(mayChange);
  return (
    <>
      {pending ? (
        <p className="muted refresh-note">
          {query.isFetching ? 'Checking for updates…' : 'Pending deposits are checked every 20 seconds.'}
        </p>
      ) : null}
      <ul className="list deposits">
        {deposits.map((d) => (
          <li key={d.id}>
            <DepositItem deposit={d} />
          </li>
        ))}
      </ul>
      {pagination.pages > 1 ? (
        <nav className="pager" aria-label="Deposit pages">
          <Button variant="secondary" disabled={page <= 1} onClick={() => onPage(page - 1)}>
            Newer
          </Button>
          <span>
            Page {pagination.page} of {pagination.pages}
          </span>
          <Button variant="secondary" disabled={page >= pagination.pages} onClick={() => onPage(page + 1)}>
            Older
          </Button>
        </nav>
      ) : null}
    </>
  );
}

/** /wallet?deposit=ID: that one deposit, above everything else. */
export function OneDeposit({ id, onClose }: { id: number; onClose: () => void }) {
  const query = useDeposit(id);
  const heading = useRef<HTMLHeadingElement>(null);
  // Opened from a link further down the page (the ledger): bring it into view.
  // biome-ignore lint/correctness/useExhaustiveDependencies: runs when another deposit is opened
  useEffect(() => {
    heading.current?.focus();
  }, [id]);
  return (
    <section className="card one-deposit" aria-labelledby="one-deposit-title">
      <div className="card-head">
        <h2 id="one-deposit-title" ref={heading} tabIndex={-1}>
          Deposit #{id}
        </h2>
        <Button variant="ghost" onClick={onClose}>
          Close
        </Button>
      </div>
      {query.isPending ? <Loading what="Loading the deposit" /> : null}
      {query.isError ? (
        <Alert kind="error">
          <p>
            {query.error instanceof Error && 'status' in query.error && query.error.status === 404
              ? 'There is no deposit with this number on your account.'
              : query.error.message}
          </p>
        </Alert>
      ) : null}
      {query.data ? <DepositItem deposit={query.data} /> : null}
    </section>
  );
}

// Wallet (spec 4.6): the balance and what it has to cover, adding funds (online through the
// payment gateway when one is configured; or pay by UPI, then report the payment with its
// reference and proof for staff approval), the deposits and their review, and the ledger.
// Coming back from the gateway (RazorpayReturnPage), the router's state says what happened. The URL carries what another page asks for: ?amount=N (the order page's
// "top up ₹N"), ?return=/order/… (a link back after reporting), ?deposit=ID (one deposit), and
// the ledger's ?page= and ?per_page=.

import { useQuery, useQueryClient } from '@tanstack/react-query';
import { useEffect, useRef, useState } from 'react';
import { Link, useLocation, useNavigate, useSearchParams } from 'react-router';
import { useTitle } from '../../components/Layout.tsx';
import { Alert, ErrorAlert, Loading, PageHeader } from '../../components/ui.tsx';
import { ApiError, api, unwrap } from '../../lib/api.ts';
import { day, rupees } from '../../lib/format.ts';
import { ACCOUNT_KEY, useAccount } from '../../lib/session.tsx';
import { DepositForm } from './DepositForm.tsx';
import { DepositList, OneDeposit, useDeposits } from './Deposits.tsx';
import {
  Ledger,
  LedgerFilterForm,
  type LedgerFilters,
  ledgerQuery,
  PER_PAGE_CHOICES,
  type WalletAnswer,
} from './Ledger.tsx';
import { normaliseAmount, safeReturn, upiDetailsOf } from './money.ts';
import { OnlinePayment } from './OnlinePayment.tsx';
import type { OnlineOutcome } from './RazorpayReturnPage.tsx';
import './wallet.css';

function positiveInt(raw: string | null, fallback: number, max = 100_000): number {
  const n = Number(raw);
  return Number.isInteger(n) && n >= 1 && n <= max ? n : fallback;
}

export default function WalletPage() {
  useTitle('Wallet');
  const account = useAccount();
  const client = useQueryClient();
  const [search, setSearch] = useSearchParams();
  const page = positiveInt(search.get('page'), 1);
  const perPageRaw = positiveInt(search.get('per_page'), 20, 100);
  const perPage = PER_PAGE_CHOICES.includes(perPageRaw) ? perPageRaw : 20;
  const depositPage = positiveInt(search.get('deposits_page'), 1);
  const initialAmount = normaliseAmount(search.get('amount'));
  const returnTo = safeReturn(search.get('return'));
  const oneDeposit = search.get('deposit') ? positiveInt(search.get('deposit'), 0) || null : null;
  const [topUp, setTopUp] = useState<string | null>(null);
  const location = useLocation();
  const navigate = useNavigate();
  // What the way back from the payment page said; taken out of the history entry once read, so a
  // reload does not say it again.
  const [online] = useState<OnlineOutcome | null>(
    () => (location.state as { online?: OnlineOutcome } | null)?.online ?? null,
  );
  const onlineHeading = useRef<HTMLHeadingElement>(null);
  // biome-ignore lint/correctness/useExhaustiveDependencies: once, when the page opens
  useEffect(() => {
    if (!online) return;
    navigate(`${location.pathname}${location.search}`, { replace: true, state: null });
    onlineHeading.current?.focus();
  }, []);

  const filters: LedgerFilters = {
    kind: search.get('kind') ?? '',
    from: search.get('from') ?? '',
    to: search.get('to') ?? '',
  };
  const filterQuery = ledgerQuery(filters);
  const wallet = useQuery({
    queryKey: ['wallet', page, perPage, filterQuery],
    queryFn: () =>
      unwrap(api.GET('/api/v1/client/wallet/', { params: { query: { page, per_page: perPage, ...filterQuery } } })),
    placeholderData: (previous) => previous,
  });
  const deposits = useDeposits(depositPage);

  function setParam(name: string, value: string | null) {
    setSearch(
      (prev) => {
        const next = new URLSearchParams(prev);
        if (value === null) next.delete(name);
        else next.set(name, value);
        return next;
      },
      { replace: true },
    );
  }

  // A deposit that leaves "pending" changes the balance: reload it (and the header's account),
  // and say what happened.
  const seen = useRef(new Map<number, string>());
  const [news, setNews] = useState<{ kind: 'success' | 'warning'; text: string }[]>([]);
  useEffect(() => {
    const list = deposits.data?.deposits;
    if (!list) return;
    const changed: { kind: 'success' | 'warning'; text: string }[] = [];
    for (const d of list) {
      const before = seen.current.get(d.id);
      if (before === 'pending' && d.status !== 'pending') {
        const paidOnline = d.method === 'razorpay';
        changed.push(
          d.status === 'approved'
            ? {
                kind: 'success',
                text: paidOnline
                  ? `Your online payment of ${rupees(d.amount)} was confirmed and added to your balance.`
                  : `Your deposit of ${rupees(d.amount)} was approved and added to your balance.`,
              }
            : {
                kind: 'warning',
                text: paidOnline
                  ? `Your online payment of ${rupees(d.amount)} failed; nothing was added.`
                  : `Your deposit of ${rupees(d.amount)} was not approved; the reason is below.`,
              },
        );
      }
      seen.current.set(d.id, d.status);
    }
    if (changed.length > 0) {
      setNews(changed);
      client.invalidateQueries({ queryKey: ['wallet'] });
      client.invalidateQueries({ queryKey: ACCOUNT_KEY });
    }
  }, [deposits.data, client]);

  // Reported payments waiting for staff (an online payment that is pending was not completed).
  const pending = (deposits.data?.deposits ?? []).filter((d) => d.status === 'pending' && d.method !== 'razorpay');
  const onlineOffered = wallet.data?.wallet.online_payments === true;
  const upi = upiDetailsOf(wallet.data);
  const note = `Hostplane wallet ${account.data?.username ?? ''}`.trim();

  return (
    <div className="page wallet-page">
      <PageHeader title="Wallet">
        <a className="btn btn-primary" href="#add-funds">
          Add funds
        </a>
      </PageHeader>

      {news.length > 0 ? (
        <div className="wallet-news">
          {news.map((item) => (
            <Alert key={item.text} kind={item.kind}>
              <p>{item.text}</p>
            </Alert>
          ))}
        </div>
      ) : null}

      {online ? (
        <div
          className={`alert alert-${online.kind} online-outcome`}
          role={online.kind === 'error' ? 'alert' : 'status'}
        >
          <h2 ref={onlineHeading} tabIndex={-1}>
            {online.title}
          </h2>
          <p>
            {online.text}
            {online.kind === 'success' && wallet.data
              ? ` Your balance is now ${rupees(wallet.data.wallet.balance)}.`
              : ''}
          </p>
          {online.back ? (
            <p>
              <Link className="btn btn-primary" to={online.back.to}>
                {online.back.label}
              </Link>
            </p>
          ) : null}
        </div>
      ) : null}

      {oneDeposit ? <OneDeposit id={oneDeposit} onClose={() => setParam('deposit', null)} /> : null}

      {wallet.isPending ? <Loading what="Loading your wallet" /> : null}
      {wallet.isError && !wallet.data ? <ErrorAlert error={wallet.error} /> : null}
      {wallet.data ? (
        <Balance
          data={wallet.data}
          pendingTotal={pending.reduce((sum, d) => sum + Number(d.amount), 0)}
          pendingCount={pending.length}
          onTopUp={(amount) => {
            setTopUp(amount);
            // The amount is filled in on the next render; then the form is where the user goes.
            requestAnimationFrame(() =>
              document.querySelector<HTMLInputElement>('#add-funds input[name="amount"]')?.focus(),
            );
          }}
        />
      ) : null}

      <div className="grid two wallet-columns">
        <section className="card" id="add-funds" aria-labelledby="add-funds-title" tabIndex={-1}>
          <h2 id="add-funds-title">Add funds</h2>
          {returnTo ? (
            <p className="muted">
              {returnTo.label.includes('order') ? 'Topping up for an order.' : 'Topping up for a renewal.'}{' '}
              <Link to={returnTo.to}>{returnTo.label}</Link>
            </p>
          ) : null}
          {onlineOffered ? (
            <>
              <h3>Pay online (UPI, card, netbanking)</h3>
              <OnlinePayment initialAmount={topUp ?? initialAmount} returnTo={returnTo} />
              <h3 className="or-heading">Or pay by UPI yourself and report it</h3>
            </>
          ) : null}
          <DepositForm
            initialAmount={topUp ?? initialAmount}
            returnTo={returnTo}
            upi={upi}
            note={note}
            pending={pending}
          />
        </section>

        <section className="card" aria-labelledby="deposits-title">
          <h2 id="deposits-title">Your deposits</h2>
          <DepositList
            query={deposits}
            page={depositPage}
            onPage={(p) => setParam('deposits_page', p > 1 ? String(p) : null)}
          />
        </section>
      </div>

      <section className="card" aria-labelledby="ledger-title">
        <h2 id="ledger-title">Transactions</h2>
        <LedgerFilterForm
          filters={filters}
          error={
            wallet.error instanceof ApiError ? (wallet.error.field('to') ?? wallet.error.field('from')) : undefined
          }
          onChange={(next) =>
            setSearch(
              (prev) => {
                const params = new URLSearchParams(prev);
                params.delete('page');
                for (const key of ['kind', 'from', 'to'] as const) {
                  if (next[key]) params.set(key, next[key]);
                  else params.delete(key);
                }
                return params;
              },
              { replace: true },
            )
          }
        />
        {wallet.data ? (
          <Ledger
            data={wallet.data}
            fetching={wallet.isFetching}
            filtered={Object.keys(filterQuery).length > 0}
            page={page}
            perPage={perPage}
            onPage={(p) => setParam('page', p > 1 ? String(p) : null)}
            onPerPage={(n) => {
              setSearch(
                (prev) => {
                  const next = new URLSearchParams(prev);
                  next.delete('page');
                  if (n === 20) next.delete('per_page');
                  else next.set('per_page', String(n));
                  return next;
                },
                { replace: true },
              );
            }}
          />
        ) : wallet.isPending ? (
          <Loading what="Loading transactions" />
        ) : null}
        {wallet.isError && wallet.data ? <ErrorAlert error={wallet.error} /> : null}
      </section>
    </div>
  );
}

function Balance({
  data,
  pendingTotal,
  pendingCount,
  onTopUp,
}: {
  data: WalletAnswer;
  pendingTotal: number;
  pendingCount: number;
  onTopUp: (amount: string) => void;
}) {
  const balance = Number(data.wallet.balance);
  const { unpaid, monthly_run_rate: runRate, next_renewals: renewals } = data.billing;
  const unpaidTotal = Number(unpaid.total.amount);
  const shortfall = unpaidTotal - balance;
  const next = renewals[0];
  return (
    <section className="card balance-card" aria-labelledby="balance-title">
      <h2 id="balance-title" className="sr-only">
        Balance
      </h2>
      <div className="grid three">
        <div className="stat">
          <span className="label">Balance</span>
          <span className={`value balance-value${balance < 0 ? ' debit' : ''}`}>{rupees(data.wallet.balance)}</span>
          {pendingCount > 0 ? (
            <span className="muted">
              + {rupees(pendingTotal)} waiting for approval ({pendingCount}{' '}
              {pendingCount === 1 ? 'deposit' : 'deposits'})
            </span>
          ) : null}
        </div>
        <div className="stat">
          <span className="label">Monthly cost of your services</span>
          <span className="value">{rupees(runRate.amount)}</span>
        </div>
        <div className="stat">
          <span className="label">Next renewal</span>
          {next ? (
            <>
              <span className="value">{rupees(next.amount)}</span>
              <span className="muted">
                <Link to={`/services/${next.service.id}`}>{next.service.label}</Link>, {day(next.paid_until)}
              </span>
            </>
          ) : (
            <span className="value muted-value">None due</span>
          )}
        </div>
      </div>
      {unpaidTotal > 0 ? (
        <div className="unpaid">
          <Alert kind="warning">
            <p>
              <strong>{rupees(unpaid.total.amount)} of renewals are unpaid.</strong>{' '}
              {shortfall > 0
                ? `Your balance is ${rupees(shortfall)} short of covering them.`
                : 'Your balance covers them: pay them from the service page.'}
            </p>
            <ul>
              {unpaid.orders.map((o) => (
                <li key={o.id}>
                  <Link to={`/services/${o.service.id}`}>{o.service.label}</Link>: {rupees(o.amount)}
                  {o.renews_from ? ` (from ${day(o.renews_from)})` : ''}
                </li>
              ))}
            </ul>
            {shortfall > 0 ? (
              <p>
                <button
                  type="button"
                  className="btn btn-secondary"
                  onClick={() => onTopUp(normaliseAmount(String(Math.ceil(shortfall * 100) / 100)) ?? '')}
                >
                  Top up {rupees(shortfall)}
                </button>
              </p>
            ) : null}
          </Alert>
        </div>
      ) : null}
    </section>
  );
}

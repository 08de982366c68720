// The wallet's ledger, newest first, a page at a time. At 1280 px a table; below 700 px the same
// entries as a list (no sideways scrolling on a phone). Credits carry "+", debits "−": the sign is
// text, the colour only repeats it.

import type { paths } from '@hostplane/sdk/schema';
import { type FormEvent, useState } from 'react';
import { Link } from 'react-router';
import { Button, Empty, SelectField, TextField } from '../../components/ui.tsx';
import { rupees, when } from '../../lib/format.ts';

export type WalletAnswer = paths['/api/v1/client/wallet/']['get']['responses'][200]['content']['application/json'];
type Transaction = WalletAnswer['transactions'][number];

export const PER_PAGE_CHOICES = [20, 50, 100];

const KINDS: Record<string, string> = {
  deposit: 'Deposit',
  order: 'Order',
  renewal: 'Renewal',
  refund: 'Refund',
  adjustment: 'Adjustment',
  withdrawal: 'Refund to your bank or card',
};

function kindLabel(kind: string): string {
  return KINDS[kind] ?? kind.charAt(0).toUpperCase() + kind.slice(1);
}

function signed(amount: string): { text: string; credit: boolean } {
  const value = Number(amount);
  const credit = !(value < 0);
  return { text: `${credit ? '+' : '−'}${rupees(Math.abs(value))}`, credit };
}

function Reference({ t }: { t: Transaction }) {
  if (!t.reference) return null;
  const { type, id } = t.reference;
  if (type === 'service') return <Link to={`/services/${id}`}>Service #{id}</Link>;
  if (type === 'deposit') return <Link to={`/wallet?deposit=${id}`}>Deposit #{id}</Link>;
  if (type === 'credit_note') return <span>Credit note #{id}</span>;
  return (
    <span>
      {kindLabel(type)} #{id}
    </span>
  );
}

/** The ledger's filters as the address bar keeps them: a kind and days (YYYY-MM-DD, both inclusive). */
export interface LedgerFilters {
  kind: string;
  from: string;
  to: string;
}

const DAY = /^\d{4}-\d{2}-\d{2}$/;

/** The API's query for the filters: the days as instants in the viewer's zone ([from, day after to)). */
export function ledgerQuery(filters: LedgerFilters): { kind?: string; from?: string; to?: string } {
  const query: { kind?: string; from?: string; to?: string } = {};
  if (filters.kind in KINDS) query.kind = filters.kind;
  if (DAY.test(filters.from)) {
    const from = new Date(`${filters.from}T00:00:00`);
    if (!Number.isNaN(from.getTime())) query.from = from.toISOString();
  }
  if (DAY.test(filters.to)) {
    const to = new Date(`${filters.to}T00:00:00`);
    if (!Number.isNaN(to.getTime())) {
      to.setDate(to.getDate() + 1);
      query.to = to.toISOString();
    }
  }
  return query;
}

export function LedgerFilterForm({
  filters,
  onChange,
  error,
}: {
  filters: LedgerFilters;
  onChange: (filters: LedgerFilters) => void;
  error?: string | undefined;
}) {
  const [draft, setDraft] = useState(filters);
  const active = filters.kind !== '' || filters.from !== '' || filters.to !== '';
  const submit = (event: FormEvent) => {
    event.preventDefault();
    onChange(draft);
  };
  return (
    <form className="ledger-filters" onSubmit={submit} aria-label="Filter transactions">
      <SelectField label="Type" value={draft.kind} onChange={(e) => setDraft({ ...draft, kind: e.target.value })}>
        <option value="">All types</option>
        {Object.entries(KINDS).map(([value, label]) => (
          <option key={value} value={value}>
            {label}
          </option>
        ))}
      </SelectField>
      <TextField
        label="From"
        type="date"
        value={draft.from}
        onChange={(e) => setDraft({ ...draft, from: e.target.value })}
      />
      <TextField
        label="To"
        type="date"
        value={draft.to}
        onChange={(e) => setDraft({ ...draft, to: e.target.value })}
        error={error}
      />
      <div className="row">
        <Button type="submit" variant="secondary">
          Filter
        </Button>
        {active ? (
          <Button
            variant="ghost"
            onClick={() => {
              const none = { kind: '', from: '', to: '' };
              setDraft(none);
              onChange(none);
            }}
          >
            Clear filters
          </Button>
        ) : null}
      </div>
    </form>
  );
}

export function Ledger({
  data,
  fetching,
  page,
  perPage,
  filtered = false,
  onPage,
  onPerPage,
}: {
  data: WalletAnswer;
  fetching: boolean;
  page: number;
  perPage: number;
  /** Whether filters are on (the empty state says so). */
  filtered?: boolean;
  onPage: (page: number) => void;
  onPerPage: (perPage: number) => void;
}) {
  const { transactions, pagination } = data;
  if (pagination.total === 0) {
    return filtered ? (
      <Empty title="No transactions match these filters">
        <p>Choose another type or dates, or clear the filters.</p>
      </Empty>
    ) : (
      <Empty title="No transactions yet">
        <p>Your deposits, orders, renewals and refunds will be listed here. Start by adding funds above.</p>
      </Empty>
    );
  }
  const first = (pagination.page - 1) * pagination.per_page + 1;
  const last = first + transactions.length - 1;
  return (
    <div className="ledger" aria-busy={fetching || undefined}>
      <div className="ledger-tools">
        <p className="muted" aria-live="polite">
          {transactions.length > 0
            ? `Showing ${first}–${last} of ${pagination.total} transactions, newest first.`
            : `No transactions on page ${pagination.page}.`}
        </p>
        <SelectField
          label="Per page"
          value={String(perPage)}
          onChange={(e) => onPerPage(Number(e.target.value))}
          className="per-page"
        >
          {PER_PAGE_CHOICES.map((n) => (
            <option key={n} value={n}>
              {n}
            </option>
          ))}
        </SelectField>
      </div>

      <div className="table-wrap ledger-table">
        <table>
          <caption className="sr-only">Wallet transactions, newest first</caption>
          <thead>
            <tr>
              <th scope="col">Date</th>
              <th scope="col">Type</th>
              <th scope="col">Details</th>
              <th scope="col" className="num">
                Amount
              </th>
              <th scope="col" className="num">
                Balance after
              </th>
            </tr>
          </thead>
          <tbody>
            {transactions.map((t) => {
              const amount = signed(t.amount);
              return (
                <tr key={t.id}>
                  <td className="nowrap">{when(t.created_at)}</td>
                  <td>{kindLabel(t.kind)}</td>
                  <td>
                    {t.note ? <span className="ledger-note">{t.note}</span> : null}
                    <span className="ledger-ref">
                      <Reference t={t} /> <span className="mono muted">{t.public_id}</span>
                    </span>
                  </td>
                  <td className={`num ${amount.credit ? 'credit' : 'debit'}`}>{amount.text}</td>
                  <td className="num">{rupees(t.balance_after)}</td>
                </tr>
              );
            })}
          </tbody>
        </table>
      </div>

      <ul className="list ledger-list" aria-label="Wallet transactions, newest first">
        {transactions.map((t) => {
          const amount = signed(t.amount);
          return (
            <li key={t.id}>
              <div className="ledger-line">
                <strong>{kindLabel(t.kind)}</strong>
                <strong className={amount.credit ? 'credit' : 'debit'}>{amount.text}</strong>
              </div>
              {t.note ? <p className="ledger-note">{t.note}</p> : null}
              <div className="ledger-line muted">
                <span>{when(t.created_at)}</span>
                <span>Balance {rupees(t.balance_after)}</span>
              </div>
              <p className="ledger-ref">
                <Reference t={t} /> <span className="mono muted">{t.public_id}</span>
              </p>
            </li>
          );
        })}
      </ul>

      {pagination.pages > 1 ? (
        <nav className="pager" aria-label="Transaction pages">
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
    </div>
  );
}

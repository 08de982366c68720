// Tax invoices and credit notes of every account (billing and admin; GET invoices): newest first,
// searched by part of the number, the customer's e-mail or the id, invoices or credit notes only
// (?q=&kind= in the address, so Back returns to the same results), 50 a page (Older / Newest).
// Each opens its page: the document, its PDF, and a credit note against it.

import { keepPreviousData, useQuery } from '@tanstack/react-query';
import { type FormEvent, useState } from 'react';
import { Link, useSearchParams } from 'react-router';
import { Button, Empty, ErrorAlert, Loading, PageHeader, SelectField, TextField } from '../components/ui.tsx';
import { day, rupees } from '../lib/format.ts';
import { useStaffTitle } from './AuthPages.tsx';
import { call, staffApi } from './api.ts';
import { ForbiddenOr } from './Forbidden.tsx';
import { StaffTable } from './StaffTable.tsx';

type Kind = 'invoice' | 'credit_note';

export default function InvoicesPage() {
  useStaffTitle('Invoices');
  const [params, setParams] = useSearchParams();
  const q = params.get('q') ?? '';
  const kindParam = params.get('kind');
  const kind: Kind | undefined = kindParam === 'invoice' || kindParam === 'credit_note' ? kindParam : undefined;
  const [typed, setTyped] = useState(q);
  const [typedKind, setTypedKind] = useState<string>(kind ?? '');
  const [pages, setPages] = useState<string[]>([]);
  const before = pages[pages.length - 1];
  const list = useQuery({
    queryKey: ['staff', 'invoices', q, kind ?? null, before ?? null],
    queryFn: () =>
      call(
        staffApi.GET('/api/v1/staff/invoices', {
          params: {
            query: { limit: 50, ...(q ? { q } : {}), ...(kind ? { kind } : {}), ...(before ? { before } : {}) },
          },
        }),
      ),
    placeholderData: keepPreviousData,
  });
  const search = (event: FormEvent) => {
    event.preventDefault();
    setPages([]);
    setParams({ ...(typed.trim() ? { q: typed.trim() } : {}), ...(typedKind ? { kind: typedKind } : {}) });
  };

  return (
    <ForbiddenOr error={list.error}>
      <PageHeader title="Invoices" />
      <form className="staff-filters" aria-label="Search invoices" onSubmit={search}>
        <TextField
          label="Number, customer's e-mail or id"
          type="search"
          value={typed}
          placeholder="HP/2627/000042"
          onChange={(e) => setTyped(e.target.value)}
          autoComplete="off"
        />
        <SelectField label="Documents" value={typedKind} onChange={(e) => setTypedKind(e.target.value)}>
          <option value="">Invoices and credit notes</option>
          <option value="invoice">Invoices</option>
          <option value="credit_note">Credit notes</option>
        </SelectField>
        <Button type="submit">Search</Button>
      </form>
      {list.isPending ? (
        <Loading what="Searching" />
      ) : list.isError ? (
        <ErrorAlert error={list.error} />
      ) : list.data.invoices.length === 0 ? (
        <Empty title="No invoice matches">Try part of the number, or the customer's e-mail address.</Empty>
      ) : (
        <>
          <StaffTable
            caption={q ? `Documents matching ${q}` : 'Documents, newest first'}
            columns={['Number', 'Customer', 'Issued', { label: 'Total', num: true }, { label: 'Credited', num: true }]}
          >
            {list.data.invoices.map((i) => (
              <tr key={i.id}>
                <td data-label="Number" className="staff-wrap">
                  <Link to={`/staff/invoices/${i.id}`} className="mono">
                    {i.number}
                  </Link>
                  <div className="muted">
                    {i.kind === 'credit_note' ? `Credit note against ${i.original_number}` : 'Tax invoice'}
                  </div>
                </td>
                <td data-label="Customer" className="staff-wrap">
                  <Link to={`/staff/accounts/${i.account.id}`}>{i.account.email}</Link>
                </td>
                <td data-label="Issued">{day(i.issued_at)}</td>
                <td data-label="Total" className="num">
                  {rupees(i.total)}
                </td>
                <td data-label="Credited" className="num">
                  {i.kind === 'invoice' ? rupees(i.credited) : '—'}
                </td>
              </tr>
            ))}
          </StaffTable>
          {pages.length > 0 || list.data.next_before ? (
            <div className="row">
              <Button variant="secondary" disabled={pages.length === 0} onClick={() => setPages([])}>
                Newest
              </Button>
              <Button
                variant="secondary"
                disabled={!list.data.next_before}
                onClick={() => list.data.next_before && setPages([...pages, list.data.next_before])}
              >
                Older
              </Button>
            </div>
          ) : null}
        </>
      )}
    </ForbiddenOr>
  );
}

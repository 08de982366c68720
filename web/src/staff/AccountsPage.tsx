// Customers' accounts (support and above): search by part of an e-mail, username or name, or an
// id (GET accounts?q=); each result opens the account's page. The search is in the address
// (?q=), so Back returns to the same results.

import { keepPreviousData, useQuery } from '@tanstack/react-query';
import { type FormEvent, useState } from 'react';
import { Link, useSearchParams } from 'react-router';
import { Button, Empty, ErrorAlert, Loading, PageHeader, Status, TextField } from '../components/ui.tsx';
import { day } from '../lib/format.ts';
import { useStaffTitle } from './AuthPages.tsx';
import { call, staffApi } from './api.ts';
import { ForbiddenOr } from './Forbidden.tsx';
import { StaffTable } from './StaffTable.tsx';

export default function AccountsPage() {
  useStaffTitle('Accounts');
  const [params, setParams] = useSearchParams();
  const q = params.get('q') ?? '';
  const [typed, setTyped] = useState(q);
  const [cursors, setCursors] = useState<string[]>([]);
  const cursor = cursors[cursors.length - 1];
  const list = useQuery({
    queryKey: ['staff', 'accounts', q, cursor ?? null],
    queryFn: () =>
      call(
        staffApi.GET('/api/v1/staff/accounts', {
          params: { query: { limit: 50, ...(q ? { q } : {}), ...(cursor ? { cursor } : {}) } },
        }),
      ),
    placeholderData: keepPreviousData,
  });
  const search = (event: FormEvent) => {
    event.preventDefault();
    setCursors([]);
    setParams(typed.trim() ? { q: typed.trim() } : {});
  };

  return (
    <ForbiddenOr error={list.error}>
      <PageHeader title="Accounts" />
      <form className="staff-filters" aria-label="Search accounts" onSubmit={search}>
        <TextField
          label="E-mail, username, name or id"
          type="search"
          value={typed}
          onChange={(e) => setTyped(e.target.value)}
          autoComplete="off"
        />
        <Button type="submit">Search</Button>
      </form>
      {list.isPending ? (
        <Loading what="Searching" />
      ) : list.isError ? (
        <ErrorAlert error={list.error} />
      ) : list.data.accounts.length === 0 ? (
        <Empty title="No account matches">Try part of the e-mail address, or the account's number.</Empty>
      ) : (
        <>
          <StaffTable
            caption={q ? `Accounts matching ${q}` : 'Accounts, oldest first'}
            columns={['Account', 'Name', 'Status', 'Since']}
          >
            {list.data.accounts.map((a) => (
              <tr key={a.id}>
                <td data-label="Account" className="staff-wrap">
                  <Link to={`/staff/accounts/${a.id}`}>{a.email}</Link>
                  <div className="muted">
                    #{a.id}
                    {a.username ? ` · ${a.username}` : ''}
                  </div>
                </td>
                <td data-label="Name" className="staff-wrap">
                  {a.name}
                </td>
                <td data-label="Status">
                  <Status value={a.status} />
                </td>
                <td data-label="Since">{day(a.created_at)}</td>
              </tr>
            ))}
          </StaffTable>
          {cursors.length > 0 || list.data.next_cursor ? (
            <div className="row">
              <Button variant="secondary" disabled={cursors.length === 0} onClick={() => setCursors([])}>
                First page
              </Button>
              <Button
                variant="secondary"
                disabled={!list.data.next_cursor}
                onClick={() => list.data.next_cursor && setCursors([...cursors, list.data.next_cursor])}
              >
                Next page
              </Button>
            </div>
          ) : null}
        </>
      )}
    </ForbiddenOr>
  );
}

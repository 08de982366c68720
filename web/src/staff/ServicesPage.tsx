// Every account's services (support and above), newest first: search by part of the label or
// the owner's e-mail, or the id (GET services?q=), and narrow by state. The filter is in the
// address (?q=&status=), so Back returns to the same list.

import { keepPreviousData, useQuery } from '@tanstack/react-query';
import { type FormEvent, useState } from 'react';
import { Link, useSearchParams } from 'react-router';
import { Button, Empty, ErrorAlert, Loading, PageHeader, SelectField, Status, TextField } from '../components/ui.tsx';
import { day, rupees } from '../lib/format.ts';
import { useStaffTitle } from './AuthPages.tsx';
import { call, staffApi } from './api.ts';
import { ForbiddenOr } from './Forbidden.tsx';
import { StaffTable } from './StaffTable.tsx';

const STATUSES = ['pending', 'provisioning', 'active', 'suspended', 'failed', 'terminated'] as const;
type ServiceStatus = (typeof STATUSES)[number];

export default function ServicesPage() {
  useStaffTitle('Services');
  const [params, setParams] = useSearchParams();
  const q = params.get('q') ?? '';
  const status = (STATUSES as readonly string[]).includes(params.get('status') ?? '')
    ? (params.get('status') as ServiceStatus)
    : undefined;
  const [typed, setTyped] = useState(q);
  const [state, setState] = useState<string>(status ?? '');
  const list = useQuery({
    queryKey: ['staff', 'services', q, status ?? null],
    queryFn: () =>
      call(
        staffApi.GET('/api/v1/staff/services', {
          params: { query: { limit: 100, ...(q ? { q } : {}), ...(status ? { status } : {}) } },
        }),
      ),
    placeholderData: keepPreviousData,
  });
  const search = (event: FormEvent) => {
    event.preventDefault();
    setParams({ ...(typed.trim() ? { q: typed.trim() } : {}), ...(state ? { status: state } : {}) });
  };

  return (
    <ForbiddenOr error={list.error}>
      <PageHeader title="Services" />
      <form className="staff-filters" aria-label="Search services" onSubmit={search}>
        <TextField
          label="Label, owner's e-mail or id"
          type="search"
          value={typed}
          onChange={(e) => setTyped(e.target.value)}
          autoComplete="off"
        />
        <SelectField label="State" value={state} onChange={(e) => setState(e.target.value)}>
          <option value="">any</option>
          {STATUSES.map((s) => (
            <option key={s} value={s}>
              {s}
            </option>
          ))}
        </SelectField>
        <Button type="submit">Search</Button>
      </form>
      {list.isPending ? (
        <Loading what="Loading the services" />
      ) : list.isError ? (
        <ErrorAlert error={list.error} />
      ) : list.data.services.length === 0 ? (
        <Empty title="No service matches">Try part of the label or the owner's e-mail address.</Empty>
      ) : (
        <StaffTable
          caption="Services, newest first (at most 100)"
          columns={['Service', 'Owner', 'Status', { label: 'Price a month', num: true }, 'Paid until']}
        >
          {list.data.services.map((s) => (
            <tr key={s.id}>
              <td data-label="Service" className="staff-wrap">
                <Link to={`/staff/services/${s.id}`}>{s.label}</Link>{' '}
                <span className="muted">
                  #{s.id} · {s.type}
                </span>
              </td>
              <td data-label="Owner" className="staff-wrap">
                <Link to={`/staff/accounts/${s.account.id}`}>{s.account.email}</Link>
              </td>
              <td data-label="Status">
                <Status value={s.status} />
              </td>
              <td data-label="Price" className="num">
                {rupees(s.price)}
              </td>
              <td data-label="Paid until">{day(s.paid_until)}</td>
            </tr>
          ))}
        </StaffTable>
      )}
    </ForbiddenOr>
  );
}

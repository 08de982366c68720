// The audit trail (admin): every staff change, newest first, 50 a page, optionally of one target
// (type and id). "Older" follows next_before; "Newest" goes back to the first page.

import { keepPreviousData, useQuery } from '@tanstack/react-query';
import { type FormEvent, useState } from 'react';
import { Button, Empty, ErrorAlert, Loading, PageHeader, TextField } from '../components/ui.tsx';
import { when } from '../lib/format.ts';
import { useStaffTitle } from './AuthPages.tsx';
import { call, staffApi } from './api.ts';
import { ForbiddenOr } from './Forbidden.tsx';

interface Filter {
  target_type?: string;
  target_id?: string;
}

function fields(value: unknown): string {
  if (value === null || value === undefined) return '';
  if (typeof value !== 'object') return String(value);
  return Object.entries(value as Record<string, unknown>)
    .map(([k, v]) => `${k}: ${typeof v === 'object' ? JSON.stringify(v) : String(v)}`)
    .join(', ');
}

export default function AuditPage() {
  useStaffTitle('Audit trail');
  const [type, setType] = useState('');
  const [id, setId] = useState('');
  const [filter, setFilter] = useState<Filter>({});
  const [pages, setPages] = useState<string[]>([]);
  const before = pages[pages.length - 1];
  const log = useQuery({
    queryKey: ['staff', 'audit', filter, before ?? null],
    queryFn: () =>
      call(
        staffApi.GET('/api/v1/staff/audit', {
          params: { query: { limit: 50, ...filter, ...(before ? { before } : {}) } },
        }),
      ),
    placeholderData: keepPreviousData,
  });
  const apply = (event: FormEvent) => {
    event.preventDefault();
    setFilter({
      ...(type.trim() ? { target_type: type.trim() } : {}),
      ...(id.trim() ? { target_id: id.trim() } : {}),
    });
    setPages([]);
  };

  return (
    <ForbiddenOr error={log.error}>
      <PageHeader title="Audit trail" />
      <form className="staff-filters" onSubmit={apply} aria-label="Filter the audit trail">
        <TextField
          label="Target type"
          value={type}
          onChange={(e) => setType(e.target.value)}
          placeholder="deposit, account, staff…"
        />
        <TextField label="Target id" value={id} onChange={(e) => setId(e.target.value)} />
        <Button type="submit" variant="secondary">
          Filter
        </Button>
      </form>
      {log.isPending ? (
        <Loading what="Loading the audit trail" />
      ) : log.isError ? (
        <ErrorAlert error={log.error} />
      ) : log.data.entries.length === 0 ? (
        <Empty title="No audit rows">Nothing matches this filter.</Empty>
      ) : (
        <div className="table-wrap">
          <table className="staff-audit">
            <caption className="sr-only">Audit rows, newest first</caption>
            <thead>
              <tr>
                <th scope="col">When</th>
                <th scope="col">Who</th>
                <th scope="col">Action</th>
                <th scope="col">Target</th>
                <th scope="col">Change</th>
                <th scope="col">Reason</th>
              </tr>
            </thead>
            <tbody>
              {log.data.entries.map((e) => (
                <tr key={e.id}>
                  <td>{when(e.at)}</td>
                  <td>
                    {e.actor}
                    {e.role ? <span className="muted"> ({e.role})</span> : null}
                  </td>
                  <td className="mono">{e.action}</td>
                  <td>
                    {e.target_type} {e.target_id ?? ''}
                  </td>
                  <td className="staff-change">
                    {e.before !== null ? <div>before: {fields(e.before)}</div> : null}
                    {e.after !== null ? <div>after: {fields(e.after)}</div> : null}
                  </td>
                  <td>{e.reason ?? ''}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
      <div className="row">
        <Button variant="secondary" disabled={pages.length === 0} onClick={() => setPages([])}>
          Newest
        </Button>
        <Button
          variant="secondary"
          disabled={!log.data?.next_before}
          onClick={() => log.data?.next_before && setPages([...pages, log.data.next_before])}
        >
          Older
        </Button>
      </div>
    </ForbiddenOr>
  );
}

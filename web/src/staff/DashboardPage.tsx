// The console's landing page for every role (GET dashboard): today's money in and out (the India
// Standard Time day), failed jobs, nodes in trouble, and the deposits waiting with the age of the
// oldest. Each figure links to the page that acts on it, when the member's role may open that page.

import { useQuery } from '@tanstack/react-query';
import { Link } from 'react-router';
import { ErrorAlert, Loading, PageHeader } from '../components/ui.tsx';
import { plural, relative, rupees, when } from '../lib/format.ts';
import { useStaffTitle } from './AuthPages.tsx';
import { call, staffApi } from './api.ts';
import { ForbiddenOr } from './Forbidden.tsx';
import { duration } from './format.ts';
import { Health } from './Health.tsx';
import { StaffTable } from './StaffTable.tsx';
import { mayUse, useMe } from './session.tsx';

export default function DashboardPage() {
  useStaffTitle('Dashboard');
  const me = useMe();
  const role = me.data?.staff.role;
  const board = useQuery({
    queryKey: ['staff', 'dashboard'],
    queryFn: () => call(staffApi.GET('/api/v1/staff/dashboard')),
    refetchInterval: 60_000,
  });

  return (
    <ForbiddenOr error={board.error}>
      <PageHeader title="Dashboard" />
      {board.isPending ? (
        <Loading what="Loading today's figures" />
      ) : board.isError ? (
        <ErrorAlert error={board.error} />
      ) : (
        <>
          <p className="muted">
            Today in India Standard Time, since {when(board.data.day.from)}. Updated every minute.
          </p>
          <div className="grid four staff-stats">
            <section className="card stat" aria-labelledby="money-in">
              <h2 id="money-in" className="label">
                Money in today
              </h2>
              <p className="value">{rupees(board.data.money_in.total)}</p>
              <p className="muted">
                {plural(board.data.money_in.deposits.count, 'deposit')} {rupees(board.data.money_in.deposits.amount)}
                <br />
                {board.data.money_in.online.count} online {rupees(board.data.money_in.online.amount)}
              </p>
            </section>
            <section className="card stat" aria-labelledby="money-out">
              <h2 id="money-out" className="label">
                Money out today
              </h2>
              <p className="value">{rupees(board.data.money_out.total)}</p>
              <p className="muted">
                {plural(board.data.money_out.withdrawals.count, 'withdrawal')}{' '}
                {rupees(board.data.money_out.withdrawals.amount)}
                <br />
                {plural(board.data.money_out.refunds.count, 'refund')} {rupees(board.data.money_out.refunds.amount)}
              </p>
            </section>
            <section className="card stat" aria-labelledby="jobs-failed">
              <h2 id="jobs-failed" className="label">
                Jobs failed today
              </h2>
              <p className="value">{board.data.failed_jobs.today}</p>
              <p className="muted">{plural(board.data.nodes.length, 'node')} in trouble</p>
            </section>
            <section className="card stat" aria-labelledby="deposits-waiting">
              <h2 id="deposits-waiting" className="label">
                Deposits waiting
              </h2>
              <p className="value">{board.data.deposits_waiting.count}</p>
              <p className="muted">
                {board.data.deposits_waiting.oldest_age_seconds === null
                  ? 'none waiting'
                  : `the oldest has waited ${duration(board.data.deposits_waiting.oldest_age_seconds)}`}
                <br />
                <Link to="/staff/deposits">Open the queue</Link>
              </p>
            </section>
          </div>

          <h2>Nodes in trouble</h2>
          {board.data.nodes.length === 0 ? (
            <p className="muted">Every node answered its last check and is within its capacity.</p>
          ) : (
            <StaffTable
              caption="Nodes down or over capacity"
              columns={['Node', 'Health', { label: 'Used / capacity', num: true }, 'Last error']}
            >
              {board.data.nodes.map((n) => (
                <tr key={n.id}>
                  <td data-label="Node">{mayUse(role, 'admin') ? <Link to="/staff/nodes">{n.name}</Link> : n.name}</td>
                  <td data-label="Health">
                    <Health value={n.health} />
                  </td>
                  <td data-label="Used / capacity" className="num">
                    {n.used} / {n.capacity}
                  </td>
                  <td data-label="Last error" className="staff-wrap">
                    {n.last_error ?? '—'}
                  </td>
                </tr>
              ))}
            </StaffTable>
          )}

          <h2>Latest failed jobs</h2>
          {board.data.failed_jobs.latest.length === 0 ? (
            <p className="muted">No job has failed.</p>
          ) : (
            <StaffTable caption="The five latest failed jobs" columns={['Job', 'Service', 'Error', 'Failed']}>
              {board.data.failed_jobs.latest.map((j) => (
                <tr key={j.id}>
                  <td data-label="Job">
                    {j.type} <span className="muted">#{j.id}</span>
                  </td>
                  <td data-label="Service">
                    <Link to={`/staff/services/${j.service_id}`}>Service {j.service_id}</Link>
                  </td>
                  <td data-label="Error" className="staff-wrap">
                    {j.error_message ?? j.error_code ?? '—'}
                  </td>
                  <td data-label="Failed">{relative(j.finished_at ?? j.created_at)}</td>
                </tr>
              ))}
            </StaffTable>
          )}
        </>
      )}
    </ForbiddenOr>
  );
}

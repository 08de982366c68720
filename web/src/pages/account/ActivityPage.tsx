// The account's activity log (CONTRACT §11): what happened to the account in the last year, newest
// first, a page at a time — sign-ins and refused ones, security changes, tokens, orders, money,
// consoles, what Hostplane staff did — filtered by kind. Times are in the viewer's own zone, named.

import { keepPreviousData, useQuery } from '@tanstack/react-query';
import { useState } from 'react';
import { Link } from 'react-router';
import { useTitle } from '../../components/Layout.tsx';
import { Alert, Button, Empty, ErrorAlert, Loading, PageHeader, SelectField } from '../../components/ui.tsx';
import { api, unwrap } from '../../lib/api.ts';
import { relative, when } from '../../lib/format.ts';
import { AccountTabs } from './AccountPage.tsx';
import '../dashboard/pages.css';

const PER_PAGE = 25;

/** What the filter offers: a type, or a prefix naming several (the API takes either). */
const KINDS: [string, string][] = [
  ['', 'Everything'],
  ['sign_in', 'Sign-ins'],
  ['sign_in_failed', 'Failed sign-ins'],
  ['two_factor', 'Two-factor sign-in'],
  ['passkey', 'Passkeys'],
  ['password_changed', 'Password changes'],
  ['session_revoked', 'Sessions signed out'],
  ['token', 'API tokens'],
  ['order_placed', 'Orders'],
  ['payment', 'Renewal payments'],
  ['deposit', 'Deposits'],
  ['sso', 'Control panel sign-ins'],
  ['console', 'Consoles'],
  ['staff', 'Hostplane staff actions'],
  ['export', 'Data exports'],
  ['deletion', 'Account deletion'],
];

async function fetchActivity(page: number, type: string) {
  return unwrap(
    api.GET('/api/v1/client/account/activity/', {
      params: { query: { page, per_page: PER_PAGE, ...(type ? { type } : {}) } },
    }),
  );
}

/** The viewer's zone as the times below name it ("IST"), not its database name (Asia/Calcutta). */
function zoneName(): string {
  const part = new Intl.DateTimeFormat('en-IN', { timeZoneName: 'short' })
    .formatToParts(new Date())
    .find((p) => p.type === 'timeZoneName');
  return part?.value ?? 'your zone';
}

type Event = Awaited<ReturnType<typeof fetchActivity>>['events'][number];

function actorOf(event: Event): string {
  if (event.actor === 'self') return 'You';
  if (event.actor === 'staff') return event.staff_name ? `Hostplane staff (${event.staff_name})` : 'Hostplane staff';
  return 'System';
}

export default function ActivityPage() {
  useTitle('Activity');
  const [page, setPage] = useState(1);
  const [type, setType] = useState('');
  const activity = useQuery({
    queryKey: ['activity', page, type],
    queryFn: () => fetchActivity(page, type),
    placeholderData: keepPreviousData,
  });
  const data = activity.data;
  const pages = data ? Math.max(1, data.pagination.pages) : 1;
  const kind = KINDS.find(([value]) => value === type)?.[1] ?? 'Everything';

  return (
    <div className="acct">
      <PageHeader title="Account" />
      <AccountTabs />
      <p className="acct-intro">
        What happened to your account in the last year: sign-ins (and attempts that failed), security changes, API
        tokens, orders and payments, consoles, and anything Hostplane staff did.{' '}
        {`Times are in your time zone (${zoneName()}).`}
      </p>
      <Alert kind="info">
        <p>
          A sign-in you do not recognise? <Link to="/account">Change your password</Link> (that signs out every other
          session), then check your <Link to="/tokens">API tokens</Link>.
        </p>
      </Alert>
      <div className="act-filter">
        <SelectField
          label="Show"
          value={type}
          onChange={(e) => {
            setType(e.target.value);
            setPage(1);
          }}
        >
          {KINDS.map(([value, label]) => (
            <option key={value} value={value}>
              {label}
            </option>
          ))}
        </SelectField>
      </div>

      <section className="card" aria-label={`Activity: ${kind}`}>
        {activity.isPending ? <Loading what="Loading your activity" /> : null}
        {activity.isError ? <ErrorAlert error={activity.error} /> : null}
        {data && data.events.length === 0 ? (
          <Empty title={type ? 'Nothing of this kind' : 'No activity yet'}>
            <p>
              {type
                ? `Nothing under “${kind}” in the last year.`
                : 'Sign-ins, security changes and payments will be listed here.'}
            </p>
            {type ? (
              <Button
                variant="secondary"
                onClick={() => {
                  setType('');
                  setPage(1);
                }}
              >
                Show everything
              </Button>
            ) : null}
          </Empty>
        ) : null}
        {data && data.events.length > 0 ? (
          <ul className="list act-list" aria-busy={activity.isFetching || undefined}>
            {data.events.map((event) => (
              <EventItem key={event.id} event={event} />
            ))}
          </ul>
        ) : null}
        {data && pages > 1 ? (
          <nav className="row pager" aria-label="Pages">
            <Button variant="secondary" disabled={page <= 1} onClick={() => setPage(page - 1)}>
              Newer
            </Button>
            <span className="muted">
              Page {page} of {pages}
            </span>
            <Button variant="secondary" disabled={page >= pages} onClick={() => setPage(page + 1)}>
              Older
            </Button>
          </nav>
        ) : null}
      </section>
    </div>
  );
}

function EventItem({ event }: { event: Event }) {
  const failed = event.type === 'sign_in_failed';
  return (
    <li className={failed ? 'act-failed' : undefined}>
      <p className="act-summary">
        {failed ? <span className="status status-bad">failed</span> : null} {event.summary}
      </p>
      <p className="muted act-meta">
        <time dateTime={event.at} title={relative(event.at)}>
          {when(event.at)}
        </time>
        {' · '}
        <span className="act-who">
          {actorOf(event)}
          {event.ip ? (
            <>
              , from <span className="mono">{event.ip}</span>
            </>
          ) : null}
        </span>
      </p>
    </li>
  );
}

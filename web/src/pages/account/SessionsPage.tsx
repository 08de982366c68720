// Account → Sessions (CONTRACT §11): every browser signed in to the account, most recently active
// first, with its device, address, when it signed in and when it was last seen (in the viewer's
// zone, named); "This device" marks the one asking. Any other session can be signed out, or all of
// them at once, each after a confirmation. API tokens are not sessions and are not touched.

import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useState } from 'react';
import { Link } from 'react-router';
import { useTitle } from '../../components/Layout.tsx';
import { Alert, Button, ErrorAlert, Loading, PageHeader, useConfirmFocus } from '../../components/ui.tsx';
import { ApiError, api, unwrap } from '../../lib/api.ts';
import { relative, viewerZone, when } from '../../lib/format.ts';
import { AccountTabs } from './AccountPage.tsx';
import '../dashboard/pages.css';
import './security.css';

const SESSIONS = '/api/v1/client/account/sessions/';
const SESSIONS_KEY = ['sessions'] as const;

async function fetchSessions() {
  return (await unwrap(api.GET(SESSIONS))).sessions;
}

/** "5 minutes ago"; a time a little ahead of this device's clock is "just now". */
function ago(iso: string): string {
  return new Date(iso).getTime() >= Date.now() - 60_000 ? 'just now' : relative(iso);
}

type Session = Awaited<ReturnType<typeof fetchSessions>>[number];

export default function SessionsPage() {
  useTitle('Sessions');
  const sessions = useQuery({ queryKey: SESSIONS_KEY, queryFn: fetchSessions });
  const [notice, setNotice] = useState<string | null>(null);
  // This browser first, then the others as the server sends them (most recently active first).
  const list = [...(sessions.data ?? [])].sort((a, b) => Number(b.current) - Number(a.current));
  const others = list.filter((s) => !s.current);

  return (
    <div className="acct">
      <PageHeader title="Account" />
      <AccountTabs />
      <p className="acct-intro">
        Where your account is signed in now. If you see a device you do not know, sign it out and{' '}
        <Link to="/account">change your password</Link>. Times are in your time zone ({viewerZone()}).
      </p>
      {notice ? (
        <Alert kind="success">
          <p>{notice}</p>
        </Alert>
      ) : null}
      <section className="card" aria-labelledby="ses-title">
        <div className="card-head">
          <h2 id="ses-title">Signed-in sessions</h2>
          {sessions.data ? (
            <span className="muted">
              {list.length} session{list.length === 1 ? '' : 's'}
            </span>
          ) : null}
        </div>
        {sessions.isPending ? <Loading what="Loading your sessions" /> : null}
        {sessions.isError ? <ErrorAlert error={sessions.error} /> : null}
        {list.length > 0 ? (
          <ul className="list ses-list">
            {list.map((session) => (
              <SessionItem key={session.id} session={session} onEnded={setNotice} />
            ))}
          </ul>
        ) : null}
        {sessions.data ? <SignOutOthers count={others.length} onEnded={setNotice} /> : null}
      </section>
      <p className="hint">
        API tokens are not sessions: scripts using them keep working. Manage them on{' '}
        <Link to="/tokens">API tokens</Link>.
      </p>
    </div>
  );
}

function SessionItem({ session, onEnded }: { session: Session; onEnded: (notice: string) => void }) {
  const client = useQueryClient();
  const [confirming, setConfirming] = useState(false);
  const revoke = useMutation({
    mutationFn: () => unwrap(api.POST(SESSIONS, { body: { action: 'revoke', id: session.id } })),
    onSettled: async (_data, error) => {
      // Already gone (ended elsewhere, or expired): the list is simply out of date.
      if (!error || (error instanceof ApiError && error.code === 'not_owner')) {
        setConfirming(false);
        onEnded(`${session.device}${session.ip ? ` (${session.ip})` : ''} was signed out.`);
      }
      await client.invalidateQueries({ queryKey: SESSIONS_KEY });
    },
  });
  const focus = useConfirmFocus(confirming);
  return (
    <li className={`ses-item${session.current ? ' ses-current' : ''}`}>
      <div className="tok-head">
        <div className="tok-title">
          <strong>{session.device}</strong>{' '}
          {session.current ? <span className="status status-good">This device</span> : null}
        </div>
        {session.current || confirming ? null : (
          <Button ref={focus.trigger} variant="secondary" onClick={() => setConfirming(true)}>
            Sign out
          </Button>
        )}
      </div>
      <dl className="facts ses-facts">
        <dt>IP address</dt>
        <dd className="mono">{session.ip ?? 'unknown'}</dd>
        <dt>Signed in</dt>
        <dd>{when(session.created_at)}</dd>
        <dt>Last active</dt>
        <dd>{session.current ? 'Now' : `${when(session.last_seen_at)} (${ago(session.last_seen_at)})`}</dd>
      </dl>
      {confirming ? (
        <fieldset className="confirm ses-confirm">
          <legend className="sr-only">Sign out {session.device}</legend>
          <p>
            Sign out <strong>{session.device}</strong>
            {session.ip ? ` at ${session.ip}` : ''}? It has to sign in again from its next click, and its open consoles
            close.
          </p>
          <ErrorAlert
            error={revoke.error instanceof ApiError && revoke.error.code === 'not_owner' ? null : revoke.error}
          />
          <div className="row">
            <Button ref={focus.confirm} variant="danger" busy={revoke.isPending} onClick={() => revoke.mutate()}>
              Sign out this session
            </Button>
            <Button variant="secondary" onClick={() => setConfirming(false)}>
              Cancel
            </Button>
          </div>
        </fieldset>
      ) : null}
    </li>
  );
}

function SignOutOthers({ count, onEnded }: { count: number; onEnded: (notice: string) => void }) {
  const client = useQueryClient();
  const [confirming, setConfirming] = useState(false);
  const focus = useConfirmFocus(confirming);
  const revoke = useMutation({
    mutationFn: () => unwrap(api.POST(SESSIONS, { body: { action: 'revoke_others' } })),
    onSuccess: async (data) => {
      setConfirming(false);
      const ended = data.sessions_ended;
      onEnded(
        ended === 0
          ? 'No other session was signed in.'
          : `${ended} other session${ended === 1 ? ' was' : 's were'} signed out.`,
      );
      await client.invalidateQueries({ queryKey: SESSIONS_KEY });
    },
  });
  if (count === 0) return <p className="muted ses-only">No other browser or device is signed in.</p>;
  return (
    <div className="ses-others">
      {confirming ? (
        <fieldset className="confirm">
          <legend className="sr-only">Sign out all other sessions</legend>
          <p>Sign out the {count === 1 ? 'other session' : `${count} other sessions`}? This browser stays signed in.</p>
          <ErrorAlert error={revoke.error} />
          <div className="row">
            <Button ref={focus.confirm} variant="danger" busy={revoke.isPending} onClick={() => revoke.mutate()}>
              Sign out {count === 1 ? 'the other session' : `${count} sessions`}
            </Button>
            <Button variant="secondary" onClick={() => setConfirming(false)}>
              Cancel
            </Button>
          </div>
        </fieldset>
      ) : (
        <Button ref={focus.trigger} variant="danger" onClick={() => setConfirming(true)}>
          Sign out all other sessions
        </Button>
      )}
    </div>
  );
}

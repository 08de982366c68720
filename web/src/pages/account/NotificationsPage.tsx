// Notifications, newest first: all or only the unread ones, a page at a time. Each can be marked
// read (POST {action: "read", id}), or all at once ({action: "read_all"}); one about a service
// links to it, one about a deposit to the wallet.

import { keepPreviousData, useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useState } from 'react';
import { Link } from 'react-router';
import { useTitle } from '../../components/Layout.tsx';
import { Alert, Button, Empty, ErrorAlert, Loading, PageHeader } from '../../components/ui.tsx';
import { api, unwrap } from '../../lib/api.ts';
import { relative, when } from '../../lib/format.ts';
import '../dashboard/pages.css';

const PER_PAGE = 20;

async function fetchNotifications(page: number, unread: boolean) {
  return unwrap(
    api.GET('/api/v1/client/notifications/', {
      params: { query: { page, per_page: PER_PAGE, ...(unread ? { unread: true } : {}) } },
    }),
  );
}

type Note = Awaited<ReturnType<typeof fetchNotifications>>['notifications'][number];

export default function NotificationsPage() {
  useTitle('Notifications');
  const client = useQueryClient();
  const [page, setPage] = useState(1);
  const [unreadOnly, setUnreadOnly] = useState(false);
  const notes = useQuery({
    queryKey: ['notifications', 'page', page, unreadOnly],
    queryFn: () => fetchNotifications(page, unreadOnly),
    placeholderData: keepPreviousData,
  });
  const readAll = useMutation({
    mutationFn: () => unwrap(api.POST('/api/v1/client/notifications/', { body: { action: 'read_all' } })),
    onSuccess: () => client.invalidateQueries({ queryKey: ['notifications'] }),
  });
  const data = notes.data;
  const pages = data ? Math.max(1, data.pagination.pages) : 1;
  const choose = (unread: boolean) => {
    setUnreadOnly(unread);
    setPage(1);
  };

  return (
    <div className="acct">
      <PageHeader title="Notifications">
        {data && data.unread > 0 ? (
          <Button variant="secondary" busy={readAll.isPending} onClick={() => readAll.mutate()}>
            Mark all {data.unread} read
          </Button>
        ) : null}
      </PageHeader>
      <fieldset className="tabs note-filter">
        <legend className="sr-only">Show</legend>
        <button type="button" aria-pressed={!unreadOnly} onClick={() => choose(false)}>
          All
        </button>
        <button type="button" aria-pressed={unreadOnly} onClick={() => choose(true)}>
          Unread{data ? ` (${data.unread})` : ''}
        </button>
      </fieldset>
      <ErrorAlert error={readAll.error} />
      {readAll.isSuccess && 'marked' in readAll.data ? (
        <Alert kind="success">
          <p>{readAll.data.message}</p>
        </Alert>
      ) : null}

      <section className="card" aria-label={unreadOnly ? 'Unread notifications' : 'All notifications'}>
        {notes.isPending ? <Loading what="Loading notifications" /> : null}
        {notes.isError ? <ErrorAlert error={notes.error} /> : null}
        {data && data.notifications.length === 0 ? (
          unreadOnly ? (
            <Empty title="You are all caught up">
              <p>No unread notifications.</p>
              <Button variant="secondary" onClick={() => choose(false)}>
                Show all notifications
              </Button>
            </Empty>
          ) : (
            <Empty title="No notifications yet">
              <p>
                We post here when a server is ready, a renewal is due or paid, or a deposit is approved.{' '}
                <Link to="/order">Order a server</Link> or <Link to="/wallet">top up your wallet</Link> to get started.
              </p>
            </Empty>
          )
        ) : null}
        {data && data.notifications.length > 0 ? (
          <ul className="list note-list" aria-busy={notes.isFetching || undefined}>
            {data.notifications.map((note) => (
              <NoteItem key={note.id} note={note} />
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

function NoteItem({ note }: { note: Note }) {
  const client = useQueryClient();
  const markRead = useMutation({
    mutationFn: () => unwrap(api.POST('/api/v1/client/notifications/', { body: { action: 'read', id: note.id } })),
    onSuccess: () => client.invalidateQueries({ queryKey: ['notifications'] }),
  });
  const service = typeof note.data.service === 'number' ? note.data.service : null;
  const deposit = typeof note.data.deposit === 'string' ? note.data.deposit : null;
  return (
    <li className={note.read ? 'note-read' : 'note-unread'}>
      <div className="note-head">
        <div className="note-title">
          {note.read ? null : <span className="badge-new">New</span>}
          <strong>{note.title}</strong>
        </div>
        {note.read ? null : (
          <Button variant="secondary" className="btn-small" busy={markRead.isPending} onClick={() => markRead.mutate()}>
            Mark read<span className="sr-only">: {note.title}</span>
          </Button>
        )}
      </div>
      <p className="note-body">{note.body}</p>
      <p className="muted note-time">
        <time dateTime={note.created_at}>{when(note.created_at)}</time> ({relative(note.created_at)})
        {service !== null ? (
          <>
            {' · '}
            <Link to={`/services/${service}`}>Open the service</Link>
          </>
        ) : null}
        {deposit !== null ? (
          <>
            {' · '}
            <Link to="/wallet">Open the wallet</Link>
          </>
        ) : null}
      </p>
      {markRead.isError ? <ErrorAlert error={markRead.error} /> : null}
    </li>
  );
}

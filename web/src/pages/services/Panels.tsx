// The quieter parts of a service page: its facts, its credentials (fetched only on a click,
// never cached), the sign-in to its control panel, renewing it, asking for its termination, and
// its history (events and the last job).

import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useState } from 'react';
import { Link } from 'react-router';
import {
  Alert,
  Button,
  CopyButton,
  ErrorAlert,
  fieldError,
  Loading,
  Status,
  TextArea,
  TypedConfirm,
} from '../../components/ui.tsx';
import { ApiError, api, unwrap } from '../../lib/api.ts';
import { day, relative, rupees, when } from '../../lib/format.ts';
import {
  type Credentials,
  JOB_NAMES,
  jobRunning,
  type Service,
  type SignOn,
  serviceKey,
  stepWords,
  typeName,
} from './common.ts';

export function FactsCard({ service }: { service: Service }) {
  const plan = useQuery({
    queryKey: ['catalog-plan', service.plan.id],
    queryFn: () => unwrap(api.GET('/api/v1/client/catalog/', { params: { query: { plan_id: service.plan.id } } })),
    staleTime: 10 * 60_000,
    retry: false,
  });
  const found = plan.data && 'plan' in plan.data ? (plan.data.plan as { specs?: Record<string, unknown> }) : null;
  const specs = found?.specs ?? null;
  const specText = specs
    ? [
        typeof specs.vcpu === 'number' ? `${specs.vcpu} vCPU` : null,
        typeof specs.ram_mb === 'number'
          ? `${specs.ram_mb >= 1024 ? `${specs.ram_mb / 1024} GB` : `${specs.ram_mb} MB`} RAM`
          : null,
        typeof specs.disk_gb === 'number' ? `${specs.disk_gb} GB disk` : null,
        typeof specs.bandwidth_tb === 'number' ? `${specs.bandwidth_tb} TB traffic` : null,
      ]
        .filter(Boolean)
        .join(' · ')
    : '';
  return (
    <section className="card" aria-labelledby="facts-h">
      <h2 id="facts-h">Details</h2>
      <dl className="facts">
        <dt>Type</dt>
        <dd>{typeName(service.type)}</dd>
        <dt>Plan</dt>
        <dd>
          {service.plan.name} <span className="muted">({service.plan.label})</span>
        </dd>
        {specText ? (
          <>
            <dt>Specs</dt>
            <dd>{specText}</dd>
          </>
        ) : null}
        <dt>Region</dt>
        <dd>{service.region.name}</dd>
        {service.ipv4 ? (
          <>
            <dt>IPv4 address</dt>
            <dd className="copy-line">
              <span className="mono">{service.ipv4}</span> <CopyButton text={service.ipv4} label="Copy IP" />
            </dd>
          </>
        ) : null}
        {service.hostname ? (
          <>
            <dt>Hostname</dt>
            <dd className="mono">{service.hostname}</dd>
          </>
        ) : null}
        {service.domain ? (
          <>
            <dt>Domain</dt>
            <dd className="mono">{service.domain}</dd>
          </>
        ) : null}
        {service.os ? (
          <>
            <dt>Operating system</dt>
            <dd>{service.os}</dd>
          </>
        ) : null}
        <dt>Created</dt>
        <dd>{when(service.created_at)}</dd>
        {service.activated_at ? (
          <>
            <dt>Active since</dt>
            <dd>{when(service.activated_at)}</dd>
          </>
        ) : null}
        <dt>Paid until</dt>
        <dd>
          {when(service.paid_until)} {service.overdue ? <span className="status status-bad">overdue</span> : null}
        </dd>
        <dt>Renewal price</dt>
        <dd>
          {rupees(service.price.monthly_with_gst)} a month
          {service.price.includes_gst ? null : <span className="muted"> (GST included)</span>}
        </dd>
      </dl>
    </section>
  );
}

/** Credentials: hidden until asked for; fetched then (no-store), never kept in the query cache. */
export function CredentialsCard({ service }: { service: Service }) {
  const [shown, setShown] = useState<Credentials | null>(null);
  const reveal = useMutation({
    mutationFn: async () => {
      const data = await unwrap(
        api.GET('/api/v1/client/services/', { params: { query: { id: service.id, action: 'credentials' } } }),
      );
      if (!('credentials' in data)) throw new Error('The server answered without credentials.');
      return data.credentials;
    },
    onSuccess: setShown,
  });
  return (
    <section className="card" aria-labelledby="cred-h">
      <h2 id="cred-h">Credentials</h2>
      {!shown ? (
        <>
          <p className="muted">Hidden. They are fetched when you reveal them and forgotten when you leave.</p>
          <Button
            variant="secondary"
            busy={reveal.isPending}
            disabled={service.status !== 'active' && service.status !== 'suspended'}
            onClick={() => reveal.mutate()}
          >
            Reveal credentials
          </Button>
        </>
      ) : (
        <>
          <dl className="facts cred">
            <dt>Username</dt>
            <dd className="copy-line">
              <span className="secret">{shown.username}</span>{' '}
              <CopyButton text={shown.username} label="Copy username" />
            </dd>
            {shown.password ? (
              <>
                <dt>Password</dt>
                <dd className="copy-line">
                  <span className="secret">{shown.password}</span>{' '}
                  <CopyButton text={shown.password} label="Copy password" />
                </dd>
              </>
            ) : null}
            {shown.ssh ? (
              <>
                <dt>SSH</dt>
                <dd className="copy-line">
                  <span className="secret">{shown.ssh}</span> <CopyButton text={shown.ssh} label="Copy command" />
                </dd>
              </>
            ) : null}
            {shown.url ? (
              <>
                <dt>Sign in at</dt>
                <dd>
                  <a href={shown.url} target="_blank" rel="noopener noreferrer">
                    {shown.url} <span className="sr-only">(opens in a new tab)</span>
                  </a>
                </dd>
              </>
            ) : null}
          </dl>
          {shown.note ? <p className="hint">{shown.note}</p> : null}
          <Button variant="secondary" onClick={() => setShown(null)}>
            Hide credentials
          </Button>
        </>
      )}
      {reveal.isError ? <ErrorAlert error={reveal.error} /> : null}
    </section>
  );
}

/** Sign-in to the service's own control panel (web: a one-time cPanel link; game: the game panel). */
export function SignOnCard({ service }: { service: Service }) {
  const [link, setLink] = useState<SignOn | null>(null);
  const name = service.type === 'web' ? 'cPanel' : 'the game panel';
  const sso = useMutation({
    mutationFn: async () => {
      const data = await unwrap(
        api.GET('/api/v1/client/services/', { params: { query: { id: service.id, action: 'sso' } } }),
      );
      if (!('sso' in data)) throw new Error('The server answered without a sign-in link.');
      return data.sso;
    },
    onSuccess: (data) => {
      setLink(data);
    },
  });
  return (
    <section className="card" aria-labelledby="sso-h">
      <h2 id="sso-h">Control panel</h2>
      <p className="muted">
        Sign in to {name} without typing a password. The link works once and only for a short time.
      </p>
      {link ? (
        <div className="stack">
          <a
            className="btn btn-primary"
            href={link.url}
            target="_blank"
            rel="noopener noreferrer"
            onClick={() => setTimeout(() => setLink(null), 500)}
          >
            Open {name} <span className="sr-only">(opens in a new tab)</span>↗
          </a>
          {link.username ? (
            <p>
              Sign in as <span className="mono">{link.username}</span>{' '}
              <CopyButton text={link.username} label="Copy username" />
            </p>
          ) : null}
          {link.note ? <p className="hint">{link.note}</p> : null}
          {link.expires_at ? <p className="hint">The link expires {when(link.expires_at)}.</p> : null}
        </div>
      ) : (
        <Button
          variant="secondary"
          busy={sso.isPending}
          disabled={service.status !== 'active'}
          onClick={() => sso.mutate()}
        >
          Get a sign-in link for {name}
        </Button>
      )}
      {sso.isError ? <ErrorAlert error={sso.error} /> : null}
    </section>
  );
}

function shortfallOf(error: unknown): string | null {
  if (!(error instanceof ApiError) || error.code !== 'insufficient_funds') return null;
  const s = error.details.shortfall;
  return typeof s === 'string' ? s : null;
}

/** Renew (paid from the wallet) and the termination request (staff review it). */
export function BillingCard({ service }: { service: Service }) {
  const client = useQueryClient();
  const [askTerminate, setAskTerminate] = useState(false);
  const [note, setNote] = useState('');
  const wallet = useQuery({
    queryKey: ['wallet'],
    queryFn: () => unwrap(api.GET('/api/v1/client/wallet/')),
    staleTime: 30_000,
  });
  const renew = useMutation({
    mutationFn: () => unwrap(api.POST('/api/v1/client/services/', { body: { id: service.id, action: 'renew' } })),
    onSuccess: () => {
      client.invalidateQueries({ queryKey: serviceKey(service.id) });
      client.invalidateQueries({ queryKey: ['wallet'] });
      client.invalidateQueries({ queryKey: ['services'] });
    },
  });
  const terminate = useMutation({
    mutationFn: () =>
      unwrap(
        api.POST('/api/v1/client/services/', {
          body: { id: service.id, action: 'request_terminate', ...(note.trim() ? { note } : {}) },
        }),
      ),
    onSuccess: () => {
      setAskTerminate(false);
      client.invalidateQueries({ queryKey: ['service-events', service.id] });
    },
  });
  const w = wallet.data && 'wallet' in wallet.data ? (wallet.data as { wallet: { balance: string } }).wallet : null;
  const unpaid =
    wallet.data && 'billing' in wallet.data
      ? (
          wallet.data as {
            billing: { unpaid: { orders: { service_id?: number | null; amount: string }[] } };
          }
        ).billing.unpaid.orders.filter((o) => o.service_id === service.id)
      : [];
  const owed = unpaid.reduce((sum, o) => sum + Number(o.amount), 0);
  const amount = owed > 0 ? owed : Number(service.price.monthly_with_gst);
  const short = w ? Math.max(0, amount - Number(w.balance)) : 0;
  const shortfall = shortfallOf(renew.error) ?? (short > 0 ? short.toFixed(2) : null);
  const walletLink = (n: string) =>
    `/wallet?amount=${encodeURIComponent(n)}&return=${encodeURIComponent(`/services/${service.id}`)}`;
  const renewable = service.status === 'active' || service.status === 'suspended';

  return (
    <>
      <section className="card" aria-labelledby="renew-h">
        <h2 id="renew-h">Renew</h2>
        <dl className="facts">
          <dt>Paid until</dt>
          <dd>
            {when(service.paid_until)} {service.overdue ? <span className="status status-bad">overdue</span> : null}
          </dd>
          <dt>{owed > 0 ? 'Unpaid renewal' : 'One more month'}</dt>
          <dd>
            <strong>{rupees(amount)}</strong>
            {owed > 0 ? <span className="muted"> (pays the unpaid renewal first)</span> : null}
          </dd>
          <dt>Wallet balance</dt>
          <dd>{w ? rupees(w.balance) : wallet.isError ? '—' : '…'}</dd>
        </dl>
        <div className="row renew-row">
          <Button busy={renew.isPending} disabled={!renewable} onClick={() => renew.mutate()}>
            Pay {rupees(amount)} from the wallet
          </Button>
          {shortfall ? (
            <Link className="btn btn-secondary" to={walletLink(shortfall)}>
              Add {rupees(shortfall)} to the wallet
            </Link>
          ) : null}
        </div>
        {!renewable ? <p className="hint">A service that is {service.status} cannot be renewed.</p> : null}
        {renew.isError ? <ErrorAlert error={renew.error} /> : null}
        {renew.isSuccess && 'paid_until' in renew.data ? (
          <Alert kind="success">
            <p>
              {renew.data.message} Paid until {day(renew.data.paid_until)}.
            </p>
          </Alert>
        ) : null}
      </section>

      <section className="card" aria-labelledby="term-h">
        <h2 id="term-h">Cancel the service</h2>
        <p>
          Ask us to terminate {service.label}. Staff review the request; once approved the server and its data are
          deleted for good.
        </p>
        {terminate.isSuccess ? (
          <Alert kind="success">
            <p>{terminate.data.message}</p>
          </Alert>
        ) : !askTerminate ? (
          <Button variant="danger" disabled={service.status === 'terminated'} onClick={() => setAskTerminate(true)}>
            Request termination…
          </Button>
        ) : (
          <TypedConfirm
            word={service.label}
            action="Send the termination request"
            busy={terminate.isPending}
            onConfirm={() => terminate.mutate()}
            onCancel={() => {
              setAskTerminate(false);
              terminate.reset();
            }}
          >
            <p>
              <strong>Everything on {service.label} will be deleted</strong> once staff approve. Unused paid time is not
              refunded automatically.
            </p>
            <TextArea
              label="Why are you leaving? (optional, for staff)"
              value={note}
              maxLength={1000}
              onChange={(e) => setNote(e.target.value)}
              error={fieldError(terminate.error, 'note')}
            />
          </TypedConfirm>
        )}
        {terminate.isError ? <ErrorAlert error={terminate.error} fields={['note']} /> : null}
      </section>
    </>
  );
}

/** The service's history: events, newest first, and the last job. */
export function ActivityCard({ service }: { service: Service }) {
  const events = useQuery({
    queryKey: ['service-events', service.id],
    queryFn: async () => {
      const data = await unwrap(
        api.GET('/api/v1/client/services/', { params: { query: { id: service.id, action: 'events' } } }),
      );
      return 'events' in data ? data.events : [];
    },
    refetchInterval: jobRunning(service.last_job) ? 5000 : 60_000,
  });
  const job = service.last_job;
  return (
    <section className="card" aria-labelledby="events-h">
      <h2 id="events-h">Activity</h2>
      {job ? (
        <p>
          Last job: <strong>{JOB_NAMES[job.type] ?? job.type}</strong> <Status value={job.status} />{' '}
          <span className="muted">
            {job.progress} %{job.step ? ` · ${stepWords(job.step)}` : ''} · {when(job.finished_at ?? job.created_at)}
          </span>
          {job.error ? <span className="field-error"> {job.error.message}</span> : null}
        </p>
      ) : null}
      {events.isPending ? <Loading what="Loading events" /> : null}
      {events.isError ? <ErrorAlert error={events.error} /> : null}
      {events.data && events.data.length === 0 ? <p className="muted">Nothing has happened yet.</p> : null}
      {events.data && events.data.length > 0 ? (
        <ol className="list events">
          {events.data.map((e) => (
            <li key={e.id}>
              <p className="event-msg">{e.message}</p>
              <p className="muted event-meta">
                <time dateTime={e.created_at} title={when(e.created_at)}>
                  {when(e.created_at)}
                </time>{' '}
                · {relative(e.created_at)} · <span className="mono">{e.kind}</span>
              </p>
            </li>
          ))}
        </ol>
      ) : null}
    </section>
  );
}

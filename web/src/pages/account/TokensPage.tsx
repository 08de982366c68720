// API tokens: the list (never a secret: the first characters only), creating one (name, scopes,
// optional expiry date and IPv4 allow-list) whose secret is shown this once with a copy button,
// revoking with a confirmation, and each token's latest calls (GET tokens/?id=&action=logs).

import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { type FormEvent, useEffect, useId, useRef, useState } from 'react';
import { useTitle } from '../../components/Layout.tsx';
import {
  Alert,
  Button,
  Checkbox,
  CopyButton,
  Empty,
  ErrorAlert,
  fieldError,
  Loading,
  PageHeader,
  Status,
  TextArea,
  TextField,
} from '../../components/ui.tsx';
import { api, unwrap } from '../../lib/api.ts';
import { viewerZone, when } from '../../lib/format.ts';
import { AccountTabs } from './AccountPage.tsx';
import '../dashboard/pages.css';

/** What the server accepts (POST tokens/ description), with what each grants (spec: token scopes). */
const SCOPES: { value: string; label: string; grants: string }[] = [
  { value: 'read', label: 'read', grants: 'See your services, orders and catalog (every GET route, and quotes).' },
  { value: 'billing.read', label: 'billing.read', grants: 'See your wallet, run-rate, unpaid orders and invoices.' },
  { value: 'orders.write', label: 'orders.write', grants: 'Order and deploy servers, paid from your wallet.' },
  {
    value: 'instances.write',
    label: 'instances.write',
    grants: 'Start, stop, reinstall and delete servers; open consoles.',
  },
  { value: '*', label: '* (full access)', grants: 'Everything above.' },
];
const MAX_TOKENS = 20;
const MAX_CIDRS = 16;
const LOG_LIMIT = 50;

const TOKENS_KEY = ['tokens', 'list'] as const;

async function fetchTokens() {
  const data = await unwrap(api.GET('/api/v1/client/tokens/'));
  if (!('tokens' in data)) throw new Error('The server answered with one token where a list was expected.');
  return data.tokens;
}

type Token = Awaited<ReturnType<typeof fetchTokens>>[number];

function isoDate(date: Date): string {
  const pad = (n: number) => String(n).padStart(2, '0');
  return `${date.getFullYear()}-${pad(date.getMonth() + 1)}-${pad(date.getDate())}`;
}

export default function TokensPage() {
  useTitle('API tokens');
  const tokens = useQuery({ queryKey: TOKENS_KEY, queryFn: fetchTokens });
  const [created, setCreated] = useState<{ name: string; secret: string } | null>(null);
  const [formOpen, setFormOpen] = useState<boolean | null>(null);
  const list = tokens.data ?? [];
  const live = list.filter((t) => t.status !== 'revoked');
  const revoked = list.filter((t) => t.status === 'revoked');
  // The form starts open when there is no token yet.
  const open = formOpen ?? (tokens.isSuccess && live.length === 0);

  return (
    <div className="acct">
      <PageHeader title="Account" />
      <AccountTabs />
      <p className="acct-intro">
        API tokens let scripts and tools use the <a href="/docs">Hostplane API</a> as you, sending{' '}
        <code>Authorization: Bearer svc_…</code>. Give each tool its own token with only the scopes it needs.
      </p>

      {created ? <NewSecret created={created} onDone={() => setCreated(null)} /> : null}

      <section className="card" aria-labelledby="tok-create">
        <div className="card-head">
          <h2 id="tok-create">Create a token</h2>
          {open ? null : (
            <Button variant="secondary" onClick={() => setFormOpen(true)} disabled={live.length >= MAX_TOKENS}>
              New token
            </Button>
          )}
        </div>
        {live.length >= MAX_TOKENS ? (
          <p className="hint">You hold {MAX_TOKENS} tokens, the most an account may: revoke one to create another.</p>
        ) : null}
        {open ? (
          <CreateForm
            onCreated={(name, secret) => {
              setCreated({ name, secret });
              setFormOpen(false);
            }}
            onCancel={live.length > 0 ? () => setFormOpen(false) : undefined}
          />
        ) : null}
      </section>

      <section className="card" aria-labelledby="tok-list">
        <div className="card-head">
          <h2 id="tok-list">Your tokens</h2>
          {tokens.data ? (
            <span className="muted">
              {live.length} of {MAX_TOKENS} in use
            </span>
          ) : null}
        </div>
        {tokens.isPending ? <Loading what="Loading your tokens" /> : null}
        {tokens.isError ? <ErrorAlert error={tokens.error} /> : null}
        {tokens.data && live.length === 0 ? (
          <Empty title="No API tokens yet">
            <p>Create one above to use the API from a script, a CI job or the command-line tool.</p>
          </Empty>
        ) : null}
        {live.length > 0 ? (
          <ul className="list tok-list">
            {live.map((token) => (
              <TokenItem key={token.id} token={token} />
            ))}
          </ul>
        ) : null}
        {revoked.length > 0 ? (
          <details className="tok-revoked">
            <summary>Revoked tokens ({revoked.length})</summary>
            <ul className="list tok-list">
              {revoked.map((token) => (
                <TokenItem key={token.id} token={token} />
              ))}
            </ul>
          </details>
        ) : null}
      </section>
    </div>
  );
}

function NewSecret({ created, onDone }: { created: { name: string; secret: string }; onDone: () => void }) {
  const ref = useRef<HTMLElement>(null);
  useEffect(() => ref.current?.focus(), []);
  return (
    <section className="card tok-secret" ref={ref} tabIndex={-1} aria-labelledby="tok-secret-title">
      <h2 id="tok-secret-title">Copy your new token “{created.name}” now</h2>
      <Alert kind="warning">
        <p>
          <strong>This is the only time the secret is shown.</strong> We keep only a hash of it, so it cannot be shown
          again. Store it in a password manager or your tool's secret store; if you lose it, revoke the token and create
          another.
        </p>
      </Alert>
      <p className="muted tok-secret-label">Token secret</p>
      <p className="secret">{created.secret}</p>
      <div className="row">
        <CopyButton text={created.secret} label="Copy token" />
        <Button variant="ghost" onClick={onDone}>
          I have stored it: hide it
        </Button>
      </div>
    </section>
  );
}

function CreateForm({
  onCreated,
  onCancel,
}: {
  onCreated: (name: string, secret: string) => void;
  onCancel: (() => void) | undefined;
}) {
  const client = useQueryClient();
  const scopesId = useId();
  const [name, setName] = useState('');
  const [scopes, setScopes] = useState<string[]>(['read']);
  const [expires, setExpires] = useState('');
  const [cidrs, setCidrs] = useState('');
  const today = new Date();
  const min = isoDate(new Date(today.getTime() + 86_400_000));
  const max = isoDate(new Date(today.getTime() + 730 * 86_400_000));

  const create = useMutation({
    mutationFn: () => {
      const allowed = cidrs
        .split(/[\s,]+/)
        .map((c) => c.trim())
        .filter(Boolean);
      return unwrap(
        api.POST('/api/v1/client/tokens/', {
          body: {
            action: 'create',
            name: name.trim(),
            scopes,
            // The end of the chosen day, in the viewer's own zone.
            expires_at: expires ? new Date(`${expires}T23:59:59`).toISOString() : null,
            allowed_cidrs: allowed,
          },
        }),
      );
    },
    onSuccess: async (data) => {
      if ('secret' in data) onCreated(data.token.name, data.secret);
      setName('');
      setScopes(['read']);
      setExpires('');
      setCidrs('');
      await client.invalidateQueries({ queryKey: ['tokens'] });
    },
  });
  const toggle = (value: string, on: boolean) =>
    setScopes((current) => (on ? [...current, value] : current.filter((s) => s !== value)));
  const submit = (event: FormEvent) => {
    event.preventDefault();
    create.mutate();
  };
  const scopeError = fieldError(create.error, 'scopes');
  return (
    <form onSubmit={submit} noValidate className="tok-form">
      <TextField
        label="Name"
        value={name}
        onChange={(e) => setName(e.target.value)}
        maxLength={64}
        required
        autoComplete="off"
        placeholder="e.g. deploy script"
        hint="1–64 characters, to recognise it later."
        error={fieldError(create.error, 'name')}
      />
      <fieldset
        className={`tok-scopes${scopeError ? ' has-error' : ''}`}
        aria-describedby={scopeError ? `${scopesId}-error` : undefined}
      >
        <legend>Scopes</legend>
        {SCOPES.map((scope) => (
          <div key={scope.value} className="tok-scope">
            <Checkbox
              label={scope.label}
              checked={scopes.includes(scope.value)}
              onChange={(e) => toggle(scope.value, e.target.checked)}
            />
            <p className="hint">{scope.grants}</p>
          </div>
        ))}
        {scopeError ? (
          <p className="field-error" id={`${scopesId}-error`}>
            {scopeError}
          </p>
        ) : null}
      </fieldset>
      <TextField
        label="Expires on (optional)"
        type="date"
        value={expires}
        min={min}
        max={max}
        onChange={(e) => setExpires(e.target.value)}
        hint={`The token stops working at the end of that day (${viewerZone()}), at most two years ahead. Leave empty for no expiry.`}
        error={fieldError(create.error, 'expires_at')}
      />
      <TextArea
        label="Allowed IPv4 addresses (optional)"
        value={cidrs}
        onChange={(e) => setCidrs(e.target.value)}
        rows={3}
        spellCheck={false}
        autoComplete="off"
        placeholder={'203.0.113.7\n198.51.100.0/24'}
        hint={`One address or CIDR per line, up to ${MAX_CIDRS}. Calls from anywhere else are refused. Leave empty to allow any address.`}
        error={fieldError(create.error, 'allowed_cidrs')}
      />
      <ErrorAlert error={create.error} fields={['name', 'scopes', 'expires_at', 'allowed_cidrs']} />
      <div className="row">
        <Button type="submit" busy={create.isPending}>
          Create token
        </Button>
        {onCancel ? (
          <Button variant="secondary" onClick={onCancel}>
            Cancel
          </Button>
        ) : null}
      </div>
    </form>
  );
}

function TokenItem({ token }: { token: Token }) {
  const client = useQueryClient();
  const [confirming, setConfirming] = useState(false);
  const [logOpen, setLogOpen] = useState(false);
  const revoke = useMutation({
    mutationFn: () => unwrap(api.POST('/api/v1/client/tokens/', { body: { action: 'revoke', id: token.id } })),
    onSuccess: async () => {
      setConfirming(false);
      await client.invalidateQueries({ queryKey: ['tokens'] });
    },
  });
  const active = token.status === 'active';
  const logId = `tok-log-${token.id}`;
  return (
    <li className={`tok-item${active ? '' : ' tok-inactive'}`}>
      <div className="tok-head">
        <div className="tok-title">
          <strong>{token.name}</strong> <Status value={token.status} />
        </div>
        <div className="row">
          <Button
            variant="secondary"
            aria-expanded={logOpen}
            aria-controls={logId}
            onClick={() => setLogOpen(!logOpen)}
          >
            {logOpen ? 'Hide request log' : 'Request log'}
          </Button>
          {token.status !== 'revoked' && !confirming ? (
            <Button variant="danger" onClick={() => setConfirming(true)}>
              Revoke
            </Button>
          ) : null}
        </div>
      </div>
      <dl className="facts tok-facts">
        <dt>Token</dt>
        <dd className="mono">{token.hint}</dd>
        <dt>Scopes</dt>
        <dd>
          <ul className="chips">
            {token.scopes.map((scope) => (
              <li key={scope} className="chip mono">
                {scope}
              </li>
            ))}
          </ul>
        </dd>
        <dt>Created</dt>
        <dd>{when(token.created_at)}</dd>
        <dt>Last used</dt>
        <dd>
          {token.last_used_at ? (
            <>
              {when(token.last_used_at)}
              {token.last_used_ip ? (
                <>
                  {' '}
                  from <span className="mono">{token.last_used_ip}</span>
                </>
              ) : null}
            </>
          ) : (
            'Never'
          )}
        </dd>
        <dt>{token.status === 'expired' ? 'Expired' : 'Expires'}</dt>
        <dd>{token.expires_at ? when(token.expires_at) : 'Never'}</dd>
        <dt>Allowed from</dt>
        <dd>
          {token.allowed_cidrs.length === 0 ? (
            'Any address'
          ) : (
            <ul className="chips">
              {token.allowed_cidrs.map((cidr) => (
                <li key={cidr} className="chip mono">
                  {cidr}
                </li>
              ))}
            </ul>
          )}
        </dd>
        {token.revoked_at ? (
          <>
            <dt>Revoked</dt>
            <dd>{when(token.revoked_at)}</dd>
          </>
        ) : null}
      </dl>
      {confirming ? (
        <fieldset className="confirm">
          <legend className="sr-only">Revoke {token.name}</legend>
          <p>
            Revoke <strong>{token.name}</strong>? Anything using it is refused from its next request. This cannot be
            undone.
          </p>
          <ErrorAlert error={revoke.error} />
          <div className="row">
            <Button variant="danger" busy={revoke.isPending} onClick={() => revoke.mutate()}>
              Revoke token
            </Button>
            <Button variant="secondary" onClick={() => setConfirming(false)}>
              Cancel
            </Button>
          </div>
        </fieldset>
      ) : null}
      <div id={logId}>{logOpen ? <RequestLog token={token} /> : null}</div>
    </li>
  );
}

function RequestLog({ token }: { token: Token }) {
  const log = useQuery({
    queryKey: ['tokens', 'logs', token.id],
    queryFn: async () => {
      const data = await unwrap(
        api.GET('/api/v1/client/tokens/', { params: { query: { id: token.id, action: 'logs', limit: LOG_LIMIT } } }),
      );
      // Calls have no id: their position in this answer (newest first) names them.
      return 'calls' in data ? data.calls.map((call, position) => ({ ...call, position })) : [];
    },
  });
  return (
    <div className="tok-log">
      <div className="card-head">
        <h3>Latest calls with {token.name}</h3>
        <Button variant="ghost" busy={log.isFetching} onClick={() => log.refetch()}>
          Refresh
        </Button>
      </div>
      {log.isPending ? <Loading what="Loading the request log" /> : null}
      {log.isError ? <ErrorAlert error={log.error} /> : null}
      {log.data && log.data.length === 0 ? <p className="muted">No calls have been made with this token yet.</p> : null}
      {log.data && log.data.length > 0 ? (
        // biome-ignore lint/a11y/noNoninteractiveTabindex: the table is wider than a phone and scrolls sideways; a keyboard user reaches it (then arrow keys scroll it) only when it takes focus
        <section className="table-wrap" tabIndex={0} aria-label={`Latest calls with ${token.name}`}>
          <table>
            <caption className="sr-only">
              The latest {log.data.length} calls made with {token.name}, newest first
            </caption>
            <thead>
              <tr>
                <th scope="col">Time</th>
                <th scope="col">Request</th>
                <th scope="col" className="num">
                  Status
                </th>
                <th scope="col">From</th>
                <th scope="col" className="num">
                  Took
                </th>
              </tr>
            </thead>
            <tbody>
              {log.data.map((call) => (
                <tr key={call.position}>
                  <td className="nowrap">{when(call.at)}</td>
                  <td className="mono tok-path">
                    {call.method} {call.path}
                  </td>
                  <td className={`num ${call.status >= 400 ? 'tok-fail' : ''}`}>
                    {call.status}
                    {call.status >= 400 ? <span className="sr-only"> (refused)</span> : null}
                  </td>
                  <td className="mono">{call.ip ?? '—'}</td>
                  <td className="num nowrap">{Math.round(call.duration_ms)} ms</td>
                </tr>
              ))}
            </tbody>
          </table>
        </section>
      ) : null}
      {log.data && log.data.length >= LOG_LIMIT ? (
        <p className="hint">The latest {LOG_LIMIT} calls are shown.</p>
      ) : null}
    </div>
  );
}

// The order form of one product type: its plans as cards (the chosen one kept in ?plan= so a
// reload or the back button keeps it), every region with its availability (a region that cannot
// take the order is shown disabled with the reason), the options the type's order takes, and the
// price charged before the button. The idempotency key lives as long as the form: a double click,
// or a retry after a lost answer, replays the first order instead of placing a second one.

import type { paths } from '@hostplane/sdk/schema';
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { type FormEvent, type ReactNode, useEffect, useId, useMemo, useRef, useState } from 'react';
import { Link, useNavigate, useSearchParams } from 'react-router';
import {
  Alert,
  Button,
  ErrorAlert,
  fieldError,
  Loading,
  PageHeader,
  SelectField,
  TextField,
} from '../../components/ui.tsx';
import { ApiError, api, unwrap } from '../../lib/api.ts';
import { rupees } from '../../lib/format.ts';
import {
  CATALOG_KEY,
  type Catalog,
  gameOf,
  humanize,
  newIdempotencyKey,
  type Plan,
  reasonText,
  regionsFor,
  specLines,
  typeInfo,
} from './catalog.ts';
import { USER_DATA_MAX_BYTES, UserDataField, userDataBytes } from './UserDataField.tsx';

type OrderBody = paths['/api/v1/client/orders/']['post']['requestBody']['content']['application/json'];
type Placed = Awaited<ReturnType<typeof placeOrder>>;

function placeOrder(body: OrderBody) {
  return unwrap(api.POST('/api/v1/client/orders/', { body }));
}

/** The field names errors come back under (the session surface nests config keys). */
const FIELDS = [
  'plan_id',
  'config.region',
  'config.os',
  'config.hostname',
  'config.server_name',
  'config.ssh_keys',
  'config.eula',
  'config.user_data',
  'domain',
] as const;
type Field = (typeof FIELDS)[number];

/** `unavailable:<reason>` (409) belongs beside the field the reason is about. */
const UNAVAILABLE_FIELD: Record<string, Field> = {
  region_closed: 'config.region',
  no_capacity: 'config.region',
  no_ipv4: 'config.region',
  not_sold_here: 'config.region',
  plan_inactive: 'plan_id',
  no_os: 'config.os',
};

const DEFAULT_OS = 'ubuntu-24.04';

/** What a field is called when the server's reason ("is already hosted here") becomes a sentence. */
const SUBJECT: Record<Field, string> = {
  plan_id: 'This plan',
  'config.region': 'The region',
  'config.os': 'The operating system',
  'config.hostname': 'The hostname',
  'config.server_name': 'The server name',
  'config.ssh_keys': 'The SSH key list',
  'config.eula': 'The licence',
  'config.user_data': 'The cloud-init user data',
  domain: 'The domain',
};

/** "is already hosted here" → "The domain is already hosted here."; a full sentence stays as it is. */
function sentence(field: Field, reason: string | undefined): string | undefined {
  if (!reason) return reason;
  const first = reason.charAt(0);
  if (first !== first.toLowerCase() || first === first.toUpperCase()) {
    // Starts with a capital (or "[0]: …"): already a sentence, or a list position.
    return /^\[/.test(reason) ? `${SUBJECT[field]} ${reason}` : reason;
  }
  return `${SUBJECT[field]} ${reason}${/[.!?]$/.test(reason) ? '' : '.'}`;
}

function useWalletBalance() {
  return useQuery({
    queryKey: ['wallet', 'balance'],
    queryFn: async () =>
      (await unwrap(api.GET('/api/v1/client/wallet/', { params: { query: { per_page: 1 } } }))).wallet,
    staleTime: 15_000,
  });
}

export function OrderForm({ type, catalog }: { type: string; catalog: Catalog }) {
  const info = typeInfo(type);
  const navigate = useNavigate();
  const client = useQueryClient();
  const formRef = useRef<HTMLFormElement>(null);
  const [search, setSearch] = useSearchParams();
  const plans = useMemo(() => catalog.plans.filter((p) => p.type === type), [catalog.plans, type]);
  // The plan is the form's state (a radio answers at once); the address follows it.
  const [planId, setPlanId] = useState<number | null>(() => Number(search.get('plan')) || null);
  const plan = plans.find((p) => p.id === planId) ?? null;
  useEffect(() => {
    const want = planId === null ? null : String(planId);
    if (search.get('plan') === want) return;
    const params = new URLSearchParams(search);
    if (want === null) params.delete('plan');
    else params.set('plan', want);
    setSearch(params, { replace: true });
  }, [planId, search, setSearch]);

  const games = useMemo(() => {
    const slugs = [...new Set(plans.map(gameOf).filter((g): g is string => g !== null))];
    return slugs.map((slug) => ({ slug, name: catalog.games.find((g) => g.slug === slug)?.name ?? humanize(slug) }));
  }, [plans, catalog.games]);
  const [game, setGame] = useState<string>(() => (plan ? (gameOf(plan) ?? '') : ''));
  const shown = game ? plans.filter((p) => gameOf(p) === game) : plans;

  const [idempotencyKey] = useState(newIdempotencyKey);
  const [region, setRegion] = useState('');
  const [os, setOs] = useState(() =>
    catalog.os.some((o) => o.slug === DEFAULT_OS) ? DEFAULT_OS : (catalog.os[0]?.slug ?? ''),
  );
  const [hostname, setHostname] = useState('');
  const [serverName, setServerName] = useState('');
  const [domain, setDomain] = useState('');
  const [eula, setEula] = useState(false);
  const [keys, setKeys] = useState<number[]>([]);
  const [userData, setUserData] = useState('');
  const [local, setLocal] = useState<Partial<Record<Field, string>>>({});

  const wallet = useWalletBalance();
  const sshKeys = useQuery({
    queryKey: ['ssh-keys'],
    queryFn: async () => (await unwrap(api.GET('/api/v1/client/ssh-keys/'))).ssh_keys,
    enabled: info.sshKeys,
  });

  const regions = plan ? regionsFor(plan, catalog.regions) : [];
  // The chosen region stays while the plan sells there; otherwise the plan's first open one.
  const regionOk = regions.some((r) => r.code === region && r.available);
  const firstOpen = regions.find((r) => r.available)?.code ?? '';
  useEffect(() => {
    if (plan && !regionOk && firstOpen) setRegion(firstOpen);
  }, [plan, regionOk, firstOpen]);

  const order = useMutation({
    mutationFn: placeOrder,
    onSuccess: (placed: Placed) => {
      for (const key of [['wallet'], ['services'], ['orders'], CATALOG_KEY])
        void client.invalidateQueries({ queryKey: key });
      if (placed.service?.id) navigate(`/services/${placed.service.id}`);
    },
    onError: (error) => {
      if (error instanceof ApiError && error.code.startsWith('unavailable:')) {
        void client.invalidateQueries({ queryKey: CATALOG_KEY });
      }
      void client.invalidateQueries({ queryKey: ['wallet'] });
    },
  });

  // After a refused attempt (here or by the server), take the keyboard to the first field named.
  const [attempt, setAttempt] = useState(0);
  // biome-ignore lint/correctness/useExhaustiveDependencies: runs after each attempt and each answer
  useEffect(() => {
    if (attempt === 0) return;
    formRef.current?.querySelector<HTMLElement>('[aria-invalid="true"]')?.focus();
  }, [attempt, order.error]);

  const error = order.error;
  const funds = error instanceof ApiError && error.code === 'insufficient_funds' ? error : null;
  const unavailableField =
    error instanceof ApiError && error.code.startsWith('unavailable:')
      ? UNAVAILABLE_FIELD[error.code.slice('unavailable:'.length)]
      : undefined;
  const errorOf = (name: Field): string | undefined =>
    local[name] ??
    sentence(name, fieldError(error, name)) ??
    (unavailableField === name ? (error as ApiError).message : undefined);
  const namedFields = error instanceof ApiError ? Object.keys(error.errors) : [];
  const allBeside =
    error instanceof ApiError &&
    (namedFields.length > 0 || unavailableField !== undefined) &&
    namedFields.every((f) => (FIELDS as readonly string[]).includes(f));

  const choosePlan = (next: Plan) => {
    order.reset();
    setLocal({});
    setPlanId(next.id);
  };

  const submit = (event: FormEvent) => {
    event.preventDefault();
    if (!plan || order.isPending) return;
    setAttempt((n) => n + 1);
    const problems: Partial<Record<Field, string>> = {};
    if (!regionOk) problems['config.region'] = 'Choose a region where this plan is available.';
    if (info.domain && domain.trim() === '') problems.domain = 'Enter the domain your website will use.';
    if (info.eula && !eula) problems['config.eula'] = 'Accept the licence to order a game server.';
    if (info.userData && userDataBytes(userData) > USER_DATA_MAX_BYTES)
      problems['config.user_data'] = 'The cloud-init user data is over 64 KiB; shorten it.';
    setLocal(problems);
    if (Object.keys(problems).length > 0) {
      order.reset();
      return;
    }
    const config: Record<string, string | boolean | string[]> = { region };
    if (serverName.trim()) config.server_name = serverName.trim();
    if (info.hostname && hostname.trim()) config.hostname = hostname.trim();
    if (info.os && os) config.os = os;
    if (info.sshKeys && keys.length > 0) {
      config.ssh_keys = (sshKeys.data ?? []).filter((k) => keys.includes(k.id)).map((k) => k.public_key);
    }
    if (info.eula) config.eula = eula;
    if (info.userData && userData.trim() !== '') config.user_data = userData;
    order.mutate({
      plan_id: plan.id,
      config,
      ...(info.domain ? { domain: domain.trim() } : {}),
      idempotency_key: idempotencyKey,
    });
  };

  const placed = order.data && !order.data.service?.id ? order.data : null;
  const title = `Order ${info.noun}`;

  return (
    <>
      <p className="back-link">
        <Link to="/order">← Everything you can order</Link>
      </p>
      <PageHeader title={title} />
      {info.blurb ? <p className="muted">{info.blurb}</p> : null}

      {placed ? (
        <Alert kind="success">
          <p>{placed.message}</p>
          <p>
            Order <span className="mono">{placed.order.public_id}</span>: {rupees(placed.order.amount)},{' '}
            {placed.order.status}. <Link to="/services">Go to your services</Link>
          </p>
        </Alert>
      ) : null}

      <form ref={formRef} className="order-layout" onSubmit={submit} noValidate>
        <div className="order-main">
          <fieldset className="order-section">
            <legend>
              <h2>1. Choose a plan</h2>
            </legend>
            {games.length > 1 ? (
              <div className="game-filter">
                <SelectField
                  label="Game"
                  value={game}
                  onChange={(e) => {
                    const next = e.target.value;
                    setGame(next);
                    if (plan && next && gameOf(plan) !== next) setPlanId(null);
                  }}
                >
                  <option value="">All games ({plans.length} plans)</option>
                  {games.map((g) => (
                    <option key={g.slug} value={g.slug}>
                      {g.name} ({plans.filter((p) => gameOf(p) === g.slug).length})
                    </option>
                  ))}
                </SelectField>
              </div>
            ) : null}
            <FieldMessage error={errorOf('plan_id')} />
            <div className="plan-grid">
              {shown.map((p) => (
                <PlanCard
                  key={p.id}
                  plan={p}
                  games={catalog.games}
                  checked={plan?.id === p.id}
                  onChoose={() => choosePlan(p)}
                />
              ))}
            </div>
          </fieldset>

          {plan ? (
            <fieldset className="order-section">
              <legend>
                <h2>2. Set it up</h2>
              </legend>
              <div className="card config-card">
                <RegionPicker
                  regions={regions}
                  value={region}
                  onChange={(code) => {
                    setRegion(code);
                    setLocal(({ 'config.region': _, ...rest }) => rest);
                  }}
                  error={errorOf('config.region')}
                />

                {info.domain ? (
                  <TextField
                    label="Domain"
                    name="domain"
                    value={domain}
                    onChange={(e) => setDomain(e.target.value)}
                    placeholder="example-shop.in"
                    autoComplete="off"
                    autoCapitalize="none"
                    spellCheck={false}
                    inputMode="url"
                    required
                    hint="The domain your website is served on, without www. You point its DNS to us after ordering."
                    error={errorOf('domain')}
                  />
                ) : null}

                {info.os ? (
                  <SelectField
                    label="Operating system"
                    name="os"
                    value={os}
                    onChange={(e) => setOs(e.target.value)}
                    error={errorOf('config.os')}
                  >
                    {catalog.os.map((o) => (
                      <option key={o.slug} value={o.slug}>
                        {o.name}
                      </option>
                    ))}
                  </SelectField>
                ) : null}

                {info.hostname ? (
                  <TextField
                    label="Hostname (optional)"
                    name="hostname"
                    value={hostname}
                    onChange={(e) => setHostname(e.target.value)}
                    placeholder="web1.example-shop.in"
                    autoComplete="off"
                    autoCapitalize="none"
                    spellCheck={false}
                    hint="The server's own name. Left empty, it is the server name below."
                    error={errorOf('config.hostname')}
                  />
                ) : null}

                <TextField
                  label="Server name (optional)"
                  name="server_name"
                  value={serverName}
                  onChange={(e) => setServerName(e.target.value)}
                  placeholder={info.domain ? 'my-shop' : type === 'game' ? 'friends-smp' : 'web1'}
                  autoComplete="off"
                  autoCapitalize="none"
                  spellCheck={false}
                  maxLength={63}
                  hint={
                    info.hostname
                      ? 'How it is listed in the panel: lowercase letters, digits and hyphens. Left empty, it is the first part of the hostname (or made up, when that is empty too).'
                      : info.domain
                        ? 'How it is listed in the panel: lowercase letters, digits and hyphens. Left empty, it is made from the domain.'
                        : 'How it is listed in the panel: lowercase letters, digits and hyphens. Left empty, one is made up.'
                  }
                  error={errorOf('config.server_name')}
                />

                {info.sshKeys ? (
                  <SshKeyPicker
                    state={sshKeys}
                    chosen={keys}
                    onToggle={(id) => setKeys((now) => (now.includes(id) ? now.filter((k) => k !== id) : [...now, id]))}
                    error={errorOf('config.ssh_keys')}
                  />
                ) : null}

                {info.userData ? (
                  <UserDataField value={userData} onChange={setUserData} error={errorOf('config.user_data')} />
                ) : null}

                {info.eula ? (
                  <EulaBox
                    checked={eula}
                    onChange={(value) => {
                      setEula(value);
                      if (value) setLocal(({ 'config.eula': _, ...rest }) => rest);
                    }}
                    minecraft={(gameOf(plan) ?? '').startsWith('minecraft')}
                    error={errorOf('config.eula')}
                  />
                ) : null}
              </div>
            </fieldset>
          ) : null}
        </div>

        <aside className="order-summary card" aria-label="Order summary">
          <h2>Summary</h2>
          {plan ? (
            <Summary
              plan={plan}
              regionName={regions.find((r) => r.code === region)?.name ?? '—'}
              balance={wallet.data?.balance ?? null}
              type={type}
              warn={!funds}
            />
          ) : (
            <p className="muted">Choose a plan to see the price.</p>
          )}
          {plan && !plan.available ? (
            <Alert kind="warning">
              <p>This plan is sold out right now. Choose another plan, or check back later.</p>
            </Alert>
          ) : null}
          {funds ? <FundsAlert error={funds} type={type} /> : null}
          {error && !funds ? (
            allBeside ? (
              <Alert kind="error">
                <p>
                  {namedFields.length + (unavailableField ? 1 : 0) > 1
                    ? 'Some details need a change'
                    : 'One detail needs a change'}
                  : see the marked {namedFields.length + (unavailableField ? 1 : 0) > 1 ? 'fields' : 'field'}.
                </p>
              </Alert>
            ) : (
              <ErrorAlert error={error} fields={[...FIELDS]} />
            )
          ) : null}
          {Object.keys(local).length > 0 && !error ? (
            <Alert kind="error">
              <p>Fill in the marked {Object.keys(local).length > 1 ? 'fields' : 'field'} first.</p>
            </Alert>
          ) : null}
          <Button type="submit" busy={order.isPending} disabled={!plan?.available}>
            {order.isPending
              ? 'Placing your order…'
              : plan
                ? `Pay ${rupees(plan.price.monthly_with_gst)} from your wallet`
                : 'Choose a plan first'}
          </Button>
          {plan ? <p className="hint">Provisioning starts as soon as the payment goes through.</p> : null}
        </aside>
      </form>
    </>
  );
}

function FieldMessage({ error }: { error: string | undefined }) {
  return error ? <p className="field-error">{error}</p> : null;
}

function PlanCard({
  plan,
  games,
  checked,
  onChoose,
}: {
  plan: Plan;
  games: Catalog['games'];
  checked: boolean;
  onChoose: () => void;
}) {
  const id = useId();
  const open = plan.regions.filter((r) => r.available);
  return (
    <div className={`plan-card${checked ? ' chosen' : ''}${plan.available ? '' : ' unavailable'}`}>
      <input
        type="radio"
        name="plan"
        id={id}
        value={plan.id}
        checked={checked}
        disabled={!plan.available}
        onChange={onChoose}
        aria-describedby={`${id}-specs ${id}-where`}
      />
      <label htmlFor={id}>
        <span className="plan-name">{plan.name}</span>
        <span className="plan-price">
          <strong>{rupees(plan.price.monthly)}</strong>{' '}
          <span className="muted">{plan.price.includes_gst ? '/ month' : '+ GST / month'}</span>
        </span>
      </label>
      <ul className="plan-specs" id={`${id}-specs`}>
        {specLines(plan, games).map((line) => (
          <li key={line}>{line}</li>
        ))}
      </ul>
      <p className="plan-where" id={`${id}-where`}>
        {plan.available ? (
          <span className="muted">{open.map((r) => r.name).join(' · ')}</span>
        ) : (
          <span className="status status-off">Sold out right now</span>
        )}
      </p>
      {checked ? (
        <p className="plan-chosen" aria-hidden="true">
          ✓ Chosen
        </p>
      ) : null}
    </div>
  );
}

function RegionPicker({
  regions,
  value,
  onChange,
  error,
}: {
  regions: ReturnType<typeof regionsFor>;
  value: string;
  onChange: (code: string) => void;
  error: string | undefined;
}) {
  const id = useId();
  return (
    <fieldset
      className={`field region-field${error ? ' has-error' : ''}`}
      aria-describedby={error ? `${id}-error` : undefined}
    >
      <legend>Region</legend>
      <div className="region-grid">
        {regions.map((r) => (
          <div key={r.code} className={`region-option${r.available ? '' : ' unavailable'}`}>
            <input
              type="radio"
              name="region"
              id={`${id}-${r.code}`}
              value={r.code}
              checked={value === r.code && r.available}
              disabled={!r.available}
              onChange={() => onChange(r.code)}
              aria-invalid={error && value === r.code ? true : undefined}
            />
            <label htmlFor={`${id}-${r.code}`}>
              <span className="region-name">{r.name}</span>
              <span className="muted">{r.city}</span>
              {r.available ? null : <span className="region-reason">⊘ {reasonText(r.reason)}</span>}
            </label>
          </div>
        ))}
      </div>
      {error ? (
        <p className="field-error" id={`${id}-error`}>
          {error}
        </p>
      ) : null}
    </fieldset>
  );
}

function SshKeyPicker({
  state,
  chosen,
  onToggle,
  error,
}: {
  state: {
    isPending: boolean;
    isError: boolean;
    data: { id: number; name: string; type: string; fingerprint: string }[] | undefined;
  };
  chosen: number[];
  onToggle: (id: number) => void;
  error: string | undefined;
}) {
  const id = useId();
  let body: ReactNode;
  if (state.isPending) body = <Loading what="Loading your SSH keys" />;
  else if (state.isError)
    body = <p className="muted">Your SSH keys could not be loaded. You can order without them.</p>;
  else if (!state.data || state.data.length === 0)
    body = (
      <p className="muted">
        You have no saved SSH keys. <Link to="/ssh-keys">Add a key</Link>, or order without one and sign in with the
        root password shown on the server's page.
      </p>
    );
  else
    body = (
      <ul className="key-list">
        {state.data.map((k) => (
          <li key={k.id} className="checkbox">
            <input
              type="checkbox"
              id={`${id}-${k.id}`}
              checked={chosen.includes(k.id)}
              onChange={() => onToggle(k.id)}
              disabled={!chosen.includes(k.id) && chosen.length >= 10}
            />
            <label htmlFor={`${id}-${k.id}`}>
              {k.name} <span className="muted mono key-print">{k.fingerprint}</span>
            </label>
          </li>
        ))}
      </ul>
    );
  return (
    <fieldset className={`field${error ? ' has-error' : ''}`}>
      <legend>SSH keys (optional)</legend>
      <p className="hint">The keys you tick can sign in as root. Up to 10.</p>
      {body}
      {error ? <p className="field-error">{error}</p> : null}
    </fieldset>
  );
}

function EulaBox({
  checked,
  onChange,
  minecraft,
  error,
}: {
  checked: boolean;
  onChange: (value: boolean) => void;
  minecraft: boolean;
  error: string | undefined;
}) {
  const id = useId();
  return (
    <div className={`field${error ? ' has-error' : ''}`}>
      <div className="checkbox">
        <input
          type="checkbox"
          id={id}
          checked={checked}
          onChange={(e) => onChange(e.target.checked)}
          aria-invalid={error ? true : undefined}
          aria-describedby={error ? `${id}-error` : undefined}
          required
        />
        <label htmlFor={id}>
          {minecraft ? 'I accept the Minecraft End User Licence Agreement' : "I accept the game's licence terms"}
        </label>
      </div>
      {minecraft ? (
        <p className="hint">
          <a href="https://www.minecraft.net/eula" target="_blank" rel="noreferrer noopener">
            Read the Minecraft EULA
          </a>{' '}
          (opens in a new tab).
        </p>
      ) : null}
      {error ? (
        <p className="field-error" id={`${id}-error`}>
          {error}
        </p>
      ) : null}
    </div>
  );
}

/** Whole rupees that cover `amount` ("120.50" → 121). */
function wholeRupees(amount: string | number): number {
  const n = Number(amount);
  return Number.isFinite(n) ? Math.max(1, Math.ceil(n - 1e-9)) : 1;
}

function topUpHref(shortfall: string | number, type: string): string {
  return `/wallet?amount=${wholeRupees(shortfall)}&return=/order/${encodeURIComponent(type)}`;
}

function Summary({
  plan,
  regionName,
  balance,
  type,
  warn,
}: {
  plan: Plan;
  regionName: string;
  balance: string | null;
  type: string;
  warn: boolean;
}) {
  // What the wallet is charged: the price, plus 18 % GST when prices are quoted before it.
  const charged = plan.price.monthly_with_gst;
  const price = Number(charged);
  const short = balance !== null && Number(balance) < price ? price - Number(balance) : 0;
  return (
    <>
      <dl className="facts">
        <dt>Plan</dt>
        <dd>{plan.name}</dd>
        <dt>Region</dt>
        <dd>{regionName}</dd>
        <dt>Charged now</dt>
        <dd>
          <strong>{rupees(charged)}</strong> for the first month
          {plan.price.includes_gst ? null : (
            <span className="muted">
              {' '}
              ({rupees(plan.price.monthly)} + {rupees(plan.price.gst)} GST)
            </span>
          )}
        </dd>
        <dt>Then</dt>
        <dd>{rupees(charged)} a month</dd>
        <dt>Your balance</dt>
        <dd>{balance === null ? '…' : rupees(balance)}</dd>
      </dl>
      {warn && short > 0 && balance !== null ? (
        <Alert kind="warning">
          <p>
            Your balance is {rupees(balance)}; this order needs {rupees(charged)}.{' '}
            <Link to={topUpHref(short.toFixed(2), type)}>Top up {rupees(wholeRupees(short.toFixed(2)))}</Link>
          </p>
        </Alert>
      ) : null}
    </>
  );
}

function FundsAlert({ error, type }: { error: ApiError; type: string }) {
  const { balance, required, shortfall } = error.details as {
    balance?: unknown;
    required?: unknown;
    shortfall?: unknown;
  };
  const text = (v: unknown): string | null => (typeof v === 'string' || typeof v === 'number' ? String(v) : null);
  const have = text(balance);
  const need = text(required);
  const gap = text(shortfall) ?? (have !== null && need !== null ? String(Number(need) - Number(have)) : null);
  return (
    <div className="alert alert-error" role="alert">
      <p>
        {have !== null && need !== null
          ? `Your balance is ${rupees(have)}; this order needs ${rupees(need)}.`
          : error.message}{' '}
        {gap !== null ? (
          <Link to={topUpHref(gap, type)}>Top up {rupees(wholeRupees(gap))}</Link>
        ) : (
          <Link to={`/wallet?return=/order/${encodeURIComponent(type)}`}>Top up your wallet</Link>
        )}
      </p>
    </div>
  );
}

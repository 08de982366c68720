// Webhooks (Account → Webhooks): the account's endpoints, adding one (URL, events, description)
// whose signing secret is shown this once with a copy button, each endpoint's actions and delivery
// log (./WebhookItem.tsx), and the low-balance threshold behind wallet.low_balance.

import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { type FormEvent, useEffect, useRef, useState } from 'react';
import { useTitle } from '../../components/Layout.tsx';
import {
  Alert,
  Button,
  CopyButton,
  Empty,
  ErrorAlert,
  fieldError,
  Loading,
  PageHeader,
  TextField,
} from '../../components/ui.tsx';
import { rupees } from '../../lib/format.ts';
import { AccountTabs } from '../account/AccountPage.tsx';
import { change, fetchEndpoints, HOOKS_KEY, type Overview } from './api.ts';
import { EndpointForm } from './EndpointForm.tsx';
import { WebhookItem } from './WebhookItem.tsx';
import '../dashboard/pages.css';
import './webhooks.css';

export interface ShownSecret {
  title: string;
  secret: string;
}

export default function WebhooksPage() {
  useTitle('Webhooks');
  const overview = useQuery({ queryKey: HOOKS_KEY, queryFn: fetchEndpoints });
  const [shown, setShown] = useState<ShownSecret | null>(null);
  const [formOpen, setFormOpen] = useState<boolean | null>(null);
  const data = overview.data;
  const count = data?.endpoints.length ?? 0;
  const full = data !== undefined && count >= data.max_endpoints;
  const open = !full && (formOpen ?? (overview.isSuccess && count === 0));

  return (
    <div className="acct">
      <PageHeader title="Account" />
      <AccountTabs />
      <p className="acct-intro">
        Webhooks tell your systems what happens on your account as it happens: we POST each event (an order paid, a
        server ready, an invoice issued, …) as JSON to your endpoint, signed with its secret as the{' '}
        <a href="https://www.standardwebhooks.com" rel="noreferrer">
          Standard Webhooks
        </a>{' '}
        specification says. Check the <code>webhook-signature</code> header before you trust a delivery.
      </p>

      {shown ? <NewSecret shown={shown} onDone={() => setShown(null)} /> : null}

      <section className="card" aria-labelledby="wh-add">
        <div className="card-head">
          <h2 id="wh-add">Add an endpoint</h2>
          {open || full ? null : (
            <Button variant="secondary" onClick={() => setFormOpen(true)}>
              New endpoint
            </Button>
          )}
        </div>
        {full ? (
          <p className="hint">
            You have {data?.max_endpoints} endpoints, the most an account may: delete one to add another.
          </p>
        ) : null}
        {open && data ? (
          <AddEndpoint
            eventTypes={data.event_types}
            onAdded={(secret) => {
              setShown({ title: 'Copy the signing secret of your new endpoint now', secret });
              setFormOpen(false);
            }}
            onCancel={count > 0 ? () => setFormOpen(false) : undefined}
          />
        ) : null}
      </section>

      <section className="card" aria-labelledby="wh-list">
        <div className="card-head">
          <h2 id="wh-list">Your endpoints</h2>
          {data ? (
            <span className="muted">
              {count} of {data.max_endpoints}
            </span>
          ) : null}
        </div>
        {overview.isPending ? <Loading what="Loading your endpoints" /> : null}
        {overview.isError ? <ErrorAlert error={overview.error} /> : null}
        {data && count === 0 ? (
          <Empty title="No webhook endpoints yet">
            <p>Add one above; then send it a test event to see a delivery arrive.</p>
          </Empty>
        ) : null}
        {data && count > 0 ? (
          <ul className="list wh-list">
            {data.endpoints.map((endpoint) => (
              <WebhookItem
                key={endpoint.id}
                endpoint={endpoint}
                eventTypes={data.event_types}
                onSecret={(secret) => setShown({ title: `Copy the new signing secret of ${endpoint.url} now`, secret })}
              />
            ))}
          </ul>
        ) : null}
      </section>

      {data ? <LowBalance settings={data.settings} /> : null}
    </div>
  );
}

function NewSecret({ shown, onDone }: { shown: ShownSecret; onDone: () => void }) {
  const ref = useRef<HTMLElement>(null);
  useEffect(() => ref.current?.focus(), []);
  return (
    <section className="card tok-secret" ref={ref} tabIndex={-1} aria-labelledby="wh-secret-title">
      <h2 id="wh-secret-title">{shown.title}</h2>
      <Alert kind="warning">
        <p>
          <strong>This is the only time the secret is shown.</strong> Your receiver needs it to check each delivery's
          signature. If you lose it, rotate the secret to get a new one.
        </p>
      </Alert>
      <p className="muted tok-secret-label">Signing secret</p>
      <p className="secret">{shown.secret}</p>
      <div className="row">
        <CopyButton text={shown.secret} label="Copy secret" />
        <Button variant="ghost" onClick={onDone}>
          I have stored it: hide it
        </Button>
      </div>
    </section>
  );
}

function AddEndpoint({
  eventTypes,
  onAdded,
  onCancel,
}: {
  eventTypes: string[];
  onAdded: (secret: string) => void;
  onCancel: (() => void) | undefined;
}) {
  const client = useQueryClient();
  const add = useMutation({
    mutationFn: (fields: { url: string; description: string; events: string[] }) =>
      change({ action: 'create', ...fields }),
    onSuccess: async (answer) => {
      if ('secret' in answer) onAdded(answer.secret);
      await client.invalidateQueries({ queryKey: HOOKS_KEY });
    },
  });
  return (
    <EndpointForm
      initial={{ url: '', description: '', events: [] }}
      eventTypes={eventTypes}
      submitLabel="Add endpoint"
      busy={add.isPending}
      error={add.error}
      onSubmit={(fields) => add.mutate(fields)}
      onCancel={onCancel}
    />
  );
}

function LowBalance({ settings }: { settings: Overview['settings'] }) {
  const client = useQueryClient();
  const [amount, setAmount] = useState(settings.low_balance_threshold ?? '');
  useEffect(() => setAmount(settings.low_balance_threshold ?? ''), [settings.low_balance_threshold]);
  const save = useMutation({
    mutationFn: (value: string | null) => change({ action: 'settings', low_balance_threshold: value }),
    onSuccess: () => client.invalidateQueries({ queryKey: HOOKS_KEY }),
  });
  const submit = (event: FormEvent) => {
    event.preventDefault();
    save.mutate(amount.trim() === '' ? null : amount.trim());
  };
  const current = settings.low_balance_threshold;
  return (
    <section className="card" aria-labelledby="wh-low">
      <h2 id="wh-low">Low-balance alert</h2>
      <p className="muted">
        {current
          ? `wallet.low_balance is sent once when a payment takes your wallet below ${rupees(current)}, and again only after it has been topped up above it.`
          : 'Set an amount to have wallet.low_balance sent when a payment takes your wallet below it.'}
      </p>
      <form onSubmit={submit} noValidate className="wh-low-form">
        <TextField
          label="Threshold (₹)"
          inputMode="decimal"
          value={amount}
          onChange={(e) => setAmount(e.target.value)}
          placeholder="e.g. 500"
          autoComplete="off"
          hint="Leave empty to turn the alert off."
          error={fieldError(save.error, 'low_balance_threshold')}
        />
        <ErrorAlert error={save.error} fields={['low_balance_threshold']} />
        {save.isSuccess ? (
          <p className="hint" role="status">
            Saved.
          </p>
        ) : null}
        <div className="row">
          <Button type="submit" busy={save.isPending}>
            Save threshold
          </Button>
        </div>
      </form>
    </section>
  );
}

// One webhook endpoint: what it is and how it fares, its actions (send a test, edit, disable or
// enable, rotate the secret, delete) and its delivery log (./DeliveryLog.tsx).

import { useMutation, useQueryClient } from '@tanstack/react-query';
import { useState } from 'react';
import { Alert, Button, ErrorAlert, Status } from '../../components/ui.tsx';
import { when } from '../../lib/format.ts';
import { change, type Endpoint, HOOKS_KEY } from './api.ts';
import { DeliveryLog } from './DeliveryLog.tsx';
import { EndpointForm } from './EndpointForm.tsx';

const DISABLED_BECAUSE: Record<string, string> = {
  client: 'You disabled it.',
  failing: 'Every delivery failed for 3 days, so we stopped sending. Fix the receiver, then enable it.',
  gone: 'It answered 410 Gone, so we stopped sending. Enable it to start again.',
};

type Confirming = 'rotate' | 'delete' | null;

export function WebhookItem({
  endpoint,
  eventTypes,
  onSecret,
}: {
  endpoint: Endpoint;
  eventTypes: string[];
  onSecret: (secret: string) => void;
}) {
  const client = useQueryClient();
  const [editing, setEditing] = useState(false);
  const [logOpen, setLogOpen] = useState(false);
  const [confirming, setConfirming] = useState<Confirming>(null);
  const refresh = () => client.invalidateQueries({ queryKey: HOOKS_KEY });
  const act = useMutation({
    mutationFn: (action: 'test' | 'enable' | 'disable' | 'rotate_secret' | 'delete') =>
      change({ action, id: endpoint.id }),
    onSuccess: async (answer, action) => {
      setConfirming(null);
      if ('secret' in answer) onSecret(answer.secret);
      if (action === 'test') setLogOpen(true);
      await refresh();
    },
  });
  const save = useMutation({
    mutationFn: (fields: { url: string; description: string; events: string[] }) =>
      change({ action: 'update', id: endpoint.id, ...fields }),
    onSuccess: async () => {
      setEditing(false);
      await refresh();
    },
  });
  const logId = `wh-log-${endpoint.id}`;
  const busy = act.isPending ? act.variables : null;
  return (
    <li className={`wh-item${endpoint.enabled ? '' : ' wh-off'}`}>
      <div className="tok-head">
        <div className="tok-title">
          <strong className="mono wh-url">{endpoint.url}</strong>{' '}
          <Status value={endpoint.enabled ? 'active' : 'disabled'} />
          {endpoint.description ? <p className="muted wh-desc">{endpoint.description}</p> : null}
        </div>
        <div className="row">
          <Button
            onClick={() => act.mutate('test')}
            busy={busy === 'test'}
            disabled={!endpoint.enabled}
            title={endpoint.enabled ? undefined : 'Enable the endpoint first'}
          >
            Send test event
          </Button>
          <Button
            variant="secondary"
            aria-expanded={logOpen}
            aria-controls={logId}
            onClick={() => setLogOpen(!logOpen)}
          >
            {logOpen ? 'Hide deliveries' : 'Deliveries'}
          </Button>
        </div>
      </div>
      {!endpoint.enabled ? (
        <Alert kind="warning">
          <p>{DISABLED_BECAUSE[endpoint.disabled_reason ?? 'client'] ?? 'It is disabled.'}</p>
        </Alert>
      ) : endpoint.failing_since ? (
        <Alert kind="warning">
          <p>
            Deliveries have been failing since {when(endpoint.failing_since)}; we keep retrying. After 3 days of
            failures the endpoint is disabled and you get an e-mail.
          </p>
        </Alert>
      ) : null}
      {editing ? (
        <EndpointForm
          initial={{ url: endpoint.url, description: endpoint.description, events: endpoint.events }}
          eventTypes={eventTypes}
          submitLabel="Save changes"
          busy={save.isPending}
          error={save.error}
          onSubmit={(fields) => save.mutate(fields)}
          onCancel={() => setEditing(false)}
        />
      ) : (
        <dl className="facts tok-facts">
          <dt>Events</dt>
          <dd>
            <ul className="chips">
              {endpoint.events.map((type) => (
                <li key={type} className="chip mono">
                  {type}
                </li>
              ))}
            </ul>
          </dd>
          <dt>Secret</dt>
          <dd>
            <span className="mono">{endpoint.secret_hint}</span>
            {endpoint.previous_secret_expires_at ? (
              <span className="muted">
                {' '}
                (the previous one also signs until {when(endpoint.previous_secret_expires_at)})
              </span>
            ) : null}
          </dd>
          <dt>Added</dt>
          <dd>{when(endpoint.created_at)}</dd>
        </dl>
      )}
      {editing ? null : (
        <div className="row wh-actions">
          <Button variant="secondary" onClick={() => setEditing(true)}>
            Edit
          </Button>
          {endpoint.enabled ? (
            <Button variant="secondary" busy={busy === 'disable'} onClick={() => act.mutate('disable')}>
              Disable
            </Button>
          ) : (
            <Button variant="secondary" busy={busy === 'enable'} onClick={() => act.mutate('enable')}>
              Enable
            </Button>
          )}
          <Button variant="secondary" onClick={() => setConfirming('rotate')}>
            Rotate secret
          </Button>
          <Button variant="danger" onClick={() => setConfirming('delete')}>
            Delete
          </Button>
        </div>
      )}
      {confirming ? (
        <fieldset className="confirm">
          <legend className="sr-only">{confirming === 'rotate' ? 'Rotate the secret' : 'Delete the endpoint'}</legend>
          <p>
            {confirming === 'rotate'
              ? 'Make a new signing secret? It is shown once. For 24 hours deliveries carry signatures of both the old and the new secret, so you can switch your receiver over without missing one.'
              : `Delete ${endpoint.url}? Nothing more is sent to it, and its delivery log goes with it.`}
          </p>
          <div className="row">
            <Button
              variant={confirming === 'delete' ? 'danger' : 'primary'}
              busy={act.isPending}
              onClick={() => act.mutate(confirming === 'rotate' ? 'rotate_secret' : 'delete')}
            >
              {confirming === 'rotate' ? 'Rotate secret' : 'Delete endpoint'}
            </Button>
            <Button variant="secondary" onClick={() => setConfirming(null)}>
              Cancel
            </Button>
          </div>
        </fieldset>
      ) : null}
      <ErrorAlert error={act.error} />
      <div id={logId}>{logOpen ? <DeliveryLog endpoint={endpoint} /> : null}</div>
    </li>
  );
}

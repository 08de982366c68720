// An endpoint's delivery log: each delivery's event, status, attempts, the answer and the time it
// took, the next attempt of one waiting for a retry, and, opened, the request's headers and the
// answer's first 1 KiB; any delivery can be sent again. Refreshes itself while one is pending.

import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { Button, ErrorAlert, Loading, Status } from '../../components/ui.tsx';
import { when } from '../../lib/format.ts';
import { change, type Delivery, type Endpoint, fetchDeliveries } from './api.ts';

export function DeliveryLog({ endpoint }: { endpoint: Endpoint }) {
  const log = useQuery({
    queryKey: ['webhooks', 'deliveries', endpoint.id],
    queryFn: () => fetchDeliveries(endpoint.id),
    refetchInterval: (query) => (query.state.data?.some((d) => d.status === 'pending') ? 2000 : false),
  });
  return (
    <div className="tok-log">
      <div className="card-head">
        <h3>Deliveries to {endpoint.url}</h3>
        <Button variant="ghost" busy={log.isFetching} onClick={() => log.refetch()}>
          Refresh
        </Button>
      </div>
      {log.isPending ? <Loading what="Loading the deliveries" /> : null}
      {log.isError ? <ErrorAlert error={log.error} /> : null}
      {log.data && log.data.length === 0 ? (
        <p className="muted">Nothing has been sent yet. Send a test event to see one arrive.</p>
      ) : null}
      {log.data && log.data.length > 0 ? (
        <ol className="wh-deliveries">
          {log.data.map((delivery) => (
            <DeliveryRow key={delivery.id} delivery={delivery} enabled={endpoint.enabled} />
          ))}
        </ol>
      ) : null}
      {log.data && log.data.length >= 100 ? <p className="hint">The newest 100 deliveries are kept.</p> : null}
    </div>
  );
}

/** The JSON sent, indented to read (what was signed is the compact form). */
function pretty(body: string): string {
  try {
    return JSON.stringify(JSON.parse(body), null, 2);
  } catch {
    return body;
  }
}

function outcome(d: Delivery): string {
  if (d.response_status !== null) return `HTTP ${d.response_status}`;
  if (d.error) return 'no answer';
  return 'not sent yet';
}

function DeliveryRow({ delivery: d, enabled }: { delivery: Delivery; enabled: boolean }) {
  const client = useQueryClient();
  const again = useMutation({
    mutationFn: () => change({ action: 'redeliver', delivery_id: d.id }),
    onSuccess: () => client.invalidateQueries({ queryKey: ['webhooks', 'deliveries'] }),
  });
  return (
    <li className="wh-delivery">
      <div className="wh-delivery-head">
        <span className="mono wh-type">{d.type}</span>
        <Status value={d.status} />
        <span className={d.response_status !== null && d.response_status < 300 ? '' : 'tok-fail'}>{outcome(d)}</span>
        <span className="muted nowrap">
          {d.attempt === 1 ? '1 attempt' : `${d.attempt} attempts`}
          {d.duration_ms !== null ? `, ${d.duration_ms} ms` : ''}
        </span>
      </div>
      <p className="muted wh-delivery-when">
        {d.last_attempt_at ? `Last tried ${when(d.last_attempt_at)}` : `Queued ${when(d.created_at)}`}
        {d.next_attempt_at && d.attempt > 0 ? ` · next attempt ${when(d.next_attempt_at)}` : ''}
      </p>
      {d.error ? <p className="wh-error">{d.error}</p> : null}
      <details className="wh-details">
        <summary>Request and answer</summary>
        <p className="muted">
          Event <span className="mono">{d.event_id}</span>
        </p>
        {d.request_headers ? (
          <>
            <p className="muted">Headers sent</p>
            <pre className="wh-pre">
              {Object.entries(d.request_headers)
                .map(([name, value]) => `${name}: ${value}`)
                .join('\n')}
            </pre>
          </>
        ) : null}
        <p className="muted">Body sent</p>
        <pre className="wh-pre">{pretty(d.request_body)}</pre>
        {d.response_body ? (
          <>
            <p className="muted">Answer (first 1 KiB)</p>
            <pre className="wh-pre">{d.response_body}</pre>
          </>
        ) : null}
      </details>
      {d.status !== 'pending' ? (
        <div className="row">
          <Button
            variant="ghost"
            busy={again.isPending}
            disabled={!enabled}
            onClick={() => again.mutate()}
            aria-label={`Send again: ${d.type} ${d.event_id}`}
          >
            Send again
          </Button>
          <ErrorAlert error={again.error} />
        </div>
      ) : null}
    </li>
  );
}

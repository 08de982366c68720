// Resize a VPS to a larger plan (CONTRACT §13): the plans it may move to, each with what it costs
// now — the server computes it (GET /api/v1/client/vps/?service=&action=resize_options: the pro-rata
// difference for the rest of the paid period, GST included) — then a confirmation, and
// POST /api/v1/client/services/ {action: "resize", id, plan_id}. The job it answers becomes the
// service's last job, whose progress the page shows at the top (stop, resize, start). What the
// resize charged (or why it was refused) is said until another plan is picked; the Manage tab
// starts afresh for another service (ServicePage keys it by the service).

import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useEffect, useRef, useState } from 'react';
import { Link } from 'react-router';
import { Alert, Button, ErrorAlert, Loading } from '../../../components/ui.tsx';
import { ApiError, api, unwrap } from '../../../lib/api.ts';
import { day, rupees } from '../../../lib/format.ts';
import { type Job, jobRunning, type Service, serviceKey } from '../common.ts';
import './infra.css';

interface Specs {
  vcpu: number;
  ram_mb: number;
  disk_gb: number;
}

interface Option {
  id: number;
  label: string;
  name: string;
  specs: Specs;
  price: { monthly: string };
  charge_now: { amount: string; tax: string };
}

interface Options {
  current: { name: string; specs: Specs; price: { monthly: string } };
  paid_until: string | null;
  plans: Option[];
}

const sizes = (s: Specs) => `${s.vcpu} vCPU · ${s.ram_mb / 1024} GB RAM · ${s.disk_gb} GB disk`;

export function ResizeCard({ service }: { service: Service }) {
  const client = useQueryClient();
  const [chosen, setChosen] = useState<Option | null>(null);
  const busy = jobRunning(service.last_job);
  // The confirmation takes the focus when it opens; Cancel gives it back to that plan's Resize button.
  const confirm = useRef<HTMLButtonElement>(null);
  const triggers = useRef(new Map<number, HTMLButtonElement>());
  useEffect(() => {
    if (chosen) confirm.current?.focus();
  }, [chosen]);
  const cancel = (id: number) => {
    setChosen(null);
    requestAnimationFrame(() => triggers.current.get(id)?.focus());
  };

  const options = useQuery({
    queryKey: ['vps-resize', service.id, service.plan.label],
    queryFn: async () =>
      (await unwrap(
        api.GET('/api/v1/client/vps/', { params: { query: { service: service.id, action: 'resize_options' } } }),
      )) as unknown as Options,
    enabled: service.status === 'active',
    retry: false,
  });

  const resize = useMutation({
    mutationFn: (plan: Option) =>
      unwrap(api.POST('/api/v1/client/services/', { body: { action: 'resize', id: service.id, plan_id: plan.id } })),
    onSuccess: (data) => {
      const job = (data as { job?: Job }).job;
      if (job) client.setQueryData<Service>(serviceKey(service.id), (old) => (old ? { ...old, last_job: job } : old));
      setChosen(null);
      client.invalidateQueries({ queryKey: serviceKey(service.id) });
      client.invalidateQueries({ queryKey: ['vps-resize', service.id] });
      client.invalidateQueries({ queryKey: ['wallet'] });
    },
  });

  if (service.status !== 'active') return null;
  const data = options.data;
  const short = resize.error instanceof ApiError && resize.error.status === 402;

  return (
    <section className="card infra-card" aria-labelledby="resize-h">
      <h2 id="resize-h">Resize</h2>
      <p className="muted">
        Move this server to a larger plan. You pay the difference for the rest of the period now
        {data?.paid_until ? ` (until ${day(data.paid_until)})` : ''}; renewals then charge the new plan’s price. The
        server is stopped, resized and started again; the disk only grows.
      </p>
      {options.isPending ? <Loading what="Loading the larger plans" /> : null}
      {options.isError ? <ErrorAlert error={options.error} /> : null}
      {data ? (
        <p>
          Now: <strong>{data.current.name}</strong> · {rupees(data.current.price.monthly)} a month
          <br />
          <small className="muted">{sizes(data.current.specs)}</small>
        </p>
      ) : null}
      {busy ? <p className="hint">A job is running on this server; resizing waits until it ends.</p> : null}
      {data && data.plans.length === 0 ? <p>No larger plan is sold in this server’s region.</p> : null}
      {data && data.plans.length > 0 ? (
        <ul className="list infra-plans" aria-label="Larger plans">
          {data.plans.map((p) => (
            <li key={p.id}>
              <div className="infra-plan">
                <div>
                  <strong>{p.name}</strong> · {rupees(p.price.monthly)} a month
                  <br />
                  <small className="muted">{sizes(p.specs)}</small>
                  <br />
                  <span>
                    Pay now: <strong>{rupees(p.charge_now.amount)}</strong>{' '}
                    <small className="muted">(GST {rupees(p.charge_now.tax)} included)</small>
                  </span>
                </div>
                <Button
                  ref={(button) => {
                    if (button) triggers.current.set(p.id, button);
                    else triggers.current.delete(p.id);
                  }}
                  variant="secondary"
                  disabled={busy || resize.isPending}
                  aria-expanded={chosen?.id === p.id}
                  aria-label={`Resize to ${p.name}`}
                  onClick={() => {
                    // A new choice: the last resize's message (or refusal) is not about it.
                    resize.reset();
                    setChosen(p);
                  }}
                >
                  Resize
                </Button>
              </div>
              {chosen?.id === p.id ? (
                <fieldset
                  className="confirm infra-pay"
                  onKeyDown={(e) => {
                    if (e.key === 'Escape') cancel(p.id);
                  }}
                >
                  <legend className="sr-only">Resize to {p.name}</legend>
                  <p>
                    Pay <strong>{rupees(p.charge_now.amount)}</strong> from your wallet now and resize to {p.name}? The
                    server restarts; from the next renewal it costs {rupees(p.price.monthly)} a month.
                  </p>
                  <div className="row infra-actions">
                    <Button ref={confirm} busy={resize.isPending} onClick={() => resize.mutate(p)}>
                      Pay {rupees(p.charge_now.amount)} and resize to {p.name}
                    </Button>
                    <Button variant="secondary" onClick={() => cancel(p.id)}>
                      Cancel
                    </Button>
                  </div>
                </fieldset>
              ) : null}
            </li>
          ))}
        </ul>
      ) : null}
      {resize.isError ? <ErrorAlert error={resize.error} fields={['plan_id']} /> : null}
      {short ? (
        <p>
          <Link to="/wallet">Top up the wallet</Link>, then resize.
        </p>
      ) : null}
      {resize.isSuccess ? <Alert kind="success">{resize.data.message}</Alert> : null}
    </section>
  );
}

// The live side of a service: its job in progress (polled until it ends: progress and step),
// its live power with Start / Stop / Restart / Kill (each only in the state it applies to; Kill
// asks first), and the reinstall (an OS and the label typed). Every action goes through
// POST /services/action/; a refusal (409 suspended or locked, 503 node_unreachable, …) is shown
// as the server wrote it.

import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useEffect, useRef, useState } from 'react';
import { Alert, Button, ErrorAlert, fieldError, SelectField, Status, TypedConfirm } from '../../components/ui.tsx';
import { api, unwrap } from '../../lib/api.ts';
import { bytes, relative, when } from '../../lib/format.ts';
import {
  JOB_NAMES,
  type Job,
  jobRunning,
  type Service,
  type Signal,
  serviceKey,
  signalAllowed,
  stepWords,
} from './common.ts';

/** Runs a service action; the job it answers becomes the service's last_job, so polling starts at once. */
export function useServiceAction(service: Service) {
  const client = useQueryClient();
  return useMutation({
    mutationFn: (body: { action: string; os?: string; confirm?: string }) =>
      unwrap(api.POST('/api/v1/client/services/action/', { body: { id: service.id, ...body } })),
    onSuccess: (data) => {
      client.setQueryData<Service>(serviceKey(service.id), (old) => (old ? { ...old, last_job: data.job } : old));
      client.invalidateQueries({ queryKey: ['service-status', service.id] });
      client.invalidateQueries({ queryKey: ['service-events', service.id] });
    },
  });
}

/** The job on the service: a progress bar and its step while it runs; how it ended, once. */
export function JobProgress({ job }: { job: Job | null | undefined }) {
  const client = useQueryClient();
  const wasRunning = useRef(false);
  const running = jobRunning(job);
  useEffect(() => {
    if (running) wasRunning.current = true;
    else if (wasRunning.current && job) {
      // The job just ended: the facts (IP, OS, power) may have changed.
      client.invalidateQueries({ queryKey: ['service-status', job.resource.id] });
      client.invalidateQueries({ queryKey: ['service-events', job.resource.id] });
      client.invalidateQueries({ queryKey: ['vps-snapshots', job.resource.id] });
    }
  }, [running, job, client]);
  if (!job) return null;
  const name = JOB_NAMES[job.type] ?? job.type;
  if (running) {
    return (
      <section className="card job-card" aria-labelledby="job-h">
        <h2 id="job-h">
          {name} <Status value={job.status} />
        </h2>
        <progress className="progress" max={100} value={job.progress} aria-labelledby="job-h job-step" />
        <p id="job-step" aria-live="polite">
          {job.progress} %{job.step ? ` · ${stepWords(job.step)}` : ''}
          <span className="muted"> · started {relative(job.started_at ?? job.created_at)}</span>
        </p>
      </section>
    );
  }
  if (job.status === 'failed') {
    return (
      <Alert kind="error">
        <p>
          <strong>{name} failed</strong> {when(job.finished_at)}
          {job.step ? ` at step “${stepWords(job.step)}”` : ''}: {job.error?.message ?? 'no reason was given.'}
        </p>
      </Alert>
    );
  }
  if (wasRunning.current && job.status === 'succeeded') {
    return (
      <Alert kind="success">
        <p>
          {name} finished {relative(job.finished_at)}.
        </p>
      </Alert>
    );
  }
  return null;
}

const SIGNALS: { signal: Signal; label: string; variant: 'primary' | 'secondary' | 'danger' }[] = [
  { signal: 'start', label: 'Start', variant: 'primary' },
  { signal: 'stop', label: 'Stop', variant: 'secondary' },
  { signal: 'restart', label: 'Restart', variant: 'secondary' },
  { signal: 'kill', label: 'Kill', variant: 'danger' },
];

function duration(seconds: number): string {
  const d = Math.floor(seconds / 86400);
  const h = Math.floor((seconds % 86400) / 3600);
  const m = Math.floor((seconds % 3600) / 60);
  if (d > 0) return `${d} d ${h} h`;
  if (h > 0) return `${h} h ${m} min`;
  return `${m} min`;
}

/** Live power and utilisation (GET /services/status/, every 15 s) and the power controls. */
export function PowerCard({ service }: { service: Service }) {
  const action = useServiceAction(service);
  const [confirmKill, setConfirmKill] = useState(false);
  const active = service.status === 'active';
  const busy = jobRunning(service.last_job);
  const status = useQuery({
    queryKey: ['service-status', service.id],
    queryFn: () => unwrap(api.GET('/api/v1/client/services/status/', { params: { query: { id: service.id } } })),
    enabled: active,
    refetchInterval: busy ? 3000 : 15_000,
    retry: false,
  });
  const live = status.data?.status;
  const power = live?.power ?? service.power;

  return (
    <section className="card" aria-labelledby="power-h">
      <h2 id="power-h">Power</h2>
      {!active ? (
        <p className="muted">Power controls work while the service is active; it is {service.status}.</p>
      ) : (
        <>
          <p className="power-line">
            <Status value={power ?? 'unknown'} />
            {status.isFetching ? <span className="muted"> checking…</span> : null}
            {status.dataUpdatedAt ? (
              <span className="muted"> as of {when(new Date(status.dataUpdatedAt).toISOString())}</span>
            ) : null}
          </p>
          {status.isError ? <ErrorAlert error={status.error} /> : null}
          {live ? (
            <dl className="facts live-facts">
              <dt>CPU</dt>
              <dd>
                {live.cpu === null ? '—' : `${Math.round(live.cpu * 100)} % of ${live.cpus} vCPU`}
                {live.cpu !== null ? (
                  <meter min={0} max={1} value={live.cpu} aria-label="CPU use" className="meter" />
                ) : null}
              </dd>
              <dt>Memory</dt>
              <dd>
                {live.memory.used_bytes === null
                  ? `${bytes(live.memory.total_bytes)} total`
                  : `${bytes(live.memory.used_bytes)} of ${bytes(live.memory.total_bytes)}`}
                {live.memory.used_bytes !== null ? (
                  <meter
                    min={0}
                    max={live.memory.total_bytes}
                    value={live.memory.used_bytes}
                    aria-label="Memory use"
                    className="meter"
                  />
                ) : null}
              </dd>
              <dt>Disk</dt>
              <dd>{bytes(live.disk.total_bytes)}</dd>
              <dt>Up for</dt>
              <dd>{live.uptime_seconds === null ? '—' : duration(live.uptime_seconds)}</dd>
              <dt>Network</dt>
              <dd>
                {live.network.in_bytes === null
                  ? '—'
                  : `${bytes(live.network.in_bytes)} in · ${bytes(live.network.out_bytes)} out`}
              </dd>
            </dl>
          ) : null}
          <div className="row power-buttons">
            {SIGNALS.map(({ signal, label, variant }) => (
              <Button
                key={signal}
                variant={variant}
                disabled={busy || !signalAllowed(signal, power) || action.isPending}
                busy={action.isPending && action.variables?.action === signal}
                onClick={() => (signal === 'kill' ? setConfirmKill(true) : action.mutate({ action: signal }))}
              >
                {label}
              </Button>
            ))}
          </div>
          <p className="hint">
            {busy
              ? 'A job is running on this service; the controls come back when it ends.'
              : 'Start works when the server is stopped; Stop and Restart when it runs. Kill cuts the power at once.'}
          </p>
          {confirmKill ? (
            <div className="confirm" role="alertdialog" aria-labelledby="kill-h" aria-describedby="kill-d">
              <h3 id="kill-h">Kill {service.label}?</h3>
              <p id="kill-d">
                The power is cut at once, without a shutdown: unsaved data may be lost and the file system may need a
                check. The server stays off until you start it.
              </p>
              <div className="row">
                <Button
                  variant="danger"
                  busy={action.isPending}
                  onClick={() => action.mutate({ action: 'kill' }, { onSettled: () => setConfirmKill(false) })}
                >
                  Kill the server
                </Button>
                <Button variant="secondary" onClick={() => setConfirmKill(false)} autoFocus>
                  Cancel
                </Button>
              </div>
            </div>
          ) : null}
          {action.isError ? <ErrorAlert error={action.error} /> : null}
          {action.isSuccess ? <Alert kind="success">{action.data.message}</Alert> : null}
        </>
      )}
    </section>
  );
}

/** Reinstall: the OS to put on, and the label typed to confirm (the disk is replaced). */
export function ReinstallCard({ service }: { service: Service }) {
  const action = useServiceAction(service);
  const [open, setOpen] = useState(false);
  const [os, setOs] = useState(service.os ?? '');
  const catalog = useQuery({
    queryKey: ['catalog'],
    queryFn: () => unwrap(api.GET('/api/v1/client/catalog/')),
    staleTime: 10 * 60_000,
    enabled: open,
  });
  const list = catalog.data && 'os' in catalog.data ? catalog.data.os : [];
  return (
    <section className="card" aria-labelledby="reinstall-h">
      <h2 id="reinstall-h">Reinstall</h2>
      <p>
        Puts a fresh operating system on the server. <strong>Everything on its disk is erased</strong> and a new root
        password is set (see Credentials once it finishes).
      </p>
      {!open ? (
        <Button
          variant="secondary"
          disabled={service.status !== 'active' || jobRunning(service.last_job)}
          onClick={() => setOpen(true)}
        >
          Reinstall…
        </Button>
      ) : (
        <div className="stack">
          <SelectField
            label="Operating system"
            value={os}
            onChange={(e) => setOs(e.target.value)}
            error={fieldError(action.error, 'os')}
            hint={catalog.isPending ? 'Loading the systems…' : undefined}
          >
            <option value="">Choose a system</option>
            {list.map((o) => (
              <option key={o.slug} value={o.slug}>
                {o.name}
                {o.slug === service.os ? ' (installed now)' : ''}
              </option>
            ))}
          </SelectField>
          {catalog.isError ? <ErrorAlert error={catalog.error} /> : null}
          <TypedConfirm
            word={service.label}
            action={os ? `Erase and reinstall with ${list.find((o) => o.slug === os)?.name ?? os}` : 'Reinstall'}
            busy={action.isPending}
            onConfirm={() => {
              if (!os) return;
              action.mutate({ action: 'reinstall', os, confirm: service.label }, { onSuccess: () => setOpen(false) });
            }}
            onCancel={() => {
              setOpen(false);
              action.reset();
            }}
          >
            <p>
              <strong>This erases {service.label}.</strong> Take a snapshot first if you may need its files.
            </p>
            {!os ? <p className="field-error">Choose the operating system first.</p> : null}
          </TypedConfirm>
          {fieldError(action.error, 'confirm') ? (
            <p className="field-error">{fieldError(action.error, 'confirm')}</p>
          ) : null}
        </div>
      )}
      {action.isError ? <ErrorAlert error={action.error} fields={['os']} /> : null}
      {action.isSuccess ? <Alert kind="success">{action.data.message}</Alert> : null}
    </section>
  );
}

// VPS snapshots (GET/POST /api/v1/client/vps/?service=&action=snapshots|snapshot_create|…):
// the list with the plan's limit, take one (name + optional description), restore one (the
// server is stopped, rolled back and started again) and delete one, each a job whose progress
// the page shows at the top.

import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useState } from 'react';
import { Alert, Button, ErrorAlert, fieldError, Loading, TextField, TypedConfirm } from '../../../components/ui.tsx';
import { api, unwrap } from '../../../lib/api.ts';
import { when } from '../../../lib/format.ts';
import { type Job, jobRunning, type Service, serviceKey } from '../common.ts';

interface Snapshot {
  id: string;
  name: string;
  description: string | null;
  created_at: string | null;
  /** Taken by scheduled backups (./BackupSchedule.tsx): not counted against the limit. */
  automatic?: boolean;
}

export function SnapshotsCard({ service }: { service: Service }) {
  const client = useQueryClient();
  const [name, setName] = useState('');
  const [description, setDescription] = useState('');
  const [confirming, setConfirming] = useState<{ id: string; kind: 'restore' | 'delete' } | null>(null);
  const busy = jobRunning(service.last_job);

  const list = useQuery({
    queryKey: ['vps-snapshots', service.id],
    queryFn: async () => {
      const data = await unwrap(
        api.GET('/api/v1/client/vps/', { params: { query: { service: service.id, action: 'snapshots' } } }),
      );
      return data as unknown as { snapshots: Snapshot[]; limit: number };
    },
    retry: false,
  });

  const mutate = useMutation({
    mutationFn: (v: { action: string; body: Record<string, unknown> }) =>
      unwrap(
        api.POST('/api/v1/client/vps/', {
          params: { query: { service: service.id, action: v.action } },
          body: v.body,
        }),
      ),
    onSuccess: (data) => {
      const job = (data as { job?: Job }).job;
      if (job) client.setQueryData<Service>(serviceKey(service.id), (old) => (old ? { ...old, last_job: job } : old));
      setConfirming(null);
      client.invalidateQueries({ queryKey: ['vps-snapshots', service.id] });
    },
  });

  const snapshots = list.data?.snapshots ?? [];
  const limit = list.data?.limit ?? 0;
  const manual = snapshots.filter((s) => !s.automatic).length;
  const full = list.data !== undefined && manual >= limit;
  const createError = mutate.variables?.action === 'snapshot_create' ? mutate.error : null;

  return (
    <section className="card" aria-labelledby="snap-h">
      <h2 id="snap-h">Snapshots</h2>
      <p className="muted">
        A snapshot keeps the disks as they are now (not the memory); restoring one rolls the server back to it.
        {list.data ? ` ${manual} of ${limit} used.` : ''}
      </p>
      {list.isPending ? <Loading what="Loading snapshots" /> : null}
      {list.isError ? <ErrorAlert error={list.error} /> : null}
      {list.data && snapshots.length === 0 ? <p>No snapshots yet. Take one before a risky change.</p> : null}
      {snapshots.length > 0 ? (
        <ul className="list">
          {snapshots.map((s) => (
            <li key={s.id}>
              <div className="snap-row">
                <div>
                  <strong className="mono">{s.name}</strong>
                  <br />
                  <small className="muted">
                    {when(s.created_at)}
                    {s.description ? ` · ${s.description}` : ''}
                  </small>
                </div>
                <div className="row">
                  <Button
                    variant="secondary"
                    disabled={busy || service.status !== 'active'}
                    onClick={() => setConfirming({ id: s.id, kind: 'restore' })}
                  >
                    Restore<span className="sr-only"> {s.name}</span>
                  </Button>
                  <Button variant="ghost" disabled={busy} onClick={() => setConfirming({ id: s.id, kind: 'delete' })}>
                    Delete<span className="sr-only"> {s.name}</span>
                  </Button>
                </div>
              </div>
              {confirming?.id === s.id ? (
                <TypedConfirm
                  word={s.name}
                  action={confirming.kind === 'restore' ? `Roll back to ${s.name}` : `Delete ${s.name}`}
                  busy={mutate.isPending}
                  onConfirm={() =>
                    mutate.mutate({
                      action: confirming.kind === 'restore' ? 'snapshot_restore' : 'snapshot_delete',
                      body: { snapshot_id: s.id },
                    })
                  }
                  onCancel={() => setConfirming(null)}
                >
                  <p>
                    {confirming.kind === 'restore'
                      ? 'The server is stopped, its disks replaced by the snapshot, and started again if it ran. Changes since the snapshot are lost.'
                      : 'The snapshot is deleted for good.'}
                  </p>
                </TypedConfirm>
              ) : null}
            </li>
          ))}
        </ul>
      ) : null}

      <form
        className="snap-form"
        onSubmit={(e) => {
          e.preventDefault();
          mutate.mutate(
            {
              action: 'snapshot_create',
              body: { name: name.trim(), ...(description.trim() ? { description: description.trim() } : {}) },
            },
            {
              onSuccess: () => {
                setName('');
                setDescription('');
              },
            },
          );
        }}
      >
        <h3>Take a snapshot</h3>
        <TextField
          label="Name"
          value={name}
          onChange={(e) => setName(e.target.value)}
          hint="2 to 40 characters: a letter first, then letters, digits, _ or -."
          error={fieldError(createError, 'name')}
          required
          autoComplete="off"
          spellCheck={false}
        />
        <TextField
          label="Description (optional)"
          value={description}
          onChange={(e) => setDescription(e.target.value)}
          error={fieldError(createError, 'description')}
          maxLength={500}
        />
        <div className="row">
          <Button
            type="submit"
            busy={mutate.isPending && mutate.variables?.action === 'snapshot_create'}
            disabled={busy || full || service.status !== 'active'}
          >
            Take snapshot
          </Button>
          {full ? <span className="hint">The plan’s {limit} snapshots are used: delete one first.</span> : null}
        </div>
      </form>
      {mutate.isError ? <ErrorAlert error={mutate.error} fields={['name', 'description']} /> : null}
      {mutate.isSuccess ? <Alert kind="success">{mutate.data.message}</Alert> : null}
    </section>
  );
}

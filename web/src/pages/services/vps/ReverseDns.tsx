// Reverse DNS of a server's IPv4 address (POST /api/v1/client/services/ {action: "rdns", id,
// ptr}): the address and its current PTR name, a field to set it and a Clear button. A name the
// API refuses is shown next to the field (errors.ptr); any other refusal below the form.

import { useMutation, useQueryClient } from '@tanstack/react-query';
import { useState } from 'react';
import { Alert, Button, ErrorAlert, fieldError, TextField } from '../../../components/ui.tsx';
import { api, unwrap } from '../../../lib/api.ts';
import { type Service, serviceKey } from '../common.ts';

export function ReverseDnsCard({ service }: { service: Service }) {
  const client = useQueryClient();
  const [name, setName] = useState('');
  const save = useMutation({
    mutationFn: (ptr: string | null) =>
      unwrap(api.POST('/api/v1/client/services/', { body: { id: service.id, action: 'rdns', ptr } })),
    onSuccess: (data) => {
      if ('rdns' in data) {
        const ptr = data.rdns.ptr;
        client.setQueryData<Service>(serviceKey(service.id), (old) => (old ? { ...old, ptr } : old));
        setName('');
      }
    },
  });
  const active = service.status === 'active';
  const clearing = save.isPending && save.variables === null;

  return (
    <section className="card" aria-labelledby="rdns-h">
      <h2 id="rdns-h">Reverse DNS</h2>
      <p className="muted">
        The name a lookup of the server’s address returns (its PTR record). Mail servers often check that it matches the
        name the server sends mail as.
      </p>
      {service.ipv4 ? (
        <dl className="facts">
          <dt>IPv4 address</dt>
          <dd className="mono">{service.ipv4}</dd>
          <dt>Reverse DNS</dt>
          <dd className="mono">{service.ptr ?? 'not set'}</dd>
        </dl>
      ) : (
        <p>The server has no IPv4 address yet.</p>
      )}
      <form
        onSubmit={(e) => {
          e.preventDefault();
          save.mutate(name.trim());
        }}
      >
        <TextField
          label="Hostname"
          value={name}
          onChange={(e) => setName(e.target.value)}
          hint="A full name such as mail.example.in: letters, digits and hyphens between dots, at most 253 characters."
          error={fieldError(save.error, 'ptr')}
          required
          maxLength={254}
          autoComplete="off"
          spellCheck={false}
        />
        <div className="row">
          <Button type="submit" busy={save.isPending && !clearing} disabled={!active || !service.ipv4}>
            Set reverse DNS
          </Button>
          <Button
            variant="secondary"
            busy={clearing}
            disabled={!active || !service.ptr}
            onClick={() => save.mutate(null)}
          >
            Clear
          </Button>
        </div>
      </form>
      {save.isError ? <ErrorAlert error={save.error} fields={['ptr']} /> : null}
      {save.isSuccess ? <Alert kind="success">{save.data.message}</Alert> : null}
    </section>
  );
}

// Reverse DNS of a server's IPv4 address (POST /api/v1/client/services/ {action: "rdns", id,
// ptr}): the address and its current PTR name, a field to set it and a button to clear it. A name
// the API refuses is shown next to the field (errors.ptr), which takes the focus back; any other
// refusal below the form. Either goes as soon as the field is edited. What happened is said in the
// card's own words, announced politely.

import { useMutation, useQueryClient } from '@tanstack/react-query';
import { useEffect, useRef, useState } from 'react';
import { Alert, Button, ErrorAlert, fieldError, TextField } from '../../../components/ui.tsx';
import { api, unwrap } from '../../../lib/api.ts';
import { type Service, serviceKey } from '../common.ts';
import './infra.css';

export function ReverseDnsCard({ service }: { service: Service }) {
  const client = useQueryClient();
  const [name, setName] = useState('');
  const input = useRef<HTMLInputElement>(null);
  const save = useMutation({
    mutationFn: (ptr: string | null) =>
      unwrap(api.POST('/api/v1/client/services/', { body: { id: service.id, action: 'rdns', ptr } })),
    onSuccess: (data) => {
      if ('rdns' in data) {
        const ptr = data.rdns.ptr;
        client.setQueryData<Service>(serviceKey(service.id), (old) => (old ? { ...old, ptr } : old));
        setName('');
        // Clearing removes its own button: the keyboard goes on from the field.
        if (ptr === null) input.current?.focus();
      }
    },
  });
  const [empty, setEmpty] = useState(false);
  const reason = fieldError(save.error, 'ptr');
  // The server's reason is a phrase ("must be a fully qualified name …"): said as a sentence.
  const refused = empty
    ? 'Enter a name such as mail.example.in, or clear the reverse DNS.'
    : reason && /^[a-z]/.test(reason)
      ? `${/^must /.test(reason) ? 'The name ' : 'Not a valid name: '}${reason}${/[.!?]$/.test(reason) ? '' : '.'}`
      : reason;
  // A refused name: the keyboard goes back to the field that says why.
  useEffect(() => {
    if (refused) input.current?.focus();
  }, [refused]);
  const active = service.status === 'active';
  const clearing = save.isPending && save.variables === null;
  const done = save.isSuccess
    ? save.variables
      ? `Reverse DNS of ${service.ipv4} is now ${service.ptr ?? save.variables}.`
      : `Reverse DNS of ${service.ipv4} is cleared.`
    : null;

  return (
    <section className="card infra-card" aria-labelledby="rdns-h">
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
          <dd className="mono infra-wrap">{service.ptr ?? 'not set'}</dd>
        </dl>
      ) : (
        <p>The server has no IPv4 address yet.</p>
      )}
      {!active ? <p className="hint">It can be changed while the server is active.</p> : null}
      <form
        noValidate
        onSubmit={(e) => {
          e.preventDefault();
          const ptr = name.trim();
          setEmpty(ptr === '');
          if (ptr === '') {
            save.reset();
            input.current?.focus();
          } else save.mutate(ptr);
        }}
      >
        <TextField
          ref={input}
          label="Reverse DNS name"
          value={name}
          onChange={(e) => {
            setName(e.target.value);
            setEmpty(false);
            // The refusal was of the name as it was: editing it takes the error (and aria-invalid) away.
            if (save.isError) save.reset();
          }}
          hint="A full hostname such as mail.example.in: letters, digits and hyphens between dots, at most 253 characters."
          error={refused}
          placeholder="mail.example.in"
          maxLength={254}
          autoComplete="off"
          autoCapitalize="none"
          spellCheck={false}
          inputMode="url"
        />
        <div className="row infra-actions">
          <Button type="submit" busy={save.isPending && !clearing} disabled={!active || !service.ipv4}>
            Set reverse DNS
          </Button>
          {service.ptr ? (
            <Button variant="secondary" busy={clearing} disabled={!active} onClick={() => save.mutate(null)}>
              Clear reverse DNS
            </Button>
          ) : null}
        </div>
      </form>
      {save.isError && !refused ? <ErrorAlert error={save.error} fields={['ptr']} /> : null}
      {done ? <Alert kind="success">{done}</Alert> : null}
    </section>
  );
}

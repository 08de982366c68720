// Account → Security → Passkeys (CONTRACT §11): the account's passkeys (name, added, last used),
// adding one (a name, then the browser's own prompt: passkey_begin → navigator.credentials.create
// → passkey_finish) and removing one after a confirmation. A passkey signs in alone (it is
// something you have and unlocks with something you are or know), and is offered as the second
// step when two-factor sign-in is on.

import { useMutation, useQueryClient } from '@tanstack/react-query';
import { type FormEvent, useState } from 'react';
import { Alert, Button, Empty, ErrorAlert, fieldError, TextField, useConfirmFocus } from '../../components/ui.tsx';
import { ApiError, api, unwrap } from '../../lib/api.ts';
import { when } from '../../lib/format.ts';
import { createPasskey, passkeyCancelled, passkeyProblem, passkeysSupported } from '../../lib/passkeys.ts';

const SECURITY = '/api/v1/client/account/security/';
const MAX_PASSKEYS = 10;
const NAME_MAX = 64;

export interface Passkey {
  id: number;
  name: string;
  created_at: string;
  last_used_at: string | null;
}

/** A browser-side problem in words, or the server's refusal as it is. */
function PasskeyError({ error, fields = [] }: { error: unknown; fields?: string[] }) {
  if (!error) return null;
  const problem = passkeyProblem(error);
  if (problem === null) return <ErrorAlert error={error} fields={fields} />;
  return (
    <Alert kind={passkeyCancelled(error) ? 'warning' : 'error'}>
      <p>{problem}</p>
    </Alert>
  );
}

export function PasskeysCard({ passkeys, securityKey }: { passkeys: Passkey[]; securityKey: readonly unknown[] }) {
  const client = useQueryClient();
  const [name, setName] = useState('');
  const [local, setLocal] = useState<string | undefined>();
  const [added, setAdded] = useState<string | null>(null);
  const supported = passkeysSupported();
  const full = passkeys.length >= MAX_PASSKEYS;

  const add = useMutation({
    mutationFn: async (given: string) => {
      const begun = await unwrap(api.POST(SECURITY, { body: { action: 'passkey_begin' } }));
      if (!('options' in begun)) throw new Error('The server did not answer the passkey options.');
      const response = await createPasskey(begun.options);
      const finished = await unwrap(api.POST(SECURITY, { body: { action: 'passkey_finish', name: given, response } }));
      if (!('passkey' in finished)) throw new Error('The server did not answer the new passkey.');
      return finished.passkey;
    },
    onSuccess: async (passkey) => {
      setAdded(passkey.name);
      setName('');
      await client.invalidateQueries({ queryKey: securityKey });
    },
  });

  const submit = (event: FormEvent) => {
    event.preventDefault();
    const given = name.trim();
    setAdded(null);
    if (given === '') {
      setLocal('Give it a name, to recognise it later.');
      return;
    }
    setLocal(undefined);
    add.mutate(given);
  };

  return (
    <section className="card sec-card" aria-labelledby="sec-passkeys">
      <div className="card-head">
        <h2 id="sec-passkeys">Passkeys</h2>
        <span className="muted">
          {passkeys.length} of {MAX_PASSKEYS}
        </span>
      </div>
      <p>
        Sign in with your fingerprint, face or screen lock instead of your password. A passkey stays on your device or
        in your password manager, and it only works on this site, so it cannot be phished. With two-factor sign-in on, a
        passkey can also be the second step.
      </p>
      {added ? (
        <Alert kind="success">
          <p>Passkey “{added}” added. Use “Sign in with a passkey” on the sign-in page.</p>
        </Alert>
      ) : null}
      {passkeys.length === 0 ? (
        <Empty title="No passkeys yet">
          <p>Add one below for this device.</p>
        </Empty>
      ) : (
        <ul className="list sec-passkeys" aria-label="Your passkeys">
          {passkeys.map((passkey) => (
            <PasskeyItem key={passkey.id} passkey={passkey} securityKey={securityKey} />
          ))}
        </ul>
      )}
      {!supported ? (
        <Alert kind="info">
          <p>This browser cannot make or use passkeys. Open this page in a current browser to add one.</p>
        </Alert>
      ) : full ? (
        <p className="hint">You have {MAX_PASSKEYS} passkeys, the most an account may: remove one to add another.</p>
      ) : (
        <form onSubmit={submit} noValidate className="sec-form sec-add-passkey">
          <h3>Add a passkey</h3>
          <TextField
            label="Passkey name"
            name="passkey-name"
            autoComplete="off"
            maxLength={NAME_MAX}
            required
            value={name}
            onChange={(e) => setName(e.target.value)}
            placeholder="e.g. Work laptop"
            hint="To recognise it later. Your browser then asks you to confirm with your fingerprint, face, screen lock or security key."
            error={local ?? fieldError(add.error, 'name')}
          />
          <PasskeyError error={add.error} fields={['name']} />
          <div className="row">
            <Button type="submit" busy={add.isPending}>
              Add a passkey
            </Button>
          </div>
        </form>
      )}
    </section>
  );
}

function PasskeyItem({ passkey, securityKey }: { passkey: Passkey; securityKey: readonly unknown[] }) {
  const client = useQueryClient();
  const [confirming, setConfirming] = useState(false);
  const focus = useConfirmFocus(confirming);
  const remove = useMutation({
    mutationFn: () => unwrap(api.POST(SECURITY, { body: { action: 'passkey_delete', id: passkey.id } })),
    onSettled: async (_data, error) => {
      if (!error || (error instanceof ApiError && error.code === 'not_owner')) setConfirming(false);
      await client.invalidateQueries({ queryKey: securityKey });
    },
  });
  return (
    <li>
      <div className="tok-head">
        <strong className="tok-title">{passkey.name}</strong>
        {confirming ? null : (
          <Button ref={focus.trigger} variant="secondary" onClick={() => setConfirming(true)}>
            Remove
          </Button>
        )}
      </div>
      <dl className="facts ses-facts">
        <dt>Added</dt>
        <dd>{when(passkey.created_at)}</dd>
        <dt>Last used</dt>
        <dd>{passkey.last_used_at ? when(passkey.last_used_at) : 'Never'}</dd>
      </dl>
      {confirming ? (
        <fieldset className="confirm ses-confirm">
          <legend className="sr-only">Remove {passkey.name}</legend>
          <p>
            Remove the passkey <strong>{passkey.name}</strong>? It no longer signs you in. It may stay listed on the
            device or in your password manager: delete it there too.
          </p>
          <ErrorAlert error={remove.error} />
          <div className="row">
            <Button ref={focus.confirm} variant="danger" busy={remove.isPending} onClick={() => remove.mutate()}>
              Remove passkey
            </Button>
            <Button variant="secondary" onClick={() => setConfirming(false)}>
              Cancel
            </Button>
          </div>
        </fieldset>
      ) : null}
    </li>
  );
}

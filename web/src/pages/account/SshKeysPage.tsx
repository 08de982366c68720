// The account's SSH keys: the list with each key's type and SHA256 fingerprint, adding one (a
// name and the one line of an id_*.pub file) and deleting one after a confirmation. A pasted
// private key is stopped here, before it leaves the browser.

import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { type FormEvent, useState } from 'react';
import { Link } from 'react-router';
import { useTitle } from '../../components/Layout.tsx';
import {
  Alert,
  Button,
  Empty,
  ErrorAlert,
  fieldError,
  Loading,
  PageHeader,
  TextArea,
  TextField,
} from '../../components/ui.tsx';
import { api, unwrap } from '../../lib/api.ts';
import { day } from '../../lib/format.ts';
import { AccountTabs } from './AccountPage.tsx';
import '../dashboard/pages.css';

const KEYS_KEY = ['ssh-keys'] as const;

async function fetchKeys() {
  return (await unwrap(api.GET('/api/v1/client/ssh-keys/'))).ssh_keys;
}

type SshKey = Awaited<ReturnType<typeof fetchKeys>>[number];

export default function SshKeysPage() {
  useTitle('SSH keys');
  const keys = useQuery({ queryKey: KEYS_KEY, queryFn: fetchKeys });
  return (
    <div className="acct">
      <PageHeader title="Account" />
      <AccountTabs />
      <p className="acct-intro">
        Keys saved here can be put on a virtual server when you <Link to="/order">order</Link> it, so you sign in with
        your key instead of a password. Deleting a key here does not remove it from servers that already have it.
      </p>
      <div className="grid two acct-grid">
        <section className="card" aria-labelledby="ssh-list">
          <div className="card-head">
            <h2 id="ssh-list">Your SSH keys</h2>
            {keys.data ? <span className="muted">{keys.data.length} saved</span> : null}
          </div>
          {keys.isPending ? <Loading what="Loading your keys" /> : null}
          {keys.isError ? <ErrorAlert error={keys.error} /> : null}
          {keys.data && keys.data.length === 0 ? (
            <Empty title="No SSH keys yet">
              <p>Add your public key with the form to have it installed on new virtual servers.</p>
            </Empty>
          ) : null}
          {keys.data && keys.data.length > 0 ? (
            <ul className="list">
              {keys.data.map((key) => (
                <KeyItem key={key.id} sshKey={key} />
              ))}
            </ul>
          ) : null}
        </section>
        <AddKey />
      </div>
    </div>
  );
}

function AddKey() {
  const client = useQueryClient();
  const [name, setName] = useState('');
  const [publicKey, setPublicKey] = useState('');
  const [local, setLocal] = useState<string | undefined>();
  const add = useMutation({
    mutationFn: () =>
      unwrap(api.POST('/api/v1/client/ssh-keys/', { body: { name: name.trim(), public_key: publicKey.trim() } })),
    onSuccess: async () => {
      setName('');
      setPublicKey('');
      await client.invalidateQueries({ queryKey: KEYS_KEY });
    },
  });
  const submit = (event: FormEvent) => {
    event.preventDefault();
    if (/PRIVATE KEY/.test(publicKey)) {
      setLocal(
        'is a private key. Never share it: paste the line of the matching .pub file instead (it was not sent anywhere).',
      );
      return;
    }
    setLocal(undefined);
    add.mutate();
  };
  const onKeyChange = (value: string) => {
    setPublicKey(value);
    setLocal(undefined);
    add.reset();
    // "ssh-ed25519 AAAA… asha@laptop": the comment names the key when no name is given yet.
    const comment = value.trim().split(/\s+/).slice(2).join(' ');
    if (!name && comment && !/PRIVATE KEY/.test(value)) setName(comment.slice(0, 64));
  };
  return (
    <section className="card" aria-labelledby="ssh-add">
      <h2 id="ssh-add">Add a key</h2>
      <form onSubmit={submit} noValidate>
        <TextArea
          label="Public key"
          value={publicKey}
          onChange={(e) => onKeyChange(e.target.value)}
          rows={5}
          spellCheck={false}
          autoComplete="off"
          placeholder="ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAA… you@laptop"
          hint={
            <>
              The one line of your <code>~/.ssh/id_ed25519.pub</code> (or an ECDSA key, or RSA of 2048 bits or more).
              Make one with <code>ssh-keygen -t ed25519</code>.
            </>
          }
          error={local ?? fieldError(add.error, 'public_key')}
        />
        <TextField
          label="Name"
          value={name}
          onChange={(e) => setName(e.target.value)}
          autoComplete="off"
          maxLength={64}
          placeholder="e.g. work laptop"
          hint="To recognise the key; filled in from the key's comment when it has one."
          error={fieldError(add.error, 'name')}
        />
        <ErrorAlert error={add.error} fields={['name', 'public_key']} />
        {add.isSuccess ? (
          <Alert kind="success">
            <p>{add.data.message}</p>
          </Alert>
        ) : null}
        <div className="row">
          <Button type="submit" busy={add.isPending}>
            Add key
          </Button>
        </div>
      </form>
    </section>
  );
}

function KeyItem({ sshKey }: { sshKey: SshKey }) {
  const client = useQueryClient();
  const [confirming, setConfirming] = useState(false);
  const remove = useMutation({
    mutationFn: () => unwrap(api.POST('/api/v1/client/ssh-keys/', { body: { action: 'delete', id: sshKey.id } })),
    onSuccess: async () => {
      await client.invalidateQueries({ queryKey: KEYS_KEY });
    },
  });
  return (
    <li className="ssh-item">
      <div className="tok-head">
        <div className="tok-title">
          <strong>{sshKey.name}</strong>{' '}
          <span className="muted">
            {sshKey.type}
            {sshKey.bits ? `, ${sshKey.bits} bits` : ''}
          </span>
        </div>
        {confirming ? null : (
          <Button variant="secondary" onClick={() => setConfirming(true)}>
            Delete
          </Button>
        )}
      </div>
      <dl className="ssh-facts">
        <div>
          <dt>Fingerprint</dt>
          <dd className="mono">{sshKey.fingerprint}</dd>
        </div>
        <div>
          <dt>Added</dt>
          <dd>{day(sshKey.created_at)}</dd>
        </div>
      </dl>
      <details className="ssh-public">
        <summary>Show the public key</summary>
        <p className="secret">{sshKey.public_key}</p>
      </details>
      {confirming ? (
        <fieldset className="confirm">
          <legend className="sr-only">Delete {sshKey.name}</legend>
          <p>
            Delete <strong>{sshKey.name}</strong>? New servers will not get it; servers that already have it keep it.
          </p>
          <ErrorAlert error={remove.error} />
          <div className="row">
            <Button variant="danger" busy={remove.isPending} onClick={() => remove.mutate()}>
              Delete key
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

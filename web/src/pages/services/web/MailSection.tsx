// Mailboxes of the domain: create (name, password, quota), change a password or quota, delete
// (after a confirmation that says the mail goes with it); the plan's limit beside the form.

import { type FormEvent, useState } from 'react';
import { Button, Empty, ErrorAlert, fieldError, Loading, Status, TextField } from '../../../components/ui.tsx';
import { ConfirmInline, Done, FormError, LimitNote, Meter, PasswordField, passwordError } from './parts.tsx';
import { limitOf, type Mailbox, useWeb, useWebMutation } from './webApi.ts';

type Editing = { email: string; what: 'password' | 'quota' | 'delete' } | null;

const QUOTA_HINT = 'In MB; 1024 MB = 1 GB. 0 means no quota (the account’s disk is the only limit).';

export function MailSection({ serviceId, domain }: { serviceId: number; domain: string }) {
  const query = useWeb(serviceId, 'mailboxes');
  const [editing, setEditing] = useState<Editing>(null);
  const [done, setDone] = useState<string | null>(null);
  if (query.isPending) return <Loading what="Loading mailboxes" />;
  if (query.isError) return <ErrorAlert error={query.error} />;
  const { mailboxes, limit } = query.data;
  return (
    <div className="web-section">
      <div className="grid two">
        <section className="card" aria-labelledby="web-mailboxes">
          <h3 id="web-mailboxes">Mailboxes of {domain}</h3>
          <Done message={done} />
          {mailboxes.length === 0 ? (
            <Empty title="No mailboxes yet">
              <p>
                Create one, like info@{domain}, with the form. Then read mail in Webmail (Open cPanel) or any mail app.
              </p>
            </Empty>
          ) : (
            <ul className="list">
              {mailboxes.map((box) => (
                <MailboxRow
                  key={box.email}
                  serviceId={serviceId}
                  box={box}
                  editing={editing?.email === box.email ? editing.what : null}
                  onEdit={(what) => {
                    setDone(null);
                    setEditing(what ? { email: box.email, what } : null);
                  }}
                  onDone={(message) => {
                    setEditing(null);
                    setDone(message);
                  }}
                />
              ))}
            </ul>
          )}
        </section>
        <section className="card" aria-labelledby="web-mailbox-create">
          <h3 id="web-mailbox-create">Create a mailbox</h3>
          <CreateMailbox serviceId={serviceId} domain={domain} used={mailboxes.length} limit={limit} />
        </section>
      </div>
    </div>
  );
}

function MailboxRow({
  serviceId,
  box,
  editing,
  onEdit,
  onDone,
}: {
  serviceId: number;
  box: Mailbox;
  editing: 'password' | 'quota' | 'delete' | null;
  onEdit: (what: 'password' | 'quota' | 'delete' | null) => void;
  onDone: (message: string) => void;
}) {
  return (
    <li>
      <div className="web-item">
        <div className="web-item-main">
          <p className="web-item-name">
            {box.email} {box.login_suspended ? <Status value="suspended" /> : null}
          </p>
          <Meter
            label="Storage"
            used={box.disk_used_bytes}
            limit={box.quota_bytes}
            unit="bytes"
            unlimitedText="no quota"
          />
        </div>
      </div>
      <div className="row web-item-actions">
        <Button
          variant="secondary"
          aria-expanded={editing === 'password'}
          aria-label={`Change password of ${box.email}`}
          onClick={() => onEdit(editing === 'password' ? null : 'password')}
        >
          Change password
        </Button>
        <Button
          variant="secondary"
          aria-expanded={editing === 'quota'}
          aria-label={`Change quota of ${box.email}`}
          onClick={() => onEdit(editing === 'quota' ? null : 'quota')}
        >
          Change quota
        </Button>
        <Button
          variant="secondary"
          aria-expanded={editing === 'delete'}
          aria-label={`Delete ${box.email}`}
          onClick={() => onEdit(editing === 'delete' ? null : 'delete')}
        >
          Delete
        </Button>
      </div>
      {editing === 'password' ? (
        <ChangePassword serviceId={serviceId} email={box.email} onDone={onDone} onCancel={() => onEdit(null)} />
      ) : null}
      {editing === 'quota' ? (
        <ChangeQuota
          serviceId={serviceId}
          email={box.email}
          current={box.quota_bytes}
          onDone={onDone}
          onCancel={() => onEdit(null)}
        />
      ) : null}
      {editing === 'delete' ? (
        <DeleteMailbox serviceId={serviceId} email={box.email} onDone={onDone} onCancel={() => onEdit(null)} />
      ) : null}
    </li>
  );
}

function ChangePassword({
  serviceId,
  email,
  onDone,
  onCancel,
}: {
  serviceId: number;
  email: string;
  onDone: (message: string) => void;
  onCancel: () => void;
}) {
  const [password, setPassword] = useState('');
  const change = useWebMutation(serviceId, 'mailbox_password', ['mailboxes']);
  function submit(event: FormEvent) {
    event.preventDefault();
    change.mutate({ email, password }, { onSuccess: () => onDone(`Password of ${email} changed.`) });
  }
  return (
    <form onSubmit={submit} className="web-inline-form">
      <PasswordField
        label={`New password for ${email}`}
        value={password}
        onChange={setPassword}
        error={passwordError(change.error)}
        hint="At least 8 characters. Mail apps signed in with the old password will ask for the new one."
        autoFocus
      />
      <FormError error={change.error} fields={['password']} />
      <div className="row">
        <Button type="submit" busy={change.isPending}>
          Save password
        </Button>
        <Button variant="secondary" onClick={onCancel}>
          Cancel
        </Button>
      </div>
    </form>
  );
}

function ChangeQuota({
  serviceId,
  email,
  current,
  onDone,
  onCancel,
}: {
  serviceId: number;
  email: string;
  current: number | null;
  onDone: (message: string) => void;
  onCancel: () => void;
}) {
  const [quota, setQuota] = useState(current === null ? '0' : String(Math.round(current / 1024 / 1024)));
  const change = useWebMutation(serviceId, 'mailbox_quota', ['mailboxes']);
  function submit(event: FormEvent) {
    event.preventDefault();
    const mb = Number(quota);
    change.mutate(
      { email, quota_mb: mb },
      {
        onSuccess: () =>
          onDone(`Quota of ${email} set to ${mb === 0 ? 'no limit' : `${mb.toLocaleString('en-IN')} MB`}.`),
      },
    );
  }
  return (
    <form onSubmit={submit} className="web-inline-form">
      <TextField
        label={`Quota of ${email} (MB)`}
        type="number"
        inputMode="numeric"
        min={0}
        max={1048576}
        step={1}
        value={quota}
        onChange={(e) => setQuota(e.target.value)}
        required
        error={fieldError(change.error, 'quota_mb')}
        hint={QUOTA_HINT}
        autoFocus
      />
      <FormError error={change.error} fields={['quota_mb']} />
      <div className="row">
        <Button type="submit" busy={change.isPending}>
          Save quota
        </Button>
        <Button variant="secondary" onClick={onCancel}>
          Cancel
        </Button>
      </div>
    </form>
  );
}

function DeleteMailbox({
  serviceId,
  email,
  onDone,
  onCancel,
}: {
  serviceId: number;
  email: string;
  onDone: (message: string) => void;
  onCancel: () => void;
}) {
  const remove = useWebMutation(serviceId, 'mailbox_delete', ['mailboxes', 'usage']);
  return (
    <ConfirmInline
      action="Delete mailbox"
      busy={remove.isPending}
      onCancel={onCancel}
      onConfirm={() => remove.mutate({ email }, { onSuccess: () => onDone(`Mailbox ${email} deleted.`) })}
    >
      <p>
        <strong>{email}</strong> and all the mail in it will be deleted. This cannot be undone; mail sent to it
        afterwards bounces.
      </p>
      <ErrorAlert error={remove.error} />
    </ConfirmInline>
  );
}

function CreateMailbox({
  serviceId,
  domain,
  used,
  limit,
}: {
  serviceId: number;
  domain: string;
  used: number;
  limit: number;
}) {
  const [email, setEmail] = useState('');
  const [password, setPassword] = useState('');
  const [quota, setQuota] = useState('1024');
  const create = useWebMutation(serviceId, 'mailbox_create', ['mailboxes', 'usage']);
  const atLimit = used >= limit;
  const local = email.trim().toLowerCase();
  const created = (create.data?.mailbox as { email?: string } | undefined)?.email;
  function submit(event: FormEvent) {
    event.preventDefault();
    create.mutate(
      { email: local, password, quota_mb: Number(quota) },
      {
        onSuccess: () => {
          setEmail('');
          setPassword('');
        },
      },
    );
  }
  return (
    <form onSubmit={submit} className="web-create">
      <LimitNote used={used} limit={limit} what="mailboxes" error={create.error} />
      <Done
        message={created ? `Mailbox ${created} created. Sign in to it with Webmail (in cPanel) or any mail app.` : null}
      />
      <fieldset disabled={atLimit} className="web-fields">
        <TextField
          label={`Mailbox name (before @${domain})`}
          value={email}
          onChange={(e) => setEmail(e.target.value)}
          autoComplete="off"
          autoCapitalize="off"
          spellCheck={false}
          maxLength={64}
          required
          error={fieldError(create.error, 'email')}
          hint={
            local && !local.includes('@')
              ? `The address will be ${local}@${domain}.`
              : `The part before @${domain}: letters, digits, dots, dashes, _ or +.`
          }
        />
        <PasswordField label="Password" value={password} onChange={setPassword} error={passwordError(create.error)} />
        <TextField
          label="Quota (MB)"
          type="number"
          inputMode="numeric"
          min={0}
          max={1048576}
          step={1}
          value={quota}
          onChange={(e) => setQuota(e.target.value)}
          required
          error={fieldError(create.error, 'quota_mb')}
          hint={QUOTA_HINT}
        />
        <FormError
          error={limitOf(create.error) === null ? create.error : null}
          fields={['email', 'password', 'quota_mb']}
        />
        <div className="row">
          <Button type="submit" busy={create.isPending}>
            Create mailbox
          </Button>
        </div>
      </fieldset>
    </form>
  );
}

// The account's profile (name; the e-mail address and username are shown, they are not changed
// here) and the password change, which needs the current password and signs out every other
// session. AccountTabs is the account area's sub-navigation (profile, security, sessions, billing
// details, API tokens, SSH keys, webhooks, activity, privacy), shared by its pages since the main
// navigation has only "Account".

import { useMutation } from '@tanstack/react-query';
import { type FormEvent, useEffect, useState } from 'react';
import { Link, NavLink } from 'react-router';
import { useTitle } from '../../components/Layout.tsx';
import { Alert, Button, ErrorAlert, fieldError, Loading, PageHeader, TextField } from '../../components/ui.tsx';
import { api, unwrap } from '../../lib/api.ts';
import { day } from '../../lib/format.ts';
import { type Account, useAccount, useSetAccount } from '../../lib/session.tsx';
import '../dashboard/pages.css';

export function AccountTabs() {
  return (
    <nav className="tabs acct-tabs" aria-label="Account">
      <NavLink to="/account" end>
        Profile
      </NavLink>
      <NavLink to="/account/security">Security</NavLink>
      <NavLink to="/account/sessions">Sessions</NavLink>
      <NavLink to="/account/billing">Billing details</NavLink>
      <NavLink to="/tokens">API tokens</NavLink>
      <NavLink to="/ssh-keys">SSH keys</NavLink>
      <NavLink to="/webhooks">Webhooks</NavLink>
      <NavLink to="/account/activity">Activity</NavLink>
      <NavLink to="/account/privacy">Privacy</NavLink>
    </nav>
  );
}

export default function AccountPage() {
  useTitle('Account');
  const account = useAccount();
  return (
    <div className="acct">
      <PageHeader title="Account" />
      <AccountTabs />
      {account.data ? (
        <div className="grid two acct-grid">
          <ProfileCard account={account.data} />
          <PasswordCard />
        </div>
      ) : (
        <Loading what="Loading your account" />
      )}
    </div>
  );
}

function ProfileCard({ account }: { account: NonNullable<Account> }) {
  const setAccount = useSetAccount();
  const [name, setName] = useState(account.name);
  useEffect(() => setName(account.name), [account.name]);
  const save = useMutation({
    mutationFn: () => unwrap(api.POST('/api/v1/client/account/', { body: { name: name.trim() } })),
    onSuccess: (data) => setAccount(data.account),
  });
  const submit = (event: FormEvent) => {
    event.preventDefault();
    save.mutate();
  };
  return (
    <section className="card" aria-labelledby="acct-profile">
      <h2 id="acct-profile">Profile</h2>
      <dl className="facts acct-facts">
        <dt>E-mail</dt>
        <dd>
          {account.email}{' '}
          {account.email_verified ? (
            <span className="status status-good">verified</span>
          ) : (
            <span className="status status-wait">not verified</span>
          )}
        </dd>
        <dt>Username</dt>
        <dd className="mono">{account.username}</dd>
        <dt>Member since</dt>
        <dd>{day(account.created_at)}</dd>
      </dl>
      <p className="hint">
        You sign in with your e-mail address or username. To change either, contact support: they cannot be changed
        here.
      </p>
      <form onSubmit={submit} noValidate className="acct-form">
        <TextField
          label="Name"
          value={name}
          onChange={(e) => {
            setName(e.target.value);
            save.reset();
          }}
          autoComplete="name"
          maxLength={128}
          required
          error={fieldError(save.error, 'name')}
          hint="2–128 characters; we use it in the mail we send you."
        />
        <ErrorAlert error={save.error} fields={['name']} />
        {save.isSuccess ? (
          <Alert kind="success">
            <p>{save.data.message}</p>
          </Alert>
        ) : null}
        <div className="row">
          <Button type="submit" busy={save.isPending} disabled={name.trim() === account.name}>
            Save name
          </Button>
        </div>
      </form>
    </section>
  );
}

function PasswordCard() {
  const [current, setCurrent] = useState('');
  const [password, setPassword] = useState('');
  const [confirm, setConfirm] = useState('');
  const [local, setLocal] = useState<Record<string, string>>({});
  const change = useMutation({
    mutationFn: () =>
      unwrap(api.POST('/api/v1/client/account/', { body: { current_password: current, password: password } })),
    onSuccess: () => {
      setCurrent('');
      setPassword('');
      setConfirm('');
    },
  });
  const submit = (event: FormEvent) => {
    event.preventDefault();
    const problems: Record<string, string> = {};
    if (!current) problems.current_password = 'is required to change the password';
    if (!password) problems.password = 'is required';
    else if (password !== confirm) problems.confirm = 'does not match the new password';
    setLocal(problems);
    if (Object.keys(problems).length === 0) change.mutate();
  };
  const ended = change.data && 'sessions_ended' in change.data ? change.data.sessions_ended : 0;
  return (
    <section className="card" aria-labelledby="acct-password">
      <h2 id="acct-password">Change password</h2>
      <Alert kind="info">
        <p>
          Changing your password <strong>signs you out on every other browser and device</strong>, and closes their open
          consoles. This browser stays signed in. API tokens keep working: revoke them on{' '}
          <Link to="/tokens">API tokens</Link> if they may be known to someone else.
        </p>
      </Alert>
      <form onSubmit={submit} noValidate className="acct-form">
        <TextField
          label="Current password"
          type="password"
          value={current}
          onChange={(e) => setCurrent(e.target.value)}
          autoComplete="current-password"
          required
          error={local.current_password ?? fieldError(change.error, 'current_password')}
        />
        <TextField
          label="New password"
          type="password"
          value={password}
          onChange={(e) => setPassword(e.target.value)}
          autoComplete="new-password"
          required
          error={local.password ?? fieldError(change.error, 'password')}
          hint="At least 8 characters, with a letter and a number; not your e-mail address or username."
        />
        <TextField
          label="Repeat the new password"
          type="password"
          value={confirm}
          onChange={(e) => setConfirm(e.target.value)}
          autoComplete="new-password"
          required
          error={local.confirm}
        />
        <ErrorAlert error={change.error} fields={['current_password', 'password']} />
        {change.isSuccess ? (
          <Alert kind="success">
            <p>
              Password changed.{' '}
              {ended > 0
                ? `${ended} other session${ended === 1 ? ' was' : 's were'} signed out.`
                : 'No other session was signed in.'}
            </p>
          </Alert>
        ) : null}
        <div className="row">
          <Button type="submit" busy={change.isPending}>
            Change password
          </Button>
        </div>
      </form>
    </section>
  );
}

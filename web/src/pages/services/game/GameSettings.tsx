// Startup variables (checked against the game's rules), subusers with the panel's permission
// names, and the server's settings: rename, the EULA, the game panel's sign-in, reinstall.

import { useQuery } from '@tanstack/react-query';
import { type FormEvent, useState } from 'react';
import {
  Alert,
  Button,
  Checkbox,
  CopyButton,
  Empty,
  ErrorAlert,
  fieldError,
  Loading,
  TextField,
  TypedConfirm,
} from '../../../components/ui.tsx';
import { api, unwrap } from '../../../lib/api.ts';
import { type GameServer, type GameSubuser, type GameVariable, useGame, useGameAction } from './gameApi.ts';

// ---- startup ----

function VariableForm({ serviceId, variable }: { serviceId: number; variable: GameVariable }) {
  const save = useGameAction<{ variable: GameVariable; message: string }>(serviceId, 'startup_var', ['startup']);
  const [value, setValue] = useState(variable.value ?? '');
  const submit = (event: FormEvent) => {
    event.preventDefault();
    save.mutate({ key: variable.key, value });
  };
  return (
    <li className="game-item">
      <form className="game-variable" onSubmit={submit}>
        <TextField
          label={variable.name}
          value={value}
          onChange={(e) => setValue(e.target.value)}
          maxLength={191}
          readOnly={!variable.editable}
          spellCheck={false}
          hint={
            <>
              {variable.description} <span className="mono">{variable.key}</span>
              {variable.default !== null ? ` · default ${variable.default || '(empty)'}` : ''}
              {variable.editable ? '' : ' · read-only'}
              {variable.rules ? (
                <>
                  {' '}
                  · rules <span className="mono">{variable.rules}</span>
                </>
              ) : null}
            </>
          }
          error={fieldError(save.error, 'value') ?? fieldError(save.error, 'key')}
        />
        {variable.editable ? (
          <div className="row">
            <Button type="submit" variant="secondary" busy={save.isPending} disabled={value === (variable.value ?? '')}>
              Save
            </Button>
            {save.isSuccess ? (
              <span className="muted" role="status">
                Saved; it applies at the next start.
              </span>
            ) : null}
          </div>
        ) : null}
        <ErrorAlert error={save.error} fields={['value', 'key']} />
      </form>
    </li>
  );
}

export function GameStartup({ serviceId }: { serviceId: number }) {
  const startup = useGame<{
    startup: { command: string; docker_images: Record<string, string>; variables: GameVariable[] };
  }>(serviceId, 'startup');
  if (startup.isPending) return <Loading what="Loading the startup settings" />;
  if (startup.error) return <ErrorAlert error={startup.error} />;
  const { command, variables } = startup.data.startup;
  return (
    <div className="game-section">
      <h3>Startup command</h3>
      <p className="secret">{command}</p>
      <h3>Variables</h3>
      {variables.length === 0 ? (
        <Empty title="No variables">
          <p>This game has no settings to change at startup.</p>
        </Empty>
      ) : (
        <ul className="list game-rows">
          {variables.map((v) => (
            <VariableForm key={`${v.key}:${v.value ?? ''}`} serviceId={serviceId} variable={v} />
          ))}
        </ul>
      )}
    </div>
  );
}

// ---- users ----

// Pterodactyl's permission names, grouped as its panel shows them.
const PERMISSIONS: [string, string, string[]][] = [
  ['control', 'Console and power', ['console', 'start', 'stop', 'restart']],
  ['file', 'Files', ['read', 'read-content', 'create', 'update', 'delete', 'archive', 'sftp']],
  ['backup', 'Backups', ['read', 'create', 'delete', 'download', 'restore']],
  ['database', 'Databases', ['read', 'create', 'update', 'delete', 'view_password']],
  ['schedule', 'Schedules', ['read', 'create', 'update', 'delete']],
  ['user', 'Users', ['read', 'create', 'update', 'delete']],
  ['allocation', 'Network', ['read', 'create', 'update', 'delete']],
  ['startup', 'Startup', ['read', 'update', 'docker-image']],
  ['settings', 'Settings', ['rename', 'reinstall']],
  ['activity', 'Activity', ['read']],
  ['websocket', 'Console socket', ['connect']],
];

function PermissionPicker({
  value,
  onChange,
  error,
}: {
  value: Set<string>;
  onChange: (next: Set<string>) => void;
  error: string | undefined;
}) {
  const flip = (name: string, on: boolean) => {
    const next = new Set(value);
    if (on) next.add(name);
    else next.delete(name);
    onChange(next);
  };
  return (
    <fieldset className={`game-permissions${error ? ' has-error' : ''}`}>
      <legend>Permissions</legend>
      <div className="row">
        <Button
          variant="ghost"
          onClick={() => onChange(new Set(PERMISSIONS.flatMap(([g, , names]) => names.map((n) => `${g}.${n}`))))}
        >
          Select all
        </Button>
        <Button variant="ghost" onClick={() => onChange(new Set())}>
          Select none
        </Button>
      </div>
      <div className="game-permission-groups">
        {PERMISSIONS.map(([group, label, names]) => (
          <fieldset key={group}>
            <legend>{label}</legend>
            {names.map((n) => (
              <Checkbox
                key={n}
                label={`${n} (${group}.${n})`}
                checked={value.has(`${group}.${n}`)}
                onChange={(e) => flip(`${group}.${n}`, e.target.checked)}
              />
            ))}
          </fieldset>
        ))}
      </div>
      {error ? <p className="field-error">{error}</p> : null}
    </fieldset>
  );
}

export function GameUsers({ serviceId }: { serviceId: number }) {
  const list = useGame<{ users: GameSubuser[] }>(serviceId, 'users');
  const invite = useGameAction<{ user: GameSubuser }>(serviceId, 'user_invite', ['users']);
  const update = useGameAction<{ user: GameSubuser }>(serviceId, 'user_update', ['users']);
  const remove = useGameAction(serviceId, 'user_remove', ['users']);
  const [form, setForm] = useState<{ user: GameSubuser | null; email: string; permissions: Set<string> } | null>(null);
  const [confirm, setConfirm] = useState<GameSubuser | null>(null);
  const [notice, setNotice] = useState<string | null>(null);
  const saving = form?.user ? update : invite;

  const submit = (event: FormEvent) => {
    event.preventDefault();
    if (!form) return;
    const permissions = [...form.permissions];
    const onSuccess = (a: { user: GameSubuser }) => {
      setNotice(form.user ? `Permissions of ${a.user.email} saved.` : `${a.user.email} invited.`);
      setForm(null);
    };
    if (form.user) update.mutate({ uuid: form.user.uuid, permissions }, { onSuccess });
    else invite.mutate({ email: form.email.trim(), permissions }, { onSuccess });
  };

  return (
    <div className="game-section">
      <div className="game-section-head">
        <p className="muted">People you let manage this server on the game panel.</p>
        {!form ? (
          <Button
            onClick={() => {
              invite.reset();
              setForm({
                user: null,
                email: '',
                permissions: new Set([
                  'control.console',
                  'control.start',
                  'control.stop',
                  'control.restart',
                  'websocket.connect',
                ]),
              });
            }}
          >
            Invite someone
          </Button>
        ) : null}
      </div>

      {form ? (
        <form className="card game-dialog" onSubmit={submit}>
          <h3>{form.user ? `Permissions of ${form.user.email}` : 'Invite someone'}</h3>
          {form.user ? null : (
            <TextField
              label="Email"
              type="email"
              required
              maxLength={191}
              value={form.email}
              onChange={(e) => setForm({ ...form, email: e.target.value })}
              error={fieldError(saving.error, 'email')}
              hint="They get an e-mail from the game panel to set a password (at most 10 invites an hour)."
            />
          )}
          <PermissionPicker
            value={form.permissions}
            onChange={(permissions) => setForm({ ...form, permissions })}
            error={fieldError(saving.error, 'permissions')}
          />
          <ErrorAlert error={saving.error} fields={['email', 'permissions']} />
          <div className="row">
            <Button type="submit" busy={saving.isPending} disabled={form.permissions.size === 0}>
              {form.user ? 'Save permissions' : 'Send invite'}
            </Button>
            <Button variant="secondary" onClick={() => setForm(null)}>
              Cancel
            </Button>
          </div>
        </form>
      ) : null}

      {confirm ? (
        <div className="confirm" role="alertdialog" aria-labelledby="game-user-confirm">
          <p id="game-user-confirm">
            <strong>Take away {confirm.email}'s access to this server?</strong>
          </p>
          <ErrorAlert error={remove.error} />
          <div className="row">
            <Button
              variant="danger"
              busy={remove.isPending}
              onClick={() =>
                remove.mutate(
                  { uuid: confirm.uuid },
                  {
                    onSuccess: () => {
                      setNotice(`${confirm.email} removed.`);
                      setConfirm(null);
                    },
                  },
                )
              }
            >
              Remove access
            </Button>
            <Button variant="secondary" autoFocus onClick={() => setConfirm(null)}>
              Cancel
            </Button>
          </div>
        </div>
      ) : null}

      {notice ? <Alert kind="success">{notice}</Alert> : null}
      {list.isPending ? <Loading what="Loading users" /> : null}
      <ErrorAlert error={list.error} />
      {list.data && list.data.users.length === 0 ? (
        <Empty title="Only you">
          <p>Invite a friend to help run the server: Invite someone.</p>
        </Empty>
      ) : null}
      {list.data && list.data.users.length > 0 ? (
        <ul className="list game-rows">
          {list.data.users.map((u) => (
            <li key={u.uuid} className="game-item">
              <div className="game-item-main">
                <strong>{u.email}</strong>
                <div className="muted">
                  {u.permissions.length} permission{u.permissions.length === 1 ? '' : 's'}:{' '}
                  {u.permissions.slice(0, 4).join(', ')}
                  {u.permissions.length > 4 ? ', …' : ''}
                </div>
              </div>
              <div className="row">
                <Button
                  variant="secondary"
                  onClick={() => {
                    update.reset();
                    setForm({ user: u, email: u.email, permissions: new Set(u.permissions) });
                  }}
                >
                  Permissions
                </Button>
                <Button
                  variant="ghost"
                  onClick={() => {
                    remove.reset();
                    setConfirm(u);
                  }}
                >
                  Remove…
                </Button>
              </div>
            </li>
          ))}
        </ul>
      ) : null}
    </div>
  );
}

// ---- settings ----

export function GameSettings({ serviceId, server }: { serviceId: number; server: GameServer | undefined }) {
  const service = useQuery({
    queryKey: ['game', serviceId, 'service-label'],
    queryFn: async () => {
      const data = await unwrap(api.GET('/api/v1/client/services/', { params: { query: { id: serviceId } } }));
      return (data as { service?: { label: string } }).service?.label ?? null;
    },
    staleTime: 60_000,
  });
  const rename = useGameAction<{ name: string }>(serviceId, 'settings_rename', ['overview']);
  const eula = useGameAction(serviceId, 'eula_accept');
  const password = useGameAction<{ panel: { url: string; username: string; password: string } }>(
    serviceId,
    'panel_password',
  );
  const reinstall = useGameAction(serviceId, 'reinstall', ['overview', 'provision_status']);
  const [askReinstall, setAskReinstall] = useState(false);

  const submitRename = (event: FormEvent<HTMLFormElement>) => {
    event.preventDefault();
    const form = new FormData(event.currentTarget);
    const description = String(form.get('description') ?? '');
    rename.mutate({ name: String(form.get('name') ?? ''), description });
  };

  return (
    <div className="game-section game-settings">
      {server ? (
        <section className="card">
          <h3>Server</h3>
          <dl className="facts">
            <dt>Address for players</dt>
            <dd className="mono">{server.address ?? '—'}</dd>
            <dt>SFTP</dt>
            <dd className="mono">
              {server.sftp.host}:{server.sftp.port}
            </dd>
            <dt>Memory</dt>
            <dd>{server.limits.memory_mb} MB</dd>
            <dt>CPU</dt>
            <dd>{server.limits.cpu_percent}%</dd>
            <dt>Disk</dt>
            <dd>{(server.limits.disk_mb / 1024).toFixed(0)} GB</dd>
            <dt>Image</dt>
            <dd className="mono">{server.docker_image}</dd>
          </dl>
        </section>
      ) : null}

      <form className="card" onSubmit={submitRename} key={server?.name ?? ''}>
        <h3>Name on the game panel</h3>
        <TextField
          label="Name"
          name="name"
          required
          maxLength={191}
          defaultValue={server?.name ?? ''}
          error={fieldError(rename.error, 'name')}
        />
        <TextField
          label="Description (optional)"
          name="description"
          maxLength={500}
          defaultValue={server?.description ?? ''}
          error={fieldError(rename.error, 'description')}
        />
        <ErrorAlert error={rename.error} fields={['name', 'description']} />
        <div className="row">
          <Button type="submit" busy={rename.isPending}>
            Rename
          </Button>
          {rename.isSuccess ? (
            <span className="muted" role="status">
              Renamed. Your service keeps its label{service.data ? ` (${service.data})` : ''}.
            </span>
          ) : null}
        </div>
      </form>

      <section className="card">
        <h3>Game licence</h3>
        <p>Minecraft starts only once its EULA is accepted (eula=true in eula.txt).</p>
        <div className="row">
          <Button variant="secondary" busy={eula.isPending} onClick={() => eula.mutate({})}>
            Accept the EULA
          </Button>
          {eula.isSuccess ? (
            <span className="muted" role="status">
              Accepted.
            </span>
          ) : null}
        </div>
        <ErrorAlert error={eula.error} />
      </section>

      <section className="card">
        <h3>Sign in to the game panel</h3>
        <p>
          The game panel has no one-time sign-in. Set a new password for your panel user (the same user for all your
          game servers on this panel); it is shown once.
        </p>
        <div className="row">
          <Button variant="secondary" busy={password.isPending} onClick={() => password.mutate({})}>
            Set a new panel password
          </Button>
        </div>
        <ErrorAlert error={password.error} />
        {password.data ? (
          <Alert kind="success">
            <p>Keep this password now: it is not shown again.</p>
            <dl className="facts">
              <dt>Sign-in page</dt>
              <dd>
                <a href={password.data.panel.url} rel="noreferrer" target="_blank">
                  {password.data.panel.url}
                </a>
              </dd>
              <dt>Username</dt>
              <dd className="mono">{password.data.panel.username}</dd>
              <dt>Password</dt>
              <dd className="secret">{password.data.panel.password}</dd>
            </dl>
            <div className="row">
              <CopyButton text={password.data.panel.password} label="Copy password" />
              <Button variant="ghost" onClick={() => password.reset()}>
                I have saved it
              </Button>
            </div>
          </Alert>
        ) : null}
      </section>

      <section className="card">
        <h3>Reinstall</h3>
        <p>The game's install script runs again; files it installs are replaced. Make a backup first.</p>
        {reinstall.isSuccess ? (
          <Alert kind="success">
            Reinstall started. The console shows its progress; the server is unavailable meanwhile.
          </Alert>
        ) : null}
        {askReinstall && service.data ? (
          <TypedConfirm
            word={service.data}
            action="Reinstall the game"
            busy={reinstall.isPending}
            onConfirm={() => reinstall.mutate({ confirm: service.data }, { onSuccess: () => setAskReinstall(false) })}
            onCancel={() => setAskReinstall(false)}
          >
            <p>
              <strong>Reinstall {service.data}?</strong> The server stops while the game is installed again.
            </p>
            <ErrorAlert error={reinstall.error} />
          </TypedConfirm>
        ) : (
          <div className="row">
            <Button variant="danger" onClick={() => setAskReinstall(true)} disabled={!service.data}>
              Reinstall…
            </Button>
          </div>
        )}
        <ErrorAlert error={service.error} />
      </section>
    </div>
  );
}

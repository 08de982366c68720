// Backups (with the plan's limit) and MySQL databases (passwords shown once, on create and on
// rotate). Each: a list, a create form with its errors beside the fields, and the row actions
// the API offers.

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
  TextArea,
  TextField,
} from '../../../components/ui.tsx';
import { when } from '../../../lib/format.ts';
import { bytes, type GameBackup, type GameDatabase, gameRead, useGame, useGameAction } from './gameApi.ts';

const BACKUP_TONE: Record<GameBackup['status'], string> = {
  in_progress: 'pending',
  completed: 'succeeded',
  failed: 'failed',
};
const BACKUP_WORD: Record<GameBackup['status'], string> = {
  in_progress: 'in progress',
  completed: 'completed',
  failed: 'failed',
};

export function GameBackups({ serviceId }: { serviceId: number }) {
  const list = useGame<{ backups: GameBackup[]; count: number; limit: number }>(serviceId, 'backups', undefined, {
    // A backup completes in the background: ask again while one runs.
    refetchInterval: (data) => (data?.backups.some((b) => b.status === 'in_progress') ? 4000 : false),
  });
  const create = useGameAction<{ backup: GameBackup }>(serviceId, 'backup_create', ['backups']);
  const restore = useGameAction(serviceId, 'backup_restore', ['backups']);
  const remove = useGameAction(serviceId, 'backup_delete', ['backups']);
  const [confirm, setConfirm] = useState<{ kind: 'restore' | 'delete'; backup: GameBackup } | null>(null);
  const [truncate, setTruncate] = useState(false);
  const [notice, setNotice] = useState<string | null>(null);
  const [rowError, setRowError] = useState<unknown>(null);
  const [showForm, setShowForm] = useState(false);

  const full = list.data ? list.data.count >= list.data.limit : false;

  const submit = (event: FormEvent<HTMLFormElement>) => {
    event.preventDefault();
    const form = new FormData(event.currentTarget);
    const name = String(form.get('name') ?? '').trim();
    const ignored = String(form.get('ignored') ?? '')
      .split('\n')
      .map((line) => line.trim())
      .filter(Boolean);
    create.mutate(
      { ...(name ? { name } : {}), ...(ignored.length ? { ignored } : {}), locked: form.get('locked') === 'on' },
      {
        onSuccess: (a) => {
          setNotice(`Backup ${a.backup.name} started; it completes in the background.`);
          setShowForm(false);
        },
      },
    );
  };

  const download = async (backup: GameBackup) => {
    setRowError(null);
    try {
      const answer = await gameRead<{ download: { url: string } }>(serviceId, 'backup_download', { uuid: backup.uuid });
      window.location.assign(answer.download.url);
    } catch (error) {
      setRowError(error);
    }
  };

  return (
    <div className="game-section">
      <div className="game-section-head">
        <p>
          {list.data ? (
            <>
              {list.data.count} of {list.data.limit} backups used.
            </>
          ) : null}
        </p>
        {!showForm ? (
          <Button onClick={() => setShowForm(true)} disabled={full}>
            New backup
          </Button>
        ) : null}
      </div>
      {full ? <p className="hint">Your plan keeps {list.data?.limit} backups: delete one to make another.</p> : null}

      {showForm ? (
        <form className="card game-dialog" onSubmit={submit}>
          <h3>New backup</h3>
          <TextField label="Name (optional)" name="name" maxLength={191} error={fieldError(create.error, 'name')} />
          <TextArea
            label="Leave out (optional)"
            name="ignored"
            rows={3}
            hint="One file or pattern a line, e.g. logs/ or *.log."
            error={fieldError(create.error, 'ignored')}
          />
          <Checkbox label="Lock it (a locked backup cannot be deleted until unlocked)" name="locked" />
          <ErrorAlert error={create.error} fields={['name', 'ignored', 'locked']} />
          <div className="row">
            <Button type="submit" busy={create.isPending}>
              Start backup
            </Button>
            <Button variant="secondary" onClick={() => setShowForm(false)}>
              Cancel
            </Button>
          </div>
        </form>
      ) : null}

      {confirm ? (
        <div className="confirm" role="alertdialog" aria-labelledby="game-backup-confirm">
          {confirm.kind === 'restore' ? (
            <>
              <p id="game-backup-confirm">
                <strong>Restore {confirm.backup.name}?</strong> The server is stopped while its files are replaced by
                the backup's.
              </p>
              <Checkbox
                label="Delete every file first (files made after the backup are removed too)"
                checked={truncate}
                onChange={(e) => setTruncate(e.target.checked)}
              />
            </>
          ) : (
            <p id="game-backup-confirm">
              <strong>Delete the backup {confirm.backup.name}?</strong> It cannot be brought back.
            </p>
          )}
          <ErrorAlert error={confirm.kind === 'restore' ? restore.error : remove.error} />
          <div className="row">
            <Button
              variant="danger"
              busy={restore.isPending || remove.isPending}
              onClick={() => {
                const after = (message: string) => () => {
                  setNotice(message);
                  setConfirm(null);
                };
                if (confirm.kind === 'restore') {
                  restore.mutate(
                    { uuid: confirm.backup.uuid, truncate },
                    { onSuccess: after(`Restoring ${confirm.backup.name}; the server starts again when it is done.`) },
                  );
                } else {
                  remove.mutate(
                    { uuid: confirm.backup.uuid },
                    { onSuccess: after(`Backup ${confirm.backup.name} deleted.`) },
                  );
                }
              }}
            >
              {confirm.kind === 'restore' ? 'Restore' : 'Delete backup'}
            </Button>
            <Button variant="secondary" autoFocus onClick={() => setConfirm(null)}>
              Cancel
            </Button>
          </div>
        </div>
      ) : null}

      {notice ? <Alert kind="success">{notice}</Alert> : null}
      <ErrorAlert error={rowError} />
      {list.isPending ? <Loading what="Loading backups" /> : null}
      <ErrorAlert error={list.error} />
      {list.data && list.data.backups.length === 0 ? (
        <Empty title="No backups yet">
          <p>Make one before you change plugins or the world: New backup.</p>
        </Empty>
      ) : null}
      {list.data && list.data.backups.length > 0 ? (
        <ul className="list game-rows">
          {list.data.backups.map((b) => (
            <li key={b.uuid} className="game-item">
              <div className="game-item-main">
                <strong>{b.name}</strong>{' '}
                <span className={`status status-${TONES[BACKUP_TONE[b.status]] ?? 'off'}`}>
                  {BACKUP_WORD[b.status]}
                </span>
                {b.locked ? <span className="muted"> · locked</span> : null}
                <div className="muted">
                  {when(b.created_at)}
                  {b.status === 'completed' ? ` · ${bytes(b.bytes)}` : ''}
                </div>
              </div>
              <div className="row">
                <Button variant="secondary" disabled={b.status !== 'completed'} onClick={() => void download(b)}>
                  Download
                </Button>
                <Button
                  variant="secondary"
                  disabled={b.status !== 'completed'}
                  onClick={() => {
                    setTruncate(false);
                    restore.reset();
                    setConfirm({ kind: 'restore', backup: b });
                  }}
                >
                  Restore…
                </Button>
                <Button
                  variant="ghost"
                  disabled={b.locked}
                  title={b.locked ? 'Locked backups cannot be deleted' : undefined}
                  onClick={() => {
                    remove.reset();
                    setConfirm({ kind: 'delete', backup: b });
                  }}
                >
                  Delete…
                </Button>
              </div>
            </li>
          ))}
        </ul>
      ) : null}
    </div>
  );
}

const TONES: Record<string, string> = { pending: 'wait', succeeded: 'good', failed: 'bad' };

export function GameDatabases({ serviceId }: { serviceId: number }) {
  const list = useGame<{ databases: GameDatabase[]; limit: number }>(serviceId, 'databases');
  const create = useGameAction<{ database: GameDatabase }>(serviceId, 'db_create', ['databases']);
  const rotate = useGameAction<{ database: GameDatabase }>(serviceId, 'db_rotate', ['databases']);
  const remove = useGameAction(serviceId, 'db_delete', ['databases']);
  const [secret, setSecret] = useState<GameDatabase | null>(null);
  const [confirm, setConfirm] = useState<GameDatabase | null>(null);
  const [notice, setNotice] = useState<string | null>(null);
  const [showForm, setShowForm] = useState(false);
  const full = list.data ? list.data.databases.length >= list.data.limit : false;

  const submit = (event: FormEvent<HTMLFormElement>) => {
    event.preventDefault();
    const form = new FormData(event.currentTarget);
    const database = String(form.get('database') ?? '').trim();
    const remote = String(form.get('remote') ?? '').trim();
    create.mutate(
      { database, ...(remote ? { remote } : {}) },
      {
        onSuccess: (a) => {
          setSecret(a.database);
          setNotice(null);
          setShowForm(false);
        },
      },
    );
  };

  return (
    <div className="game-section">
      <div className="game-section-head">
        <p>{list.data ? `${list.data.databases.length} of ${list.data.limit} databases used.` : null}</p>
        {!showForm ? (
          <Button onClick={() => setShowForm(true)} disabled={full}>
            New database
          </Button>
        ) : null}
      </div>
      {full && list.data ? (
        <p className="hint">
          Your plan has {list.data.limit} database{list.data.limit === 1 ? '' : 's'}
          {list.data.limit > 0 ? ': delete one to make another' : ''}.
        </p>
      ) : null}

      {showForm ? (
        <form className="card game-dialog" onSubmit={submit}>
          <h3>New database</h3>
          <TextField
            label="Database name"
            name="database"
            required
            minLength={3}
            maxLength={48}
            pattern="[A-Za-z0-9_\-]+"
            hint="3–48 letters, digits, dashes or underscores."
            error={fieldError(create.error, 'database')}
          />
          <TextField
            label="Connections from (optional)"
            name="remote"
            maxLength={64}
            placeholder="%"
            hint="% lets any address connect; an IP address allows only that one."
            error={fieldError(create.error, 'remote')}
          />
          <ErrorAlert error={create.error} fields={['database', 'remote']} />
          <div className="row">
            <Button type="submit" busy={create.isPending}>
              Create database
            </Button>
            <Button variant="secondary" onClick={() => setShowForm(false)}>
              Cancel
            </Button>
          </div>
        </form>
      ) : null}

      {secret?.password ? (
        <Alert kind="success">
          <p>
            <strong>Password of {secret.name}</strong>: keep it now, it is not shown again.
          </p>
          <p className="secret">{secret.password}</p>
          <div className="row">
            <CopyButton text={secret.password} label="Copy password" />
            <Button variant="ghost" onClick={() => setSecret(null)}>
              I have saved it
            </Button>
          </div>
        </Alert>
      ) : null}

      {confirm ? (
        <div className="confirm" role="alertdialog" aria-labelledby="game-db-confirm">
          <p id="game-db-confirm">
            <strong>Delete the database {confirm.name} and all its data?</strong> This cannot be undone.
          </p>
          <ErrorAlert error={remove.error} />
          <div className="row">
            <Button
              variant="danger"
              busy={remove.isPending}
              onClick={() =>
                remove.mutate(
                  { id: confirm.id },
                  {
                    onSuccess: () => {
                      setNotice(`Database ${confirm.name} deleted.`);
                      setConfirm(null);
                    },
                  },
                )
              }
            >
              Delete database
            </Button>
            <Button variant="secondary" autoFocus onClick={() => setConfirm(null)}>
              Cancel
            </Button>
          </div>
        </div>
      ) : null}

      {notice ? <Alert kind="success">{notice}</Alert> : null}
      <ErrorAlert error={rotate.error} />
      {list.isPending ? <Loading what="Loading databases" /> : null}
      <ErrorAlert error={list.error} />
      {list.data && list.data.databases.length === 0 ? (
        <Empty title="No databases">
          <p>Plugins that keep data in MySQL need one: New database.</p>
        </Empty>
      ) : null}
      {list.data && list.data.databases.length > 0 ? (
        <ul className="list game-rows">
          {list.data.databases.map((d) => (
            <li key={d.id} className="game-item">
              <dl className="facts game-item-main">
                <dt>Database</dt>
                <dd className="mono">{d.name}</dd>
                <dt>Username</dt>
                <dd className="mono">{d.username}</dd>
                <dt>Host</dt>
                <dd className="mono">{d.host}</dd>
                <dt>Connections from</dt>
                <dd className="mono">{d.connections_from}</dd>
              </dl>
              <div className="row">
                <Button
                  variant="secondary"
                  busy={rotate.isPending && rotate.variables?.id === d.id}
                  onClick={() => rotate.mutate({ id: d.id }, { onSuccess: (a) => setSecret(a.database) })}
                >
                  New password
                </Button>
                <Button
                  variant="ghost"
                  onClick={() => {
                    remove.reset();
                    setConfirm(d);
                  }}
                >
                  Delete…
                </Button>
              </div>
            </li>
          ))}
        </ul>
      ) : null}
    </div>
  );
}

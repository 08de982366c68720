// MySQL databases and their users: names are typed without the account's prefix (shown, and
// added by the server), the plan's limit beside the create form, users given privileges on a
// database, deletion of a database only after its name is typed.

import { type FormEvent, useState } from 'react';
import {
  Button,
  Checkbox,
  Empty,
  ErrorAlert,
  fieldError,
  Loading,
  SelectField,
  TextField,
  TypedConfirm,
} from '../../../components/ui.tsx';
import { bytes } from '../../../lib/format.ts';
import { ConfirmInline, Done, FormError, LimitNote, nameError, PasswordField, passwordError } from './parts.tsx';
import { limitOf, useWeb, useWebMutation, type WebDatabase, type WebDbUser } from './webApi.ts';

const PRIVILEGES = [
  'SELECT',
  'INSERT',
  'UPDATE',
  'DELETE',
  'CREATE',
  'DROP',
  'ALTER',
  'INDEX',
  'REFERENCES',
  'CREATE TEMPORARY TABLES',
  'LOCK TABLES',
  'EXECUTE',
  'CREATE VIEW',
  'SHOW VIEW',
  'CREATE ROUTINE',
  'ALTER ROUTINE',
  'EVENT',
  'TRIGGER',
];

const NAME_HINT = 'Lowercase letters, digits and _.';

export function DatabasesSection({ serviceId }: { serviceId: number }) {
  const query = useWeb(serviceId, 'databases');
  if (query.isPending) return <Loading what="Loading databases" />;
  if (query.isError) return <ErrorAlert error={query.error} />;
  const { prefix, databases, users, limit } = query.data;
  const pre = prefix ?? '';
  return (
    <div className="web-section">
      <p className="muted">
        Every database and database user name starts with <code className="web-prefix">{pre || '(no prefix)'}</code>.
        Type only the rest; the prefix is added for you. Use the full names (with the prefix) in your application's
        settings.
      </p>
      <div className="grid two">
        <section className="card" aria-labelledby="web-dbs">
          <h3 id="web-dbs">Databases</h3>
          <DatabaseList serviceId={serviceId} databases={databases} />
          <CreateDatabase serviceId={serviceId} prefix={pre} used={databases.length} limit={limit} />
        </section>
        <section className="card" aria-labelledby="web-dbusers">
          <h3 id="web-dbusers">Database users</h3>
          <UserList serviceId={serviceId} users={users} />
          <CreateUser serviceId={serviceId} prefix={pre} />
        </section>
      </div>
      <section className="card" aria-labelledby="web-assign">
        <h3 id="web-assign">Give a user access to a database</h3>
        <AssignForm serviceId={serviceId} databases={databases} users={users} />
      </section>
    </div>
  );
}

function DatabaseList({ serviceId, databases }: { serviceId: number; databases: WebDatabase[] }) {
  const [deleting, setDeleting] = useState<string | null>(null);
  const remove = useWebMutation(serviceId, 'db_delete', ['databases', 'usage']);
  if (databases.length === 0) {
    return (
      <>
        <Done message={deletedName(remove.data)} />
        <Empty title="No databases yet">
          <p>Create one below, then create a user and give it access, for WordPress or your own app.</p>
        </Empty>
      </>
    );
  }
  return (
    <>
      <Done message={deletedName(remove.data)} />
      <ul className="list">
        {databases.map((db) => (
          <li key={db.name}>
            <div className="web-item">
              <div>
                <p className="web-item-name mono">{db.name}</p>
                <p className="muted">
                  {bytes(db.disk_bytes)} ·{' '}
                  {db.users.length === 0 ? 'no users have access yet' : `users: ${db.users.join(', ')}`}
                </p>
              </div>
              {deleting !== db.name ? (
                <Button
                  variant="secondary"
                  onClick={() => {
                    remove.reset();
                    setDeleting(db.name);
                  }}
                  aria-label={`Delete database ${db.name}`}
                >
                  Delete
                </Button>
              ) : null}
            </div>
            {deleting === db.name ? (
              <TypedConfirm
                word={db.name}
                action="Delete database"
                busy={remove.isPending}
                onCancel={() => setDeleting(null)}
                onConfirm={() => remove.mutate({ name: db.name }, { onSuccess: () => setDeleting(null) })}
              >
                <p>
                  <strong>{db.name}</strong> and all its tables and data will be deleted. This cannot be undone.
                </p>
                <ErrorAlert error={remove.error} />
              </TypedConfirm>
            ) : null}
          </li>
        ))}
      </ul>
    </>
  );
}

function CreateDatabase({
  serviceId,
  prefix,
  used,
  limit,
}: {
  serviceId: number;
  prefix: string;
  used: number;
  limit: number;
}) {
  const [name, setName] = useState('');
  const create = useWebMutation(serviceId, 'db_create', ['databases', 'usage']);
  const full = withPrefix(prefix, name.trim());
  const atLimit = used >= limit;
  function submit(event: FormEvent) {
    event.preventDefault();
    create.mutate({ name: name.trim() }, { onSuccess: () => setName('') });
  }
  return (
    <form onSubmit={submit} className="web-create" aria-labelledby="web-db-create">
      <h4 id="web-db-create">Create a database</h4>
      <Done message={createdName(create.data, 'database')} />
      <LimitNote used={used} limit={limit} what="databases" error={create.error} />
      <fieldset disabled={atLimit} className="web-fields">
        <TextField
          label={`Database name (after ${prefix || 'the prefix'})`}
          value={name}
          onChange={(e) => setName(e.target.value)}
          autoComplete="off"
          autoCapitalize="off"
          spellCheck={false}
          maxLength={64}
          required
          error={nameError(create.error, 'name')}
          hint={full ? `${NAME_HINT} It will be called ${full}.` : NAME_HINT}
        />
        <FormError error={limitOf(create.error) === null ? create.error : null} fields={['name']} />
        <div className="row">
          <Button type="submit" busy={create.isPending}>
            Create database
          </Button>
        </div>
      </fieldset>
    </form>
  );
}

function UserList({ serviceId, users }: { serviceId: number; users: WebDbUser[] }) {
  const [deleting, setDeleting] = useState<string | null>(null);
  const remove = useWebMutation(serviceId, 'db_user_delete', ['databases']);
  if (users.length === 0) {
    return (
      <>
        <Done message={deletedName(remove.data)} />
        <Empty title="No database users yet">
          <p>Create a user below, with a strong password, then give it access to a database.</p>
        </Empty>
      </>
    );
  }
  return (
    <>
      <Done message={deletedName(remove.data)} />
      <ul className="list">
        {users.map((user) => (
          <li key={user.name}>
            <div className="web-item">
              <div>
                <p className="web-item-name mono">{user.name}</p>
                <p className="muted">
                  {user.databases.length === 0 ? 'no database access yet' : `access: ${user.databases.join(', ')}`}
                </p>
              </div>
              {deleting !== user.name ? (
                <Button
                  variant="secondary"
                  onClick={() => {
                    remove.reset();
                    setDeleting(user.name);
                  }}
                  aria-label={`Delete database user ${user.name}`}
                >
                  Delete
                </Button>
              ) : null}
            </div>
            {deleting === user.name ? (
              <ConfirmInline
                action={`Delete user ${user.name}`}
                busy={remove.isPending}
                onCancel={() => setDeleting(null)}
                onConfirm={() => remove.mutate({ name: user.name }, { onSuccess: () => setDeleting(null) })}
              >
                <p>
                  Applications that sign in as <strong>{user.name}</strong> will stop working. The databases and their
                  data stay.
                </p>
                <ErrorAlert error={remove.error} />
              </ConfirmInline>
            ) : null}
          </li>
        ))}
      </ul>
    </>
  );
}

function CreateUser({ serviceId, prefix }: { serviceId: number; prefix: string }) {
  const [name, setName] = useState('');
  const [password, setPassword] = useState('');
  const create = useWebMutation(serviceId, 'db_user_create', ['databases']);
  const full = withPrefix(prefix, name.trim());
  function submit(event: FormEvent) {
    event.preventDefault();
    create.mutate(
      { name: name.trim(), password },
      {
        onSuccess: () => {
          setName('');
          setPassword('');
        },
      },
    );
  }
  return (
    <form onSubmit={submit} className="web-create" aria-labelledby="web-user-create">
      <h4 id="web-user-create">Create a database user</h4>
      <Done message={createdName(create.data, 'user')} />
      <TextField
        label={`User name (after ${prefix || 'the prefix'})`}
        value={name}
        onChange={(e) => setName(e.target.value)}
        autoComplete="off"
        autoCapitalize="off"
        spellCheck={false}
        maxLength={64}
        required
        error={nameError(create.error, 'name')}
        hint={full ? `${NAME_HINT} It will be called ${full}.` : NAME_HINT}
      />
      <PasswordField label="Password" value={password} onChange={setPassword} error={passwordError(create.error)} />
      <FormError error={create.error} fields={['name', 'password']} />
      <div className="row">
        <Button type="submit" busy={create.isPending}>
          Create user
        </Button>
      </div>
    </form>
  );
}

function AssignForm({
  serviceId,
  databases,
  users,
}: {
  serviceId: number;
  databases: WebDatabase[];
  users: WebDbUser[];
}) {
  const [user, setUser] = useState('');
  const [database, setDatabase] = useState('');
  const [all, setAll] = useState(true);
  const [chosen, setChosen] = useState<string[]>(['SELECT', 'INSERT', 'UPDATE', 'DELETE']);
  const assign = useWebMutation(serviceId, 'db_assign', ['databases']);
  if (databases.length === 0 || users.length === 0) {
    return (
      <p className="muted">
        {databases.length === 0 && users.length === 0
          ? 'Create a database and a database user first; then give the user access here.'
          : databases.length === 0
            ? 'Create a database first; then give a user access to it here.'
            : 'Create a database user first; then give it access here.'}
      </p>
    );
  }
  // What was picked, unless it has been deleted since: then the first one.
  const chosenUser = users.some((u) => u.name === user) ? user : (users[0] as WebDbUser).name;
  const chosenDb = databases.some((d) => d.name === database) ? database : (databases[0] as WebDatabase).name;
  function submit(event: FormEvent) {
    event.preventDefault();
    assign.mutate({
      user: chosenUser,
      database: chosenDb,
      ...(all ? {} : { privileges: chosen }),
    });
  }
  return (
    <form onSubmit={submit}>
      <Done
        message={
          assign.isSuccess
            ? `${assign.variables.user} now has ${assign.variables.privileges ? assign.variables.privileges.join(', ') : 'all privileges'} on ${assign.variables.database}.`
            : null
        }
      />
      <div className="grid two">
        <SelectField
          label="User"
          value={chosenUser}
          onChange={(e) => setUser(e.target.value)}
          error={nameError(assign.error, 'user')}
        >
          {users.map((u) => (
            <option key={u.name} value={u.name}>
              {u.name}
            </option>
          ))}
        </SelectField>
        <SelectField
          label="Database"
          value={chosenDb}
          onChange={(e) => setDatabase(e.target.value)}
          error={nameError(assign.error, 'database')}
        >
          {databases.map((d) => (
            <option key={d.name} value={d.name}>
              {d.name}
            </option>
          ))}
        </SelectField>
      </div>
      <fieldset className="web-privileges">
        <legend>Privileges</legend>
        <Checkbox
          label="All privileges (what most applications need)"
          checked={all}
          onChange={(e) => setAll(e.target.checked)}
        />
        {!all ? (
          <div className="web-privilege-list">
            {PRIVILEGES.map((p) => (
              <Checkbox
                key={p}
                label={p}
                checked={chosen.includes(p)}
                onChange={(e) => setChosen((list) => (e.target.checked ? [...list, p] : list.filter((x) => x !== p)))}
              />
            ))}
          </div>
        ) : null}
        {fieldError(assign.error, 'privileges') ? (
          <p className="field-error">{fieldError(assign.error, 'privileges')}</p>
        ) : null}
      </fieldset>
      <FormError error={assign.error} fields={['user', 'database', 'privileges']} />
      <div className="row">
        <Button type="submit" busy={assign.isPending} disabled={!all && chosen.length === 0}>
          Give access
        </Button>
        {!all && chosen.length === 0 ? <span className="muted">Choose at least one privilege.</span> : null}
      </div>
    </form>
  );
}

/** The full name the server will use: the prefix and the name, unless the name has it already. */
function withPrefix(prefix: string, name: string): string {
  if (!name) return '';
  return name.startsWith(prefix) ? name : `${prefix}${name}`;
}

/** "Database myshopex_shop created." from the answer of db_create / db_user_create. */
function createdName(data: Record<string, unknown> | undefined, kind: 'database' | 'user'): string | null {
  const name = (data?.[kind] as { name?: unknown } | undefined)?.name;
  if (typeof name !== 'string') return null;
  return kind === 'database' ? `Database ${name} created.` : `Database user ${name} created.`;
}

/** "Database myshopex_shop deleted." / "Database user myshopex_app deleted." */
function deletedName(data: Record<string, unknown> | undefined): string | null {
  const db = (data?.database as { name?: unknown } | undefined)?.name;
  if (typeof db === 'string') return `Database ${db} deleted.`;
  const user = (data?.user as { name?: unknown } | undefined)?.name;
  return typeof user === 'string' ? `Database user ${user} deleted.` : null;
}

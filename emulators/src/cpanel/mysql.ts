// UAPI Mysql: databases, database users and grants of one account, with cPanel's rules — the
// caller must send the prefix (`user_` from the first 8 or 16 characters of the username; UAPI
// never adds it), name validation texts, reserved names, the package's MAXSQL, and the MySQL
// password strength.

import { ApiError, type Ctx, required } from './context.ts';
import type { Params } from './http.ts';
import { hashPassword, passwordStrength, tooWeakText } from './password.ts';
import { type Account, limitOf } from './state.ts';
import { databaseBytes } from './usage.ts';

const MAX_DB_NAME = 64;
const MAX_DB_USER = 32;
const SERVER_NAME = 'MySQL 8.0';

const RESERVED_DBS = new Set([
  'cpldap',
  'eximstats',
  'information_schema',
  'munin',
  'munin_innodb',
  'mysql',
  'password',
  'performance_schema',
  'sys',
  'test',
  'roundcube',
  'horde',
  'cphulkd',
  'leechprotect',
  'modsec',
]);
const RESERVED_DB_PATTERNS = [/^mydns/i, /^pg_toast/, /^pg_temp/];
const RESERVED_DB_USERS = new Set(['cpldap', 'eximstats', 'munin', 'postgres', 'root', 'roundcube', 'mysql.sys']);

const PRIVILEGES = new Set([
  'ALL PRIVILEGES',
  'ALTER',
  'ALTER ROUTINE',
  'CREATE',
  'CREATE ROUTINE',
  'CREATE TEMPORARY TABLES',
  'CREATE VIEW',
  'DELETE',
  'DROP',
  'EVENT',
  'EXECUTE',
  'INDEX',
  'INSERT',
  'LOCK TABLES',
  'REFERENCES',
  'SELECT',
  'SHOW VIEW',
  'TRIGGER',
  'UPDATE',
]);

function plural(n: number, one: string, many: string): string {
  return `${n} ${n === 1 ? one : many}`;
}

function tooLong(name: string, max: number): string {
  return `“${name}” is too long by ${plural(name.length - max, 'character', 'characters')}.`;
}

/** `prefix-size` (8|16); the server's own size when absent. */
function prefixSize(ctx: Ctx, params: Params): number {
  const given = params.get('prefix-size');
  if (given === undefined || given === '') return ctx.settings.prefixSize;
  if (given !== '8' && given !== '16') throw new ApiError('Database prefix size can only be the values “8” or “16”.');
  return given === '8' ? 8 : ctx.settings.prefixSize;
}

export function prefixOf(account: Account, size: number): string {
  return `${account.user.slice(0, size)}_`;
}

function verifyPrefix(account: Account, name: string, size: number): void {
  const prefix = prefixOf(account, size);
  if (!name.startsWith(prefix) || name.length === prefix.length) {
    throw new ApiError(`The name “${name}” does not begin with the required prefix “${prefix}”.`);
  }
}

function verifyDbName(name: string): void {
  if (name === '') throw new ApiError('A database name cannot be empty.');
  if (/[^\x20-\x7e]/.test(name)) {
    throw new ApiError(
      `“${name}” is invalid because this system allows only printable ASCII characters in database names.`,
    );
  }
  if (/['"`]/.test(name)) {
    throw new ApiError(
      `“${name}” is invalid because this system does not allow quote characters (' " \`) in database names.`,
    );
  }
  if (name.includes('/')) {
    throw new ApiError(`“${name}” is invalid because this system prohibits the slash (/) character in database names.`);
  }
  if (name.includes('\\')) {
    throw new ApiError(
      `“${name}” is invalid because this system prohibits the backslash (\\) character in database names.`,
    );
  }
  if (name.length > MAX_DB_NAME) {
    throw new ApiError(`${tooLong(name, MAX_DB_NAME)} A database name cannot exceed ${MAX_DB_NAME} characters.`);
  }
  if (name.endsWith(' ')) throw new ApiError('A database name cannot end with a space character.');
  if (RESERVED_DBS.has(name) || RESERVED_DB_PATTERNS.some((re) => re.test(name))) {
    throw new ApiError(`“${name}” is a reserved name for databases on this system.`);
  }
}

function verifyDbUserName(name: string): void {
  if (name === '') throw new ApiError('A username cannot be empty.');
  if (!/^[A-Za-z0-9_-]+$/.test(name)) {
    throw new ApiError(
      'The name of a database user on this system may include only the following characters: A-Z a-z 0-9 - _',
    );
  }
  if (name.length > MAX_DB_USER) {
    throw new ApiError(
      `${tooLong(name, MAX_DB_USER)} A “${SERVER_NAME}” username cannot exceed ${MAX_DB_USER} characters.`,
    );
  }
  if (RESERVED_DB_USERS.has(name))
    throw new ApiError(`“${name}” is a reserved name for database users on this system.`);
}

function checkDbPassword(ctx: Ctx, password: string): void {
  const min = ctx.settings.minPasswordStrength;
  if (passwordStrength(password) < min) throw new ApiError(tooWeakText(min));
}

function dbNotFound(account: Account, name: string): ApiError {
  return new ApiError(`The system user “${account.user}” does not control a MySQL database named “${name}”.`);
}

function userNotFound(account: Account, name: string): ApiError {
  return new ApiError(`The system user “${account.user}” does not control a MySQL user named “${name}”.`);
}

export function getRestrictions(ctx: Ctx, account: Account): unknown {
  return {
    prefix: prefixOf(account, ctx.settings.prefixSize),
    max_database_name_length: MAX_DB_NAME,
    max_username_length: MAX_DB_USER,
  };
}

export function createDatabase(ctx: Ctx, account: Account, params: Params): null {
  const size = prefixSize(ctx, params);
  const [name = ''] = required({ name: params.get('name') });
  verifyDbName(name);
  verifyPrefix(account, name, size);
  const max = limitOf(account.limits, 'MAXSQL');
  if (max !== null && account.databases.length >= max) {
    throw new ApiError(`You have reached your maximum allotment of databases (${account.databases.length}).`);
  }
  if (account.databases.some((d) => d.name === name)) throw new ApiError(`The database “${name}” already exists.`);
  account.databases.push({ name, createdAt: Date.now(), baseBytes: 16384 * 3 });
  return null;
}

export function deleteDatabase(account: Account, params: Params): null {
  const [name = ''] = required({ name: params.get('name') });
  if (!account.databases.some((d) => d.name === name)) throw dbNotFound(account, name);
  account.databases = account.databases.filter((d) => d.name !== name);
  account.grants = account.grants.filter((g) => g.database !== name);
  return null;
}

export function createUser(ctx: Ctx, account: Account, params: Params): null {
  const size = prefixSize(ctx, params);
  const [name = '', password = ''] = required({ name: params.get('name'), password: params.get('password') });
  verifyPrefix(account, name, size);
  verifyDbUserName(name);
  if (account.dbUsers.some((u) => u.name === name)) {
    throw new ApiError(`The user “${name}” cannot be created because it already exists.`);
  }
  if (account.databases.some((d) => d.name === name)) {
    throw new ApiError(
      `The database “${name}” already exists, and you, “${account.user}”, are not allowed to create a user with the same name.`,
    );
  }
  checkDbPassword(ctx, password);
  account.dbUsers.push({ name, password: hashPassword(password) });
  return null;
}

export function deleteUser(account: Account, params: Params): null {
  const [name = ''] = required({ name: params.get('name') });
  if (!account.dbUsers.some((u) => u.name === name)) throw userNotFound(account, name);
  account.dbUsers = account.dbUsers.filter((u) => u.name !== name);
  account.grants = account.grants.filter((g) => g.user !== name);
  return null;
}

export function setPassword(ctx: Ctx, account: Account, params: Params): null {
  const [name = '', password = ''] = required({ user: params.get('user'), password: params.get('password') });
  const user = account.dbUsers.find((u) => u.name === name);
  if (!user) throw userNotFound(account, name);
  checkDbPassword(ctx, password);
  user.password = hashPassword(password);
  return null;
}

function grantTarget(account: Account, params: Params): { user: string; database: string } {
  const [user = '', database = ''] = required({ user: params.get('user'), database: params.get('database') });
  if (!account.dbUsers.some((u) => u.name === user)) throw userNotFound(account, user);
  if (!account.databases.some((d) => d.name === database)) throw dbNotFound(account, database);
  return { user, database };
}

export function setPrivileges(account: Account, params: Params): null {
  const { user, database } = grantTarget(account, params);
  const requested = (params.get('privileges') ?? '')
    .split(',')
    .map((p) => p.trim().toUpperCase().replace(/\s+/g, ' '))
    .filter((p) => p !== '')
    .map((p) => (p === 'ALL' ? 'ALL PRIVILEGES' : p));
  for (const p of requested) {
    if (!PRIVILEGES.has(p)) throw new ApiError(`“${p}” is not a valid MySQL privilege.`);
  }
  const privileges = requested.includes('ALL PRIVILEGES') ? ['ALL PRIVILEGES'] : [...new Set(requested)].sort();
  account.grants = account.grants.filter((g) => !(g.user === user && g.database === database));
  account.grants.push({ user, database, privileges: privileges.length > 0 ? privileges : ['USAGE'] });
  return null;
}

export function getPrivileges(account: Account, params: Params): string[] {
  const { user, database } = grantTarget(account, params);
  const grant = account.grants.find((g) => g.user === user && g.database === database);
  return grant ? grant.privileges.filter((p) => p !== 'USAGE').sort() : [];
}

export function revokeAccess(account: Account, params: Params): null {
  const { user, database } = grantTarget(account, params);
  account.grants = account.grants.filter((g) => !(g.user === user && g.database === database));
  return null;
}

function usersOf(account: Account, database: string): string[] {
  return account.grants
    .filter((g) => g.database === database)
    .map((g) => g.user)
    .sort();
}

export function listDatabases(account: Account): unknown {
  return [...account.databases]
    .sort((a, b) => a.name.localeCompare(b.name))
    .map((d) => ({ database: d.name, disk_usage: databaseBytes(d), users: usersOf(account, d.name) }));
}

export function listUsers(ctx: Ctx, account: Account): unknown {
  const prefix = prefixOf(account, ctx.settings.prefixSize);
  return [...account.dbUsers]
    .sort((a, b) => a.name.localeCompare(b.name))
    .map((u) => ({
      user: u.name,
      full_user: u.name,
      shortuser: u.name.startsWith(prefix) ? u.name.slice(prefix.length) : u.name,
      databases: account.grants
        .filter((g) => g.user === u.name)
        .map((g) => g.database)
        .sort(),
    }));
}

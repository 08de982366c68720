// MySQL databases and database users of an account, through UAPI `Mysql::*` as that account
// (upstreams.md §3.3–§3.4). Names are full names: the caller adds the account's prefix, which
// UAPI never does (a name without it is refused: reason `bad_db_name`).

import type { WebDatabase, WebDatabaseUser } from '../web-panel.ts';
import type { CpanelClient } from './client.ts';
import { isRow, num, rows, text, toDatabase, toDatabaseUser } from './mapping.ts';

const db = { area: 'database' } as const;
const dbWrite = { area: 'database', write: true } as const;

export async function databaseRules(
  client: CpanelClient,
  username: string,
): Promise<{ prefix: string | null; maxNameLength: number; maxUserLength: number }> {
  const data = await client.uapi(username, 'Mysql', 'get_restrictions', {}, db);
  if (!isRow(data)) throw client.garbled('the database restrictions');
  const prefix = text(data.prefix);
  return {
    // Prefixing disabled server-wide: null (§3.3).
    prefix: prefix === '' ? null : prefix,
    maxNameLength: num(data.max_database_name_length, 64),
    maxUserLength: num(data.max_username_length, 47),
  };
}

export async function listDatabases(client: CpanelClient, username: string): Promise<WebDatabase[]> {
  const data = await client.uapi(username, 'Mysql', 'list_databases', {}, db);
  if (!Array.isArray(data)) throw client.garbled('a database list');
  return rows(data).map(toDatabase);
}

export async function createDatabase(client: CpanelClient, username: string, name: string): Promise<void> {
  await client.uapi(username, 'Mysql', 'create_database', { name }, dbWrite);
}

export async function deleteDatabase(client: CpanelClient, username: string, name: string): Promise<void> {
  await client.uapi(username, 'Mysql', 'delete_database', { name }, dbWrite);
}

export async function listDatabaseUsers(client: CpanelClient, username: string): Promise<WebDatabaseUser[]> {
  const data = await client.uapi(username, 'Mysql', 'list_users', {}, db);
  if (!Array.isArray(data)) throw client.garbled('a database user list');
  return rows(data).map(toDatabaseUser);
}

export async function createDatabaseUser(
  client: CpanelClient,
  username: string,
  name: string,
  password: string,
): Promise<void> {
  await client.uapi(username, 'Mysql', 'create_user', { name, password }, dbWrite);
}

export async function deleteDatabaseUser(client: CpanelClient, username: string, name: string): Promise<void> {
  await client.uapi(username, 'Mysql', 'delete_user', { name }, dbWrite);
}

export async function grant(
  client: CpanelClient,
  username: string,
  user: string,
  database: string,
  privileges: string[],
): Promise<void> {
  await client.uapi(
    username,
    'Mysql',
    'set_privileges_on_database',
    { user, database, privileges: privileges.join(',') },
    dbWrite,
  );
}

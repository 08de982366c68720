// Web hosting actions, spec 4.10 Databases: MySQL databases and users, their names given without
// the account's prefix, which is added here (UAPI never adds it), within the plan's limit.

import { Type } from 'typebox';
import type { WebDatabase } from '../../../upstreams/web-panel.ts';
import { AppError } from '../../errors.ts';
import type { ActionContext } from '../../product-kit/actions.ts';
import { answer, panelAction } from '../../product-kit/panel-action.ts';
import { askWeb } from './account.ts';
import { limitReached, Password, specsOf } from './action.ts';

/** A database or database-user name as the client gives it: without the account's prefix. */
const DbName = Type.String({
  minLength: 1,
  maxLength: 64,
  pattern: '^[a-z0-9_]+$',
  description: 'lowercase letters, digits and _, without the account prefix (added for you)',
});

/** The full name of a database or database user: the account's prefix and the given name, checked. */
async function fullDbName(
  ctx: ActionContext,
  given: string,
  field: string,
  kind: 'database' | 'user',
): Promise<string> {
  return askWeb(
    ctx,
    async (panel, account) => {
      const rules = await panel.databaseRules(account.username);
      const prefix = rules.prefix ?? '';
      const name = given.startsWith(prefix) ? given : `${prefix}${given}`;
      const max = kind === 'database' ? rules.maxNameLength : rules.maxUserLength;
      if (name.length > max || name === prefix) {
        throw new AppError('bad_db_name', {
          message: `The name with its prefix “${prefix}” must be 1 to ${max - prefix.length} more characters.`,
          fields: { [field]: `must be at most ${max - prefix.length} characters after the prefix ${prefix}` },
        });
      }
      return name;
    },
    field,
  );
}

const databaseView = (d: WebDatabase) => ({ name: d.name, users: d.users, disk_bytes: d.diskBytes });

export const databaseActions = [
  panelAction({
    name: 'databases',
    group: 'databases',
    method: 'read',
    description: 'MySQL databases and users, with the prefix names get and the plan limit',
    params: {},
    handler: async (ctx) => {
      const specs = await specsOf(ctx);
      const { databases, users, prefix } = await askWeb(ctx, async (panel, account) => ({
        databases: await panel.listDatabases(account.username),
        users: await panel.listDatabaseUsers(account.username),
        prefix: (await panel.databaseRules(account.username)).prefix,
      }));
      return answer('Databases loaded.', {
        prefix,
        databases: databases.map(databaseView),
        users: users.map((u) => ({ name: u.name, databases: u.databases })),
        limit: specs.databases,
      });
    },
  }),
  panelAction({
    name: 'db_create',
    group: 'databases',
    method: 'mutate',
    description: 'Create a database (`name`, without the prefix)',
    params: { name: DbName },
    example: () => ({ name: 'shop' }),
    handler: async (ctx, p) => {
      const specs = await specsOf(ctx);
      const name = await fullDbName(ctx, String(p.name), 'name', 'database');
      await askWeb(
        ctx,
        async (panel, account) => {
          const existing = await panel.listDatabases(account.username);
          if (existing.length >= specs.databases) throw limitReached('databases', specs.databases);
          await panel.createDatabase(account.username, name);
        },
        'name',
      );
      return answer('Database created.', { database: { name } }, 201);
    },
  }),
  panelAction({
    name: 'db_delete',
    group: 'databases',
    method: 'mutate',
    description: 'Delete a database (`name`) and its data',
    params: { name: DbName },
    handler: async (ctx, p) => {
      const name = await fullDbName(ctx, String(p.name), 'name', 'database');
      await askWeb(ctx, (panel, account) => panel.deleteDatabase(account.username, name), 'name');
      return answer('Database deleted.', { database: { name } });
    },
  }),
  panelAction({
    name: 'db_user_create',
    group: 'databases',
    method: 'mutate',
    description: 'Create a database user (`name` without the prefix, `password`)',
    params: { name: DbName, password: Password },
    handler: async (ctx, p) => {
      const name = await fullDbName(ctx, String(p.name), 'name', 'user');
      await askWeb(
        ctx,
        (panel, account) => panel.createDatabaseUser(account.username, name, String(p.password)),
        'name',
      );
      return answer('Database user created.', { user: { name } }, 201);
    },
  }),
  panelAction({
    name: 'db_user_delete',
    group: 'databases',
    method: 'mutate',
    description: 'Delete a database user (`name`)',
    params: { name: DbName },
    handler: async (ctx, p) => {
      const name = await fullDbName(ctx, String(p.name), 'name', 'user');
      await askWeb(ctx, (panel, account) => panel.deleteDatabaseUser(account.username, name), 'name');
      return answer('Database user deleted.', { user: { name } });
    },
  }),
  panelAction({
    name: 'db_assign',
    group: 'databases',
    method: 'mutate',
    description: 'Give a user (`user`) privileges on a database (`database`); `privileges` default ALL PRIVILEGES',
    params: {
      user: DbName,
      database: DbName,
      privileges: Type.Optional(
        Type.Array(
          Type.Union(
            [
              'ALL PRIVILEGES',
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
            ].map((x) => Type.Literal(x)),
          ),
          { minItems: 1, uniqueItems: true },
        ),
      ),
    },
    handler: async (ctx, p) => {
      const user = await fullDbName(ctx, String(p.user), 'user', 'user');
      const database = await fullDbName(ctx, String(p.database), 'database', 'database');
      const privileges = (p.privileges as string[] | undefined) ?? ['ALL PRIVILEGES'];
      await askWeb(ctx, (panel, account) => panel.grant(account.username, user, database, privileges), 'database');
      return answer('Privileges granted.', { user, database, privileges });
    },
  }),
];

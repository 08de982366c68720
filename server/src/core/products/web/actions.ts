// Web hosting actions, spec 4.10 (CONTRACT §6): the account (overview, usage, events,
// nameservers, DNS), MySQL databases and users (names given without the account's prefix, which
// is added here: UAPI never adds it), mailboxes, PHP, the account password and HTTPS. The plan's
// limits on databases and mailboxes are checked before the panel is asked (409 limit_reached);
// the package on the server enforces the same ones.

import { Type } from 'typebox';
import type { WebDatabase, WebMailbox, WebUsage } from '../../../upstreams/web-panel.ts';
import { AppError } from '../../errors.ts';
import type { ActionContext } from '../../product-kit/actions.ts';
import { answer, EVERY_STATE, panelAction } from '../../product-kit/panel-action.ts';
import { sealCredentials } from '../../services/credentials.ts';
import { listEvents } from '../../services/events.ts';
import * as services from '../../services/service.repository.ts';
import { isoWithOffset } from '../../time.ts';
import { askWeb } from './account.ts';
import type { WebSpecs } from './provision.ts';

async function specsOf(ctx: ActionContext): Promise<WebSpecs> {
  const plan = await ctx.db
    .selectFrom('plans')
    .select('specs')
    .where('id', '=', ctx.service.plan_id)
    .executeTakeFirstOrThrow();
  return plan.specs as unknown as WebSpecs;
}

const limitReached = (what: string, limit: number) =>
  new AppError('limit_reached', {
    message: `Your plan allows ${limit} ${what}; delete one first or upgrade the plan.`,
    details: { limit, resource: what },
  });

const Password = Type.String({
  minLength: 8,
  maxLength: 128,
  description: 'at least 8 characters; the panel rates its strength',
});
/** A database or database-user name as the client gives it: without the account's prefix. */
const DbName = Type.String({
  minLength: 1,
  maxLength: 64,
  pattern: '^[a-z0-9_]+$',
  description: 'lowercase letters, digits and _, without the account prefix (added for you)',
});
const LOCAL_PART = /^[a-z0-9](?:[a-z0-9._+-]{0,62}[a-z0-9])?$/;

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

/** The mailbox address of `email` (a local part or a full address of the account's domain). */
function mailboxOf(ctx: ActionContext, email: string, field = 'email'): { local: string; domain: string } {
  const domain = (ctx.service.config as { domain: string }).domain;
  const lower = email.trim().toLowerCase();
  const [local, at] = lower.includes('@')
    ? [lower.slice(0, lower.lastIndexOf('@')), lower.slice(lower.lastIndexOf('@') + 1)]
    : [lower, domain];
  if (at !== domain) {
    throw new AppError('bad_mailbox', {
      message: `Mailboxes are of ${domain}.`,
      fields: { [field]: `must be an address of ${domain}` },
    });
  }
  if (!LOCAL_PART.test(local ?? '')) {
    throw new AppError('bad_mailbox', {
      message:
        'A mailbox name is 1–64 letters, digits, dots, dashes, underscores or +, starting and ending with a letter or digit.',
      fields: { [field]: 'is not a valid mailbox name' },
    });
  }
  return { local: local as string, domain };
}

const databaseView = (d: WebDatabase) => ({ name: d.name, users: d.users, disk_bytes: d.diskBytes });
const mailboxView = (m: WebMailbox) => ({
  email: m.email,
  disk_used_bytes: m.diskUsedBytes,
  quota_bytes: m.quotaBytes,
  login_suspended: m.suspendedLogin,
});
const usageView = (u: WebUsage) => ({
  id: u.id,
  description: u.description,
  usage: u.usage,
  maximum: u.maximum,
  unit: u.unit,
});

export const webActions = [
  panelAction({
    name: 'overview',
    group: 'info',
    method: 'read',
    description: 'The hosting account: domain, username, package, address, disk, suspension',
    params: {},
    handler: async (ctx) => {
      const info = await askWeb(ctx, async (panel, account) => {
        const found = await panel.findAccount(account.username);
        if (!found) throw new AppError('no_panel_user', { message: 'The hosting account is not on its server.' });
        return found;
      });
      return answer('Account loaded.', {
        account: {
          domain: info.domain,
          username: info.username,
          package: info.package,
          ip: info.ip,
          suspended: info.suspended,
          disk: { used_mb: info.diskUsedMb, limit_mb: info.diskLimitMb },
        },
      });
    },
  }),
  panelAction({
    name: 'usage',
    group: 'info',
    method: 'read',
    description: 'Resource usage against the plan: disk, bandwidth, databases, mailboxes, …',
    params: {},
    handler: async (ctx) => {
      const usage = await askWeb(ctx, (panel, account) => panel.usage(account.username));
      return answer('Usage loaded.', { usage: usage.map(usageView) });
    },
  }),
  panelAction({
    name: 'events',
    group: 'info',
    method: 'read',
    description: "The platform's events of the service, newest first",
    params: {},
    states: EVERY_STATE,
    handler: async (ctx) => {
      const events = await listEvents(ctx.db, ctx.service.id);
      return answer('Events loaded.', {
        events: events.map((e) => ({
          id: e.id,
          kind: e.kind,
          message: e.message,
          data: e.data,
          created_at: isoWithOffset(e.created_at),
        })),
      });
    },
  }),
  panelAction({
    name: 'nameservers',
    group: 'info',
    method: 'read',
    description: 'The nameservers to set at your registrar for the domain',
    params: {},
    handler: async (ctx) => {
      const nameservers = await askWeb(ctx, (panel) => panel.nameservers());
      return answer('Nameservers loaded.', { domain: (ctx.service.config as { domain: string }).domain, nameservers });
    },
  }),
  panelAction({
    name: 'dns',
    group: 'info',
    method: 'read',
    description: "The domain's DNS zone on the server",
    params: {},
    handler: async (ctx) => {
      const records = await askWeb(ctx, (panel, account) => panel.dnsZone(account.username, account.domain));
      return answer('Zone loaded.', {
        zone: (ctx.service.config as { domain: string }).domain,
        records: records.map((r) => ({ line: r.line, name: r.name, ttl: r.ttl, type: r.type, data: r.data })),
      });
    },
  }),
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
  panelAction({
    name: 'mailboxes',
    group: 'mail',
    method: 'read',
    description: "The domain's mailboxes with their quota and usage, and the plan limit",
    params: {},
    handler: async (ctx) => {
      const specs = await specsOf(ctx);
      const list = await askWeb(ctx, (panel, account) => panel.listMailboxes(account.username, account.domain));
      return answer('Mailboxes loaded.', { mailboxes: list.map(mailboxView), limit: specs.mailboxes });
    },
  }),
  panelAction({
    name: 'mailbox_create',
    group: 'mail',
    method: 'mutate',
    description: 'Create a mailbox (`email`: the name or the full address, `password`, `quota_mb`, 0 = unlimited)',
    params: {
      email: Type.String({ minLength: 1, maxLength: 254 }),
      password: Password,
      quota_mb: Type.Optional(Type.Integer({ minimum: 0, maximum: 1_048_576, default: 1024 })),
    },
    example: () => ({ email: 'info', password: 'Correct-Horse-42-Battery' }),
    handler: async (ctx, p) => {
      const specs = await specsOf(ctx);
      const { local, domain } = mailboxOf(ctx, String(p.email));
      await askWeb(
        ctx,
        async (panel, account) => {
          const existing = await panel.listMailboxes(account.username, domain);
          if (existing.length >= specs.mailboxes) throw limitReached('mailboxes', specs.mailboxes);
          await panel.createMailbox(account.username, {
            local,
            domain,
            password: String(p.password),
            quotaMb: Number(p.quota_mb ?? 1024),
          });
        },
        'email',
      );
      return answer(
        'Mailbox created.',
        { mailbox: { email: `${local}@${domain}`, quota_mb: Number(p.quota_mb ?? 1024) } },
        201,
      );
    },
  }),
  panelAction({
    name: 'mailbox_delete',
    group: 'mail',
    method: 'mutate',
    description: 'Delete a mailbox (`email`) and its mail',
    params: { email: Type.String({ minLength: 1, maxLength: 254 }) },
    handler: async (ctx, p) => {
      const { local, domain } = mailboxOf(ctx, String(p.email));
      await askWeb(ctx, (panel, account) => panel.deleteMailbox(account.username, local, domain), 'email');
      return answer('Mailbox deleted.', { email: `${local}@${domain}` });
    },
  }),
  panelAction({
    name: 'mailbox_password',
    group: 'mail',
    method: 'mutate',
    description: "Change a mailbox's (`email`) password (`password`)",
    params: { email: Type.String({ minLength: 1, maxLength: 254 }), password: Password },
    handler: async (ctx, p) => {
      const { local, domain } = mailboxOf(ctx, String(p.email));
      await askWeb(
        ctx,
        (panel, account) => panel.setMailboxPassword(account.username, local, domain, String(p.password)),
        'email',
      );
      return answer('Mailbox password changed.', { email: `${local}@${domain}` });
    },
  }),
  panelAction({
    name: 'mailbox_quota',
    group: 'mail',
    method: 'mutate',
    description: "Change a mailbox's (`email`) quota (`quota_mb`, 0 = unlimited)",
    params: {
      email: Type.String({ minLength: 1, maxLength: 254 }),
      quota_mb: Type.Integer({ minimum: 0, maximum: 1_048_576 }),
    },
    handler: async (ctx, p) => {
      const { local, domain } = mailboxOf(ctx, String(p.email));
      await askWeb(
        ctx,
        (panel, account) => panel.setMailboxQuota(account.username, local, domain, Number(p.quota_mb)),
        'email',
      );
      return answer('Mailbox quota changed.', { email: `${local}@${domain}`, quota_mb: p.quota_mb });
    },
  }),
  panelAction({
    name: 'php',
    group: 'runtime',
    method: 'read',
    description: "The domain's PHP version and the versions installed",
    params: {},
    handler: async (ctx) => {
      const php = await askWeb(ctx, (panel, account) => panel.php(account.username, account.domain));
      return answer('PHP loaded.', { php: { version: php.current, installed: php.installed } });
    },
  }),
  panelAction({
    name: 'php_set',
    group: 'runtime',
    method: 'mutate',
    description: "Switch the domain's PHP (`version`, one of the installed ones, e.g. ea-php82)",
    params: { version: Type.String({ minLength: 1, maxLength: 32, pattern: '^[a-z0-9-]+$' }) },
    example: () => ({ version: 'ea-php82' }),
    handler: async (ctx, p) => {
      const version = String(p.version);
      await askWeb(
        ctx,
        async (panel, account) => {
          const { installed } = await panel.php(account.username, account.domain);
          if (!installed.includes(version) && version !== 'inherit') {
            throw AppError.fields({ version: `must be one of ${installed.join(', ')}` });
          }
          await panel.setPhp(account.username, account.domain, version);
        },
        'version',
      );
      return answer('PHP version set.', { php: { version } });
    },
  }),
  panelAction({
    name: 'password_change',
    group: 'runtime',
    method: 'mutate',
    description: "Change the hosting account's password (`password`; its MySQL login changes with it)",
    params: { password: Password },
    handler: async (ctx, p) => {
      const password = String(p.password);
      const username = await askWeb(
        ctx,
        async (panel, account) => {
          await panel.setPassword(account.username, password);
          return account.username;
        },
        'password',
      );
      await services.setCredentials(
        ctx.db,
        ctx.service.id,
        sealCredentials(ctx.secretKey, ctx.service.id, { username, password }),
      );
      return answer('Password changed.', { username });
    },
  }),
  panelAction({
    name: 'https_status',
    group: 'https',
    method: 'read',
    description: "The domain's certificate (AutoSSL), checks in progress, problems, and whether HTTPS is forced",
    params: {},
    handler: async (ctx) => {
      const status = await askWeb(ctx, (panel, account) => panel.httpsStatus(account.username, account.domain));
      return answer('HTTPS status loaded.', {
        https: {
          certificate: status.certificate
            ? {
                issuer: status.certificate.issuer,
                not_after: status.certificate.notAfter,
                domains: status.certificate.domains,
                self_signed: status.certificate.selfSigned,
              }
            : null,
          autossl_in_progress: status.autosslInProgress,
          problems: status.problems,
          forced: status.forced,
        },
      });
    },
  }),
  panelAction({
    name: 'https_force',
    group: 'https',
    method: 'mutate',
    description: 'Redirect HTTP to HTTPS (once the domain has a valid certificate)',
    params: {},
    handler: async (ctx) => {
      await askWeb(ctx, async (panel, account) => {
        const status = await panel.httpsStatus(account.username, account.domain);
        if (!status.certificate || status.certificate.selfSigned) {
          throw new AppError('conflict', {
            message:
              'The domain has no valid certificate yet (AutoSSL issues one shortly after the account is made); try again later.',
          });
        }
        await panel.setHttpsRedirect(account.username, account.domain, true);
      });
      return answer('HTTPS is forced.', { forced: true });
    },
  }),
  panelAction({
    name: 'https_unforce',
    group: 'https',
    method: 'mutate',
    description: 'Stop redirecting HTTP to HTTPS',
    params: {},
    handler: async (ctx) => {
      await askWeb(ctx, (panel, account) => panel.setHttpsRedirect(account.username, account.domain, false));
      return answer('HTTPS is no longer forced.', { forced: false });
    },
  }),
];

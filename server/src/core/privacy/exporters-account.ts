// The sections of a data export about the account itself and how it signs in: the profile, two-factor
// status, sessions, API tokens, SSH keys, notifications and the mail sent to it. Never a secret: no
// password hash, no session or token hash, no TOTP secret or recovery code, no mail body (sealed).

import { accountStatus } from '../accounts/account.service.ts';
import { deviceOf } from '../auth/device.ts';
import { type Exporter, iso } from './export-kit.ts';

const profile: Exporter = {
  section: 'profile',
  description: 'Your name, e-mail address, username, status and dates (never your password or its hash).',
  async collect({ db, accountId }) {
    const a = await db
      .selectFrom('accounts')
      .select([
        'id',
        'name',
        'email',
        'username',
        'email_verified_at',
        'suspended_at',
        'suspended_reason',
        'deleted_at',
        'deletion_requested_at',
        'deletion_scheduled_for',
        'created_at',
        'updated_at',
      ])
      .where('id', '=', accountId)
      .executeTakeFirstOrThrow();
    return {
      id: a.id,
      name: a.name,
      email: a.email,
      username: a.username,
      status: accountStatus(a),
      email_verified_at: iso(a.email_verified_at),
      suspended_at: iso(a.suspended_at),
      suspended_reason: a.suspended_reason,
      deletion_requested_at: iso(a.deletion_requested_at),
      deletion_scheduled_for: iso(a.deletion_scheduled_for),
      created_at: iso(a.created_at),
      updated_at: iso(a.updated_at),
    };
  },
};

const twoFactor: Exporter = {
  section: 'two_factor',
  description:
    'Whether two-factor sign-in is on, since when, and how many recovery codes are left (never the secret or the codes).',
  async collect({ db, accountId }) {
    const row = await db
      .selectFrom('two_factor')
      .select(['enabled_at'])
      .where('account_id', '=', accountId)
      .executeTakeFirst();
    const left = await db
      .selectFrom('recovery_codes')
      .select((eb) => eb.fn.countAll<string>().as('n'))
      .where('account_id', '=', accountId)
      .where('used_at', 'is', null)
      .executeTakeFirstOrThrow();
    const on = row?.enabled_at !== null && row?.enabled_at !== undefined;
    return { totp: on, enabled_at: iso(row?.enabled_at ?? null), recovery_codes_left: on ? Number(left.n) : 0 };
  },
};

const sessions: Exporter = {
  section: 'sessions',
  description:
    'Where you are signed in: when, from which address, on what device (never the session cookie or its hash).',
  async collect({ db, accountId }) {
    const rows = await db
      .selectFrom('sessions')
      .select(['public_id', 'created_at', 'last_seen_at', 'expires_at', 'remember', 'ip', 'user_agent'])
      .where('account_id', '=', accountId)
      .where('two_factor_pending', '=', false)
      .orderBy('public_id')
      .execute();
    return rows.map((s) => ({
      id: s.public_id,
      created_at: iso(s.created_at),
      last_seen_at: iso(s.last_seen_at),
      expires_at: iso(s.expires_at),
      remember: s.remember,
      ip: s.ip,
      device: deviceOf(s.user_agent),
      user_agent: s.user_agent,
    }));
  },
};

const apiTokens: Exporter = {
  section: 'api_tokens',
  description: 'Your API tokens: name, scopes, first characters, dates and last use (never the secret or its hash).',
  async collect({ db, accountId }) {
    const rows = await db
      .selectFrom('api_tokens')
      .select([
        'id',
        'name',
        'hint',
        'scopes',
        'allowed_cidrs',
        'created_at',
        'expires_at',
        'last_used_at',
        'last_used_ip',
        'revoked_at',
      ])
      .where('account_id', '=', accountId)
      .orderBy('id')
      .execute();
    return rows.map((t) => ({
      id: t.id,
      name: t.name,
      prefix: t.hint,
      scopes: t.scopes,
      allowed_cidrs: t.allowed_cidrs,
      created_at: iso(t.created_at),
      expires_at: iso(t.expires_at),
      last_used_at: iso(t.last_used_at),
      last_used_ip: t.last_used_ip,
      revoked_at: iso(t.revoked_at),
    }));
  },
};

const sshKeys: Exporter = {
  section: 'ssh_keys',
  description: 'Your SSH public keys (public keys only: we never hold a private key).',
  async collect({ db, accountId }) {
    const rows = await db
      .selectFrom('ssh_keys')
      .select(['id', 'name', 'public_key', 'key_type', 'bits', 'fingerprint', 'created_at'])
      .where('account_id', '=', accountId)
      .orderBy('id')
      .execute();
    return rows.map((k) => ({ ...k, created_at: iso(k.created_at) }));
  },
};

const notifications: Exporter = {
  section: 'notifications',
  description: 'The notifications shown in your panel.',
  async collect({ db, accountId }) {
    const rows = await db
      .selectFrom('notifications')
      .select(['id', 'kind', 'title', 'body', 'data', 'read_at', 'created_at'])
      .where('account_id', '=', accountId)
      .orderBy('id')
      .execute();
    return rows.map((n) => ({ ...n, read_at: iso(n.read_at), created_at: iso(n.created_at) }));
  },
};

const mail: Exporter = {
  section: 'mail',
  description:
    'The e-mail we sent you: address, subject, when and whether it left (the text is not kept once delivered; sign-in codes and links never are).',
  async collect({ db, accountId }) {
    const rows = await db
      .selectFrom('mail_outbox')
      .select(['id', 'to_address', 'template', 'subject', 'status', 'created_at', 'sent_at'])
      .where('account_id', '=', accountId)
      .orderBy('id')
      .execute();
    return rows.map((m) => ({ ...m, created_at: iso(m.created_at), sent_at: iso(m.sent_at) }));
  },
};

export const ACCOUNT_EXPORTERS: readonly Exporter[] = [
  profile,
  twoFactor,
  sessions,
  apiTokens,
  sshKeys,
  notifications,
  mail,
];

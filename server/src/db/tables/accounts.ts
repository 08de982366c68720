// Accounts and how they sign in and act: sessions, e-mail and one-time codes, SSH keys, API
// tokens and the log of the requests made with them.

import type { ColumnType, Generated, Selectable } from 'kysely';
import type { CreatedAt, NullableTimestamp, Timestamp } from './columns.ts';

export interface AccountsTable {
  id: Generated<number>;
  name: string;
  email: string;
  username: string;
  password_hash: string;
  email_verified_at: NullableTimestamp;
  suspended_at: NullableTimestamp;
  suspended_reason: string | null;
  created_at: CreatedAt;
  updated_at: CreatedAt;
}

export interface SessionsTable {
  id_hash: string;
  account_id: number;
  remember: boolean;
  created_at: CreatedAt;
  last_seen_at: CreatedAt;
  expires_at: Timestamp;
  ip: string | null;
  user_agent: string | null;
  /** What the sessions list names it by (never the cookie or its hash). */
  public_id: Generated<number>;
  /** A half session: signed in with the first factor, waiting for the second (CONTRACT §11). */
  two_factor_pending: Generated<boolean>;
}

/** An account's TOTP (migration 0026): secrets sealed with SECRET_KEY. */
export interface TwoFactorTable {
  account_id: number;
  /** The confirmed secret, sealed; null while two-factor sign-in is off. */
  totp_secret: string | null;
  /** A secret shown by totp_begin and not yet confirmed by a code, sealed. */
  pending_secret: string | null;
  pending_at: NullableTimestamp;
  enabled_at: NullableTimestamp;
  /** The 30-second step of the last code accepted: a code is accepted once. */
  last_step: number | null;
  updated_at: CreatedAt;
}

export interface RecoveryCodesTable {
  id: Generated<number>;
  account_id: number;
  /** HMAC(SECRET_KEY) of the normalised code. */
  code_hash: string;
  created_at: CreatedAt;
  used_at: NullableTimestamp;
}

/** An account's passkeys, WebAuthn credentials (migration 0027). */
export interface PasskeysTable {
  /** The public id the API names it by. */
  id: Generated<number>;
  account_id: number;
  name: string;
  /** The authenticator's credential id, base64url. */
  credential_id: string;
  /** The credential's COSE public key, base64url. */
  public_key: string;
  /** The WebAuthn user handle it was made for, base64url. */
  user_handle: string;
  /** The signature counter last seen (bigint: a string from pg). */
  counter: ColumnType<string, number | string | undefined, number | string>;
  transports: ColumnType<string[], string[] | undefined, string[]>;
  backed_up: Generated<boolean>;
  created_at: CreatedAt;
  last_used_at: NullableTimestamp;
}

/** The challenge of a WebAuthn ceremony under way, bound to the session that asked (migration 0027). */
export interface WebauthnChallengesTable {
  /** sha256 of the session's cookie id (an anonymous session's too). */
  session_hash: string;
  purpose: 'register' | 'sign_in' | 'second_factor';
  /** base64url, as sent in the options. */
  challenge: string;
  /** The account it is for (register, second_factor); null for a sign-in with a passkey alone. */
  account_id: number | null;
  expires_at: Timestamp;
}

export interface AccountTokensTable {
  id: Generated<number>;
  account_id: number;
  purpose: 'verify_email' | 'reset_password';
  token_hash: string;
  expires_at: Timestamp;
  consumed_at: NullableTimestamp;
  created_at: CreatedAt;
}

export interface LoginCodesTable {
  id: Generated<number>;
  account_id: number;
  code_hash: string;
  attempts: Generated<number>;
  expires_at: Timestamp;
  consumed_at: NullableTimestamp;
  created_at: CreatedAt;
}

export interface ApiTokensTable {
  id: Generated<number>;
  account_id: number;
  name: string;
  token_hash: string;
  /** `svc_` and the first characters of the secret, to recognise a token in a list. */
  hint: string;
  scopes: string[];
  allowed_cidrs: ColumnType<string[], string[] | undefined, string[]>;
  expires_at: NullableTimestamp;
  created_at: CreatedAt;
  last_used_at: NullableTimestamp;
  last_used_ip: string | null;
  revoked_at: NullableTimestamp;
}

export interface ApiRequestLogTable {
  id: ColumnType<string, never, never>;
  token_id: number | null;
  account_id: number | null;
  method: string;
  path: string;
  route: string | null;
  status: number;
  ip: string | null;
  duration_ms: number;
  request_id: string | null;
  created_at: CreatedAt;
}

export interface SshKeysTable {
  id: Generated<number>;
  account_id: number;
  name: string;
  /** Normalised: `type base64 comment`. */
  public_key: string;
  key_type: string;
  bits: number;
  /** `SHA256:…`, as ssh-keygen -l prints it. */
  fingerprint: string;
  created_at: CreatedAt;
}

export type Account = Selectable<AccountsTable>;
export type Session = Selectable<SessionsTable>;
export type SshKey = Selectable<SshKeysTable>;
export type ApiToken = Selectable<ApiTokensTable>;

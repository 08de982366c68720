// The seam between the platform and whatever hosts websites: every web-hosting operation goes
// through WebPanel (the cPanel/WHM driver in ./cpanel/ implements it). Accounts are managed
// with the server's WHM API; everything inside an account (databases, mailboxes, PHP, DNS,
// SSL) is done as that account, through WHM's UAPI proxy, so one WHM token is all the driver
// holds.
//
// Contract shared by every method:
// - It resolves when the panel has answered with success, or throws UpstreamError
//   (./hypervisor.ts) and nothing else, never with a credential in its message. cPanel answers
//   failures with HTTP 200 and `status: 0` / `metadata.result: 0`; the driver turns those into
//   `rejected` with the panel's text in `detail` and, where it recognises the refusal, a
//   `reason`: `weak_password` (the password-strength refusal), `bad_db_name` (prefix, length,
//   characters, reserved), `bad_mailbox`, `exists` (the name is taken), `domain_taken` (an
//   account's domain already on the server), `not_found`, `limit` (the account's package limit). Transport failures and 5xx are `unreachable` /
//   `timeout` (retryable); 401/403 are `auth`.
// - Names of databases and database users are full names, already prefixed by the caller with
//   the account's prefix (`databasePrefix`); UAPI never adds it.
// - Methods that create are safe to call again after a lost answer when they say so.

import type { NodeDriver } from './driver.ts';

/** A hosting package: the limits of one plan, created on the server under its name. */
export interface WebPackageSpec {
  /** e.g. `hostplane_web-starter`. */
  name: string;
  diskMb: number;
  /** 0 = unlimited. */
  maxMailboxes: number;
  maxDatabases: number;
  maxAddonDomains: number;
  maxSubdomains: number;
  /** Quota of one mailbox in MB (0 = unlimited). */
  maxMailboxQuotaMb: number;
}

export interface WebAccountSpec {
  /** cPanel's rules: ≤16 characters, lowercase letters and digits, starts with a letter, not `test…`. */
  username: string;
  domain: string;
  package: string;
  password: string;
  /**
   * The account's contact e-mail, which WHM keeps per account and lists (`email`): the platform
   * puts a name unique to the service in it, the marker by which a later attempt knows the
   * account as its own (an account found with this username is adopted only when it carries it).
   */
  contactEmail: string;
}

export interface WebAccountInfo {
  username: string;
  domain: string;
  package: string;
  suspended: boolean;
  suspendReason: string | null;
  ip: string;
  diskUsedMb: number;
  /** null = unlimited. */
  diskLimitMb: number | null;
  /** The contact e-mail (listaccts `email`); null when the account has none. */
  contactEmail: string | null;
}

export interface WebDatabase {
  name: string;
  /** Users with privileges on it. */
  users: string[];
  diskBytes: number;
}

export interface WebDatabaseUser {
  name: string;
  databases: string[];
}

export interface WebMailbox {
  /** The full address. */
  email: string;
  diskUsedBytes: number;
  /** null = unlimited. */
  quotaBytes: number | null;
  suspendedLogin: boolean;
}

export interface WebUsage {
  id: string;
  description: string;
  usage: number;
  /** null = unlimited. */
  maximum: number | null;
  /** `bytes`, `percent` or null (a count). */
  unit: 'bytes' | 'percent' | null;
}

export interface WebDnsRecord {
  line: number;
  name: string;
  ttl: number;
  type: string;
  data: string[];
}

export interface WebPhp {
  installed: string[];
  /** The vhost's version (e.g. `ea-php82`), or `inherit`. */
  current: string;
}

export interface WebHttpsStatus {
  /** The certificate covering the domain (`selfSigned` until AutoSSL issues one), or null (none). */
  certificate: { issuer: string; notAfter: string; domains: string[]; selfSigned: boolean } | null;
  autosslInProgress: boolean;
  problems: { domain: string; problem: string }[];
  /** Whether HTTP is redirected to HTTPS. */
  forced: boolean;
}

export interface WebPanel extends NodeDriver {
  // ---- WHM (the server's accounts) ----

  /** Create or update the package of a plan (safe to repeat). */
  ensurePackage(spec: WebPackageSpec): Promise<void>;
  /** The account with this username, or null. */
  findAccount(username: string): Promise<WebAccountInfo | null>;
  /** The account whose main domain is `domain`, or null (any username). */
  findAccountByDomain(domain: string): Promise<WebAccountInfo | null>;
  /**
   * Create the account. When an account with `spec.username`, `spec.domain` and the contact
   * e-mail `spec.contactEmail` exists (an earlier attempt whose answer was lost) it is returned as
   * it is. Any other account holding the username is `rejected` with reason `exists`; the domain
   * held on the server by any other account (main, addon or parked) is `rejected` with reason
   * `domain_taken`. An account is never adopted on its domain alone.
   */
  createAccount(spec: WebAccountSpec): Promise<WebAccountInfo>;
  suspend(username: string, reason: string): Promise<void>;
  unsuspend(username: string): Promise<void>;
  /** Remove the account and its data. Already gone is success. */
  removeAccount(username: string): Promise<void>;
  /** The account's cPanel password (and its MySQL password with it). */
  setPassword(username: string, password: string): Promise<void>;
  /** A one-time sign-in URL into the account's cPanel (create_user_session). */
  ssoUrl(username: string): Promise<string>;
  /** The server's nameservers, for the account's domain. */
  nameservers(): Promise<string[]>;

  // ---- UAPI as the account ----

  /** What database names must look like: the prefix (null: none) and the lengths. */
  databaseRules(username: string): Promise<{ prefix: string | null; maxNameLength: number; maxUserLength: number }>;
  listDatabases(username: string): Promise<WebDatabase[]>;
  createDatabase(username: string, name: string): Promise<void>;
  deleteDatabase(username: string, name: string): Promise<void>;
  listDatabaseUsers(username: string): Promise<WebDatabaseUser[]>;
  createDatabaseUser(username: string, name: string, password: string): Promise<void>;
  deleteDatabaseUser(username: string, name: string): Promise<void>;
  /** Grant `privileges` (e.g. `ALL PRIVILEGES`) on `database` to `user`. */
  grant(username: string, user: string, database: string, privileges: string[]): Promise<void>;

  listMailboxes(username: string, domain: string): Promise<WebMailbox[]>;
  /** `local` is the part before `@`; quota in MB (0 = unlimited). */
  createMailbox(
    username: string,
    input: { local: string; domain: string; password: string; quotaMb: number },
  ): Promise<void>;
  deleteMailbox(username: string, local: string, domain: string): Promise<void>;
  setMailboxPassword(username: string, local: string, domain: string, password: string): Promise<void>;
  setMailboxQuota(username: string, local: string, domain: string, quotaMb: number): Promise<void>;

  php(username: string, vhost: string): Promise<WebPhp>;
  setPhp(username: string, vhost: string, version: string): Promise<void>;

  usage(username: string): Promise<WebUsage[]>;
  dnsZone(username: string, zone: string): Promise<WebDnsRecord[]>;

  httpsStatus(username: string, domain: string): Promise<WebHttpsStatus>;
  setHttpsRedirect(username: string, domain: string, on: boolean): Promise<void>;
}

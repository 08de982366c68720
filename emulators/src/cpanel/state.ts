// What the emulated cPanel & WHM server holds: hosting packages, cPanel accounts (with their
// databases, database users and grants, mailboxes, PHP versions per vhost, DNS zone, SSL
// certificates, HTTPS redirects, AutoSSL runs and API tokens) and the login sessions WHM hands
// out. Persisted to a JSON file when asked (after every change), so a demo survives restarts.

import { readFileSync, renameSync, writeFileSync } from 'node:fs';
import type { PasswordHash } from './password.ts';

/** A package as WHM stores it (`/var/cpanel/packages/NAME`): upper-case keys, string values. */
export interface Package {
  name: string;
  /** QUOTA and BWLIMIT in MB, MAX* counts, MAX_EMAILACCT_QUOTA in MB; 'unlimited' where unlimited. */
  settings: Record<string, string>;
}

export interface Certificate {
  id: string;
  domains: string[];
  isSelfSigned: boolean;
  issuerCommonName: string;
  issuerOrganizationName: string | null;
  /** Unix seconds. */
  notBefore: number;
  notAfter: number;
  modulus: string;
  validationType: 'dv' | null;
  /** Issued by AutoSSL (as opposed to the placeholder self-signed one). */
  autossl: boolean;
}

export interface ZoneLine {
  type: 'record' | 'comment' | 'control';
  /** Comments and controls: the line's text. */
  text?: string;
  /** Records: owner name as written (fully qualified, trailing dot). */
  dname?: string;
  ttl?: number;
  recordType?: string;
  data?: string[];
}

export interface Database {
  name: string;
  createdAt: number;
  /** Size when created (bytes); it grows a little with time (usage.ts). */
  baseBytes: number;
}

export interface DbUser {
  name: string;
  password: PasswordHash;
}

export interface Grant {
  user: string;
  database: string;
  privileges: string[];
}

export interface Mailbox {
  email: string;
  user: string;
  domain: string;
  /** MB; 0 = unlimited. */
  quotaMb: number;
  password: PasswordHash;
  createdAt: number;
  baseBytes: number;
}

export interface AutosslProblem {
  domain: string;
  problem: string;
  time: string;
}

export interface ApiToken {
  name: string;
  /** sha256 of the token, base64. */
  hash: string;
  createTime: number;
}

export interface Account {
  user: string;
  domain: string;
  ip: string;
  owner: string;
  email: string;
  plan: string;
  password: PasswordHash;
  suspended: boolean;
  suspendReason: string | null;
  /** Unix seconds. */
  suspendTime: number | null;
  /** Unix seconds. */
  startdate: number;
  theme: string;
  /** The cpuser file's limits (copied from the package, or given to createacct). */
  limits: Record<string, string>;
  hasshell: boolean;
  cgi: boolean;
  databases: Database[];
  dbUsers: DbUser[];
  grants: Grant[];
  mailboxes: Mailbox[];
  /** vhost (domain) → `ea-phpNN` or `inherit`. */
  php: Record<string, string>;
  /** Domains whose vhost redirects http to https. */
  sslRedirects: string[];
  /** vhost (servername) → the installed certificate. */
  certs: Record<string, Certificate>;
  /** An AutoSSL run finishes at this time (ms), null when none is pending. */
  autosslDueAt: number | null;
  autosslProblems: AutosslProblem[];
  zone: ZoneLine[];
  tokens: ApiToken[];
  /** ms since the epoch. */
  createdAt: number;
}

export interface Session {
  /** `user:RANDOM:CREATE_USER_SESSION,HEX`. */
  session: string;
  /** `/cpsessNNNNNNNNNN`. */
  securityToken: string;
  user: string;
  service: string;
  /** Unix seconds: the login URL must be used before this. */
  expires: number;
  /** The login URL was opened (it works once). */
  used: boolean;
  /** The cookie the login set, once used. */
  cookie: string | null;
}

export const DEFAULT_PACKAGE: Package = {
  name: 'default',
  settings: {
    QUOTA: 'unlimited',
    BWLIMIT: 'unlimited',
    MAXPOP: 'unlimited',
    MAXSQL: 'unlimited',
    MAXADDON: '0',
    MAXSUB: 'unlimited',
    MAXPARK: '0',
    MAXFTP: 'unlimited',
    MAXLST: 'unlimited',
    MAX_EMAILACCT_QUOTA: 'unlimited',
    MAX_EMAIL_PER_HOUR: 'unlimited',
    MAX_DEFER_FAIL_PERCENTAGE: 'unlimited',
    CGI: 'y',
    HASSHELL: 'n',
    IP: 'n',
    FEATURELIST: 'default',
    LANG: 'en',
    CPMOD: 'jupiter',
    DIGESTAUTH: 'n',
    HASDKIM: '1',
    HASSPF: '1',
  },
};

/** Limits copied from a package into an account. */
export const LIMIT_KEYS = [
  'QUOTA',
  'BWLIMIT',
  'MAXPOP',
  'MAXSQL',
  'MAXADDON',
  'MAXSUB',
  'MAXPARK',
  'MAXFTP',
  'MAXLST',
  'MAX_EMAILACCT_QUOTA',
] as const;

/** A numeric limit, or null when unlimited. */
export function limitOf(limits: Record<string, string>, key: string): number | null {
  const value = limits[key];
  if (value === undefined || value === '' || /^unlimited$/i.test(value)) return null;
  const n = Number(value);
  return Number.isFinite(n) ? n : null;
}

export class CpanelState {
  readonly packages = new Map<string, Package>();
  readonly accounts = new Map<string, Account>();
  readonly sessions = new Map<string, Session>();
  /** Server-wide values kept in the file (the WHM token). */
  readonly meta: Record<string, unknown> = {};
  readonly file: string | null;
  /** Set when the emulator stops: late timers must not write a file that may be gone. */
  frozen = false;

  constructor(file: string | null) {
    this.file = file;
  }

  /** Read the file if there is one. */
  load(): boolean {
    if (this.file === null) return false;
    let raw: string;
    try {
      raw = readFileSync(this.file, 'utf8');
    } catch {
      return false;
    }
    const saved = JSON.parse(raw) as {
      meta?: Record<string, unknown>;
      packages?: Package[];
      accounts?: Account[];
      sessions?: Session[];
    };
    Object.assign(this.meta, saved.meta ?? {});
    for (const pkg of saved.packages ?? []) this.packages.set(pkg.name, pkg);
    for (const account of saved.accounts ?? []) this.accounts.set(account.user, account);
    const now = Date.now() / 1000;
    for (const session of saved.sessions ?? []) if (session.expires > now) this.sessions.set(session.session, session);
    return true;
  }

  save(): void {
    if (this.file === null || this.frozen) return;
    const partial = `${this.file}.${process.pid}.tmp`;
    writeFileSync(
      partial,
      JSON.stringify({
        version: 1,
        meta: this.meta,
        packages: [...this.packages.values()],
        accounts: [...this.accounts.values()],
        sessions: [...this.sessions.values()],
      }),
      { mode: 0o600 },
    );
    renameSync(partial, this.file);
  }

  /** The account that owns this domain (main domain), if any. */
  domainOwner(domain: string): Account | undefined {
    const wanted = domain.toLowerCase();
    for (const account of this.accounts.values()) if (account.domain === wanted) return account;
    return undefined;
  }

  /** Every account's database owner prefix in use (first `size` characters of the username). */
  prefixTaken(prefix: string, size: number, except?: string): boolean {
    for (const account of this.accounts.values()) {
      if (account.user === except) continue;
      if (account.user.length >= size && account.user.slice(0, size) === prefix) return true;
      if (account.user === prefix) return true;
    }
    return false;
  }
}

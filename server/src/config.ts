// The environment, described once (CONTRACT §1). `loadConfig` is called by each entry point
// (main.ts, the migrate and admin CLIs) and the result is passed down; nothing else reads
// process.env. Every variable is listed in VARIABLES, which also feeds `--help` texts.

import { isIP } from 'node:net';
import { isAbsolute, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseCidr } from './cidr.ts';
import { CRASH_VARIABLES, type CrashConfig, readCrashPoints } from './config-crash.ts';
import { INVOICING_VARIABLES, type InvoicingConfig, readInvoicing } from './config-invoicing.ts';
import { POWERDNS_VARIABLES, type ReverseDnsConfig, readPowerDns } from './config-powerdns.ts';
import { RAZORPAY_VARIABLES, type RazorpaySettings, readRazorpay } from './config-razorpay.ts';

export type Engine = 'pglite' | 'postgresql';

export interface Config extends ReverseDnsConfig, CrashConfig {
  port: number;
  host: string;
  publicUrl: string;
  dataDir: string;
  databaseUrl: string | null;
  redisUrl: string | null;
  /** Namespace of this installation's keys in Redis (several installations may share one). */
  redisPrefix: string;
  smtpUrl: string | null;
  mailFrom: string;
  /** 32 bytes, or null when it must be generated into DATA_DIR (embedded mode only). */
  secretKey: Buffer | null;
  demo: boolean;
  altBasePath: string;
  trustProxy: string[];
  logLevel: 'fatal' | 'error' | 'warn' | 'info' | 'debug' | 'trace' | 'silent';
  engine: Engine;
  /** Days after paid_until an unpaid service is suspended (CONTRACT §7). */
  graceDays: number;
  /** Days after paid_until an unpaid service is terminated; more than graceDays. */
  terminateDays: number;
  /** Seconds a bare-metal install may take, from the power cycle into the installer, before it is undone and refunded. */
  baremetalInstallTimeoutSeconds: number;
  /** Port of the separate metrics listener (GET /metrics, no auth), or null for none. 0: any free port. */
  metricsPort: number | null;
  /** Address the metrics listener binds to. */
  metricsHost: string;
  /** Bearer token that opens GET /metrics on the main port, or null for no /metrics route there. */
  metricsToken: string | null;
  /** Free space (MB) the upload temporary directory keeps: an upload that would go below it is 507. */
  uploadFreeSpaceFloorMb: number;
  /** The built client panel (web/dist), served at /; null: no panel on this process. */
  panelDir: string | null;
  /** Where customers pay deposits by UPI (shown as a upi://pay QR code), or null when not configured. */
  upi: { vpa: string; payeeName: string } | null;
  /** The seller on tax invoices, the price basis and the invoice series (config-invoicing.ts). */
  invoicing: InvoicingConfig;
  /** The Razorpay merchant account online deposits go through (config-razorpay.ts), or null. */
  razorpay: RazorpaySettings | null;
}

export class ConfigError extends Error {
  override name = 'ConfigError';
}

interface Variable {
  name: string;
  description: string;
  default: string;
}

/** What each variable means; README's configuration table follows this list. */
export const VARIABLES: readonly Variable[] = [
  { name: 'PORT', description: 'HTTP port', default: '8080' },
  { name: 'HOST', description: 'HTTP listen address', default: '127.0.0.1' },
  {
    name: 'PUBLIC_URL',
    description: 'base URL used in e-mail links and ticket URLs',
    default: 'http://localhost:$PORT',
  },
  { name: 'DATA_DIR', description: 'embedded database, uploads, generated secrets', default: './data' },
  {
    name: 'DATABASE_URL',
    description: 'postgres://… selects PostgreSQL; unset selects embedded PGlite',
    default: 'unset',
  },
  { name: 'REDIS_URL', description: 'redis://… moves rate-limit counters to Redis', default: 'unset' },
  { name: 'REDIS_PREFIX', description: 'namespace of this installation in a shared Redis', default: 'hp' },
  {
    name: 'SMTP_URL',
    description: 'smtp:// or smtps:// mail server; unset writes mail to the outbox',
    default: 'unset',
  },
  { name: 'MAIL_FROM', description: 'sender address', default: 'Hostplane <no-reply@localhost>' },
  { name: 'SECRET_KEY', description: '32-byte base64 key for secrets at rest', default: 'generated (embedded)' },
  {
    name: 'DEMO',
    description: 'seed the demo catalog and start emulated upstreams',
    default: '1 embedded, 0 PostgreSQL',
  },
  { name: 'ALT_BASE_PATH', description: 'mount point of the second token surface', default: '/cloud' },
  { name: 'TRUST_PROXY', description: 'comma-separated CIDRs whose X-Forwarded-For is believed', default: 'none' },
  { name: 'LOG_LEVEL', description: 'pino level (fatal … trace, silent)', default: 'info' },
  { name: 'GRACE_DAYS', description: 'days after paid_until an unpaid service is suspended (0–60)', default: '3' },
  {
    name: 'TERMINATE_DAYS',
    description: 'days after paid_until an unpaid service is terminated (more than GRACE_DAYS, at most 365)',
    default: '14',
  },
  {
    name: 'BAREMETAL_INSTALL_TIMEOUT',
    description:
      'seconds a bare-metal OS install may take before the machine is wiped and the order refunded (1–86400)',
    default: '1800',
  },
  {
    name: 'METRICS_PORT',
    description: 'serve Prometheus metrics at GET /metrics on this separate port, without auth',
    default: 'unset (no listener)',
  },
  { name: 'METRICS_HOST', description: 'address the metrics port listens on', default: '127.0.0.1' },
  {
    name: 'METRICS_TOKEN',
    description: 'serve GET /metrics on the main port to `Authorization: Bearer <token>` (at least 16 characters)',
    default: 'unset (no /metrics there)',
  },
  {
    name: 'UPLOAD_FREE_SPACE_FLOOR_MB',
    description:
      'free space (MB) the disk of DATA_DIR/uploads/tmp keeps: an upload that could go below it is refused 507',
    default: '1024',
  },
  {
    name: 'UPI_VPA',
    description: 'the UPI ID (VPA, name@bank) customers pay deposits to; the panel shows it and a upi://pay QR code',
    default: 'unset (no UPI details shown; demo mode: demo@hostplane)',
  },
  { name: 'UPI_PAYEE_NAME', description: 'the payee name shown with UPI_VPA', default: 'Hostplane' },
  {
    name: 'PANEL_DIR',
    description: 'the built client panel served at / (`npm ci` builds it); `off` serves no panel',
    default: 'web/dist of this checkout',
  },
  ...INVOICING_VARIABLES,
  ...RAZORPAY_VARIABLES,
  ...POWERDNS_VARIABLES,
  ...CRASH_VARIABLES,
];

type Env = Record<string, string | undefined>;

/** The environment as the sections below read it: trimmed values, and every problem collected. */
interface Reader {
  /** The variable's value, trimmed; undefined when unset or blank. */
  get(name: string): string | undefined;
  /** Note a problem with a variable (the value shown as given; pass `<hidden>` for secrets). */
  fail(name: string, value: string, why: string): void;
  /** A problem that is not about one variable's value. */
  problem(text: string): void;
}

/**
 * Parse and validate the environment. Collects every problem before throwing, so one run
 * tells the operator everything that is wrong.
 */
export function loadConfig(env: Env, cwd = process.cwd()): Config {
  const problems: string[] = [];
  const r: Reader = {
    get(name) {
      const value = env[name]?.trim();
      return value === undefined || value === '' ? undefined : value;
    },
    fail(name, value, why) {
      problems.push(`${name}=${JSON.stringify(value)}: ${why}`);
    },
    problem(text) {
      problems.push(text);
    },
  };

  const place = readPlace(r, cwd);
  const stores = readStores(r);
  const demo = readDemo(r, stores.engine);
  const requests = readRequests(r);
  const lifecycle = readLifecycle(r);
  const metrics = readMetrics(r, place.port);
  const uploadFreeSpaceFloorMb = readUploadFloor(r);
  if (lifecycle.terminateDays <= lifecycle.graceDays) {
    r.problem(`TERMINATE_DAYS (${lifecycle.terminateDays}) must be more than GRACE_DAYS (${lifecycle.graceDays})`);
  }
  const panel = { ...readPanel(r, cwd, demo), ...readRazorpay(r), ...readPowerDns(r) };
  const floorAndInvoicing = { uploadFreeSpaceFloorMb, invoicing: readInvoicing(r), ...readCrashPoints(r) };

  if (problems.length > 0) {
    throw new ConfigError(`invalid configuration:\n  - ${problems.join('\n  - ')}`);
  }
  return { ...place, ...stores, demo, ...requests, ...lifecycle, ...metrics, ...floorAndInvoicing, ...panel };
}

/** Where the server listens, the address it is reached at, and where it keeps its files. */
function readPlace(r: Reader, cwd: string): Pick<Config, 'port' | 'host' | 'publicUrl' | 'dataDir'> {
  const port = parsePort(r.get('PORT') ?? '8080', (why, v) => r.fail('PORT', v, why));
  const host = r.get('HOST') ?? '127.0.0.1';
  let publicUrl = r.get('PUBLIC_URL') ?? `http://localhost:${port}`;
  try {
    const url = new URL(publicUrl);
    if (url.protocol !== 'http:' && url.protocol !== 'https:') r.fail('PUBLIC_URL', publicUrl, 'must be http(s)://');
    publicUrl = publicUrl.replace(/\/+$/, '');
  } catch {
    r.fail('PUBLIC_URL', publicUrl, 'not a URL');
  }

  const dataDirRaw = r.get('DATA_DIR') ?? './data';
  const dataDir = isAbsolute(dataDirRaw) ? dataDirRaw : resolve(cwd, dataDirRaw);
  return { port, host, publicUrl, dataDir };
}

/** The database, Redis, mail, and the key that seals secrets at rest. */
function readStores(
  r: Reader,
): Pick<Config, 'databaseUrl' | 'engine' | 'redisUrl' | 'redisPrefix' | 'smtpUrl' | 'mailFrom' | 'secretKey'> {
  const databaseUrl = r.get('DATABASE_URL') ?? null;
  if (databaseUrl !== null && !/^postgres(ql)?:\/\//.test(databaseUrl)) {
    r.fail(
      'DATABASE_URL',
      redactUrl(databaseUrl),
      'only postgres:// or postgresql:// is supported (unset it for embedded PGlite)',
    );
  }
  const engine: Engine = databaseUrl ? 'postgresql' : 'pglite';
  const redisUrl = r.get('REDIS_URL') ?? null;
  if (redisUrl !== null && !/^rediss?:\/\//.test(redisUrl))
    r.fail('REDIS_URL', redactUrl(redisUrl), 'must be redis:// or rediss://');

  const redisPrefix = r.get('REDIS_PREFIX') ?? 'hp';
  if (!/^[A-Za-z0-9:_-]{1,64}$/.test(redisPrefix))
    r.fail('REDIS_PREFIX', redisPrefix, 'must be 1–64 of letters, digits, ":", "_" and "-"');

  const smtpUrl = r.get('SMTP_URL') ?? null;
  if (smtpUrl !== null && !/^smtps?:\/\/[^/]+/.test(smtpUrl))
    r.fail('SMTP_URL', redactUrl(smtpUrl), 'must be smtp://host:port or smtps://user:pass@host:port');

  const mailFrom = r.get('MAIL_FROM') ?? 'Hostplane <no-reply@localhost>';

  let secretKey: Buffer | null = null;
  const secretRaw = r.get('SECRET_KEY');
  if (secretRaw !== undefined) {
    const decoded = Buffer.from(secretRaw, 'base64');
    if (decoded.length !== 32 || !/^[A-Za-z0-9+/_-]+={0,2}$/.test(secretRaw)) {
      r.fail('SECRET_KEY', '<hidden>', 'must be 32 bytes encoded as base64 (e.g. `openssl rand -base64 32`)');
    } else {
      secretKey = decoded;
    }
  } else if (engine === 'postgresql') {
    r.problem('SECRET_KEY is required with DATABASE_URL (generate one with `openssl rand -base64 32`)');
  }
  return { databaseUrl, engine, redisUrl, redisPrefix, smtpUrl, mailFrom, secretKey };
}

/** Demo mode: on by default with the embedded database only. */
function readDemo(r: Reader, engine: Engine): boolean {
  const demoRaw = r.get('DEMO');
  if (demoRaw === undefined) return engine === 'pglite';
  if (demoRaw === '1' || demoRaw === 'true') return true;
  if (demoRaw === '0' || demoRaw === 'false') return false;
  r.fail('DEMO', demoRaw, 'must be 1 or 0');
  return engine === 'pglite';
}

/** How requests are routed, whom their forwarded addresses are believed from, and how much is logged. */
function readRequests(r: Reader): Pick<Config, 'altBasePath' | 'trustProxy' | 'logLevel'> {
  let altBasePath = r.get('ALT_BASE_PATH') ?? '/cloud';
  if (!/^\/[A-Za-z0-9._~-]+(\/[A-Za-z0-9._~-]+)*\/?$/.test(altBasePath) || altBasePath.startsWith('/api/')) {
    r.fail('ALT_BASE_PATH', altBasePath, 'must be a path such as /cloud, outside /api/');
  }
  altBasePath = altBasePath.replace(/\/+$/, '');

  const trustProxy: string[] = [];
  for (const part of (r.get('TRUST_PROXY') ?? '').split(',')) {
    const cidr = part.trim();
    if (cidr === '') continue;
    if (parseCidr(cidr) === null) r.fail('TRUST_PROXY', cidr, 'not an IPv4/IPv6 CIDR or address');
    else trustProxy.push(cidr);
  }

  const levels = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;
  const levelRaw = r.get('LOG_LEVEL') ?? 'info';
  const logLevel = levels.find((l) => l === levelRaw) ?? 'info';
  if (!levels.some((l) => l === levelRaw)) r.fail('LOG_LEVEL', levelRaw, `must be one of ${levels.join(', ')}`);
  return { altBasePath, trustProxy, logLevel };
}

/** How long an unpaid service lives on, and how long a bare-metal install may take. */
function readLifecycle(r: Reader): Pick<Config, 'graceDays' | 'terminateDays' | 'baremetalInstallTimeoutSeconds'> {
  const days = (name: string, fallback: number, min: number, max: number): number => {
    const raw = r.get(name);
    if (raw === undefined) return fallback;
    const value = Number(raw);
    if (!/^\d+$/.test(raw) || value < min || value > max) {
      r.fail(name, raw, `must be a whole number of days from ${min} to ${max}`);
      return fallback;
    }
    return value;
  };
  const graceDays = days('GRACE_DAYS', 3, 0, 60);
  const terminateDays = days('TERMINATE_DAYS', 14, 1, 365);
  let baremetalInstallTimeoutSeconds = 1800;
  const installRaw = r.get('BAREMETAL_INSTALL_TIMEOUT');
  if (installRaw !== undefined) {
    if (!/^\d+$/.test(installRaw) || Number(installRaw) < 1 || Number(installRaw) > 86_400)
      r.fail('BAREMETAL_INSTALL_TIMEOUT', installRaw, 'must be a whole number of seconds from 1 to 86400');
    else baremetalInstallTimeoutSeconds = Number(installRaw);
  }
  return { graceDays, terminateDays, baremetalInstallTimeoutSeconds };
}

/**
 * Metrics: on a port of their own (loopback unless told otherwise) and/or on the main port
 * behind a token. Neither set: no /metrics anywhere.
 */
function readMetrics(r: Reader, port: number): Pick<Config, 'metricsPort' | 'metricsHost' | 'metricsToken'> {
  let metricsPort: number | null = null;
  const metricsPortRaw = r.get('METRICS_PORT');
  if (metricsPortRaw !== undefined) {
    metricsPort = parsePort(metricsPortRaw, (why, v) => r.fail('METRICS_PORT', v, why));
    if (metricsPort !== 0 && metricsPort === port)
      r.fail(
        'METRICS_PORT',
        metricsPortRaw,
        'must differ from PORT (use METRICS_TOKEN to serve /metrics on the main port)',
      );
  }
  const metricsHost = r.get('METRICS_HOST') ?? '127.0.0.1';
  if (r.get('METRICS_HOST') !== undefined) {
    if (metricsPortRaw === undefined) r.fail('METRICS_HOST', metricsHost, 'means nothing without METRICS_PORT');
    else if (isIP(metricsHost) === 0 && !/^[A-Za-z0-9]([A-Za-z0-9.-]{0,251}[A-Za-z0-9])?$/.test(metricsHost))
      r.fail('METRICS_HOST', metricsHost, 'must be an IP address or a host name');
  }
  const metricsToken = r.get('METRICS_TOKEN') ?? null;
  if (metricsToken !== null && !/^[\x21-\x7e]{16,256}$/.test(metricsToken)) {
    r.fail(
      'METRICS_TOKEN',
      '<hidden>',
      'must be 16–256 printable characters without spaces (e.g. `openssl rand -hex 24`)',
    );
  }
  return { metricsPort, metricsHost, metricsToken };
}

/** Uploads stream to DATA_DIR/uploads/tmp, the embedded database's disk: refused before they fill it. */
function readUploadFloor(r: Reader): number {
  const floorRaw = r.get('UPLOAD_FREE_SPACE_FLOOR_MB');
  if (floorRaw === undefined) return 1024;
  if (!/^\d{1,10}$/.test(floorRaw) || Number(floorRaw) > 1_000_000_000) {
    r.fail('UPLOAD_FREE_SPACE_FLOOR_MB', floorRaw, 'must be a whole number of megabytes from 0 to 1000000000');
    return 1024;
  }
  return Number(floorRaw);
}

/** The client panel served at /, and the UPI details it shows for deposits. */
function readPanel(r: Reader, cwd: string, demo: boolean): Pick<Config, 'panelDir' | 'upi'> {
  const panelRaw = r.get('PANEL_DIR');
  const panelDir =
    panelRaw === 'off'
      ? null
      : panelRaw === undefined
        ? fileURLToPath(new URL('../../web/dist', import.meta.url))
        : isAbsolute(panelRaw)
          ? panelRaw
          : resolve(cwd, panelRaw);

  // NPCI's VPA shape: a handle, "@", the PSP's handle. Demo mode shows a handle no PSP has.
  const vpaRaw = r.get('UPI_VPA') ?? (demo ? 'demo@hostplane' : undefined);
  const payeeName = r.get('UPI_PAYEE_NAME') ?? 'Hostplane';
  if (vpaRaw !== undefined && !/^[A-Za-z0-9._-]{2,256}@[A-Za-z][A-Za-z0-9.-]{1,63}$/.test(vpaRaw)) {
    r.fail('UPI_VPA', vpaRaw, 'not a UPI ID such as payments@okaxis');
  }
  if (payeeName.length > 99 || /\p{Cc}/u.test(payeeName)) {
    r.fail('UPI_PAYEE_NAME', payeeName, 'at most 99 printable characters');
  }
  return { panelDir, upi: vpaRaw === undefined ? null : { vpa: vpaRaw, payeeName } };
}

function parsePort(raw: string, fail: (why: string, value: string) => void): number {
  if (!/^\d+$/.test(raw)) {
    fail('must be a whole number from 0 to 65535', raw);
    return 0;
  }
  const port = Number(raw);
  if (port > 65535) fail('must be a whole number from 0 to 65535', raw);
  return port;
}

/** Drop the password from a URL so it can appear in an error message. */
export function redactUrl(raw: string): string {
  try {
    const url = new URL(raw);
    if (url.password) url.password = '***';
    return url.toString();
  } catch {
    return raw.replace(/\/\/[^@/]*@/, '//***@');
  }
}

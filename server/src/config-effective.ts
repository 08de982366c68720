// The configuration a process runs with, as staff may read it (the console's Settings page, GET
// /api/v1/staff/settings; `npm run admin -- system settings`): each variable of VARIABLES with its
// meaning, its default and the value in effect. Hostplane has no settings store: everything is
// the environment, read once at start (config.ts), so this is read-only, and a change is a new
// value in the environment and a restart. Secrets are never shown — only whether they are set —
// and a URL's password is masked.

import { type Config, redactUrl, VARIABLES } from './config.ts';
import { crashPointName } from './config-crash.ts';

export interface EffectiveSetting {
  name: string;
  description: string;
  default: string;
  /** What is in effect; for a secret only `set` or `unset`. */
  value: string;
  secret: boolean;
}

const isSet = (value: unknown) => (value === null || value === undefined ? 'unset' : 'set');
const orUnset = (value: string | number | null | undefined, unset = 'unset') =>
  value === null || value === undefined ? unset : String(value);

interface Read {
  value: (config: Config) => string;
  secret?: true;
}

/** How each variable's effective value is read back from the parsed configuration. */
const READ: Record<string, Read> = {
  PORT: { value: (c) => String(c.port) },
  HOST: { value: (c) => c.host },
  PUBLIC_URL: { value: (c) => c.publicUrl },
  DATA_DIR: { value: (c) => c.dataDir },
  DATABASE_URL: { value: (c) => (c.databaseUrl ? redactUrl(c.databaseUrl) : 'unset (embedded PGlite)') },
  REDIS_URL: { value: (c) => (c.redisUrl ? redactUrl(c.redisUrl) : 'unset') },
  REDIS_PREFIX: { value: (c) => c.redisPrefix },
  SMTP_URL: { value: (c) => (c.smtpUrl ? redactUrl(c.smtpUrl) : 'unset (mail goes to the outbox)') },
  MAIL_FROM: { value: (c) => c.mailFrom },
  SECRET_KEY: { value: (c) => (c.secretKey ? 'set' : 'unset (generated into DATA_DIR)'), secret: true },
  DEMO: { value: (c) => (c.demo ? 'on' : 'off') },
  ALT_BASE_PATH: { value: (c) => c.altBasePath },
  TRUST_PROXY: { value: (c) => c.trustProxy.join(', ') || 'none' },
  LOG_LEVEL: { value: (c) => c.logLevel },
  GRACE_DAYS: { value: (c) => String(c.graceDays) },
  TERMINATE_DAYS: { value: (c) => String(c.terminateDays) },
  BAREMETAL_INSTALL_TIMEOUT: { value: (c) => String(c.baremetalInstallTimeoutSeconds) },
  METRICS_PORT: { value: (c) => orUnset(c.metricsPort, 'unset (no listener)') },
  METRICS_HOST: { value: (c) => c.metricsHost },
  METRICS_TOKEN: { value: (c) => isSet(c.metricsToken), secret: true },
  UPLOAD_FREE_SPACE_FLOOR_MB: { value: (c) => String(c.uploadFreeSpaceFloorMb) },
  UPI_VPA: { value: (c) => orUnset(c.upi?.vpa) },
  UPI_PAYEE_NAME: { value: (c) => orUnset(c.upi?.payeeName, 'unset (no UPI_VPA)') },
  PANEL_DIR: { value: (c) => orUnset(c.panelDir, 'off') },
  SELLER_GSTIN: { value: (c) => orUnset(c.invoicing.sellerGstin) },
  SELLER_LEGAL_NAME: { value: (c) => c.invoicing.sellerLegalName },
  SELLER_ADDRESS: { value: (c) => c.invoicing.sellerAddress },
  SELLER_STATE_CODE: { value: (c) => c.invoicing.sellerStateCode },
  PRICES_INCLUDE_GST: { value: (c) => String(c.invoicing.pricesIncludeGst) },
  INVOICE_PREFIX: { value: (c) => c.invoicing.invoicePrefix },
  RAZORPAY_KEY_ID: { value: (c) => orUnset(c.razorpay?.keyId) },
  RAZORPAY_KEY_SECRET: { value: (c) => isSet(c.razorpay?.keySecret), secret: true },
  RAZORPAY_WEBHOOK_SECRET: { value: (c) => isSet(c.razorpay?.webhookSecret), secret: true },
  RAZORPAY_API_URL: { value: (c) => orUnset(c.razorpay?.apiUrl, 'unset (no Razorpay account)') },
  PDNS_API_URL: { value: (c) => orUnset(c.reverseDns?.access.endpoint) },
  PDNS_API_KEY: { value: (c) => isSet(c.reverseDns?.access.credentials.api_key), secret: true },
  PDNS_SERVER_ID: { value: (c) => orUnset(powerDns(c)?.server_id, 'unset (no PowerDNS)') },
  PDNS_REVERSE_ZONES: {
    value: (c) =>
      powerDns(c)
        ?.zones?.map((z) => `${z.cidr}=${z.zone}`)
        .join(', ') || 'unset (every address: its /24 zone)',
  },
  PDNS_TTL: { value: (c) => orUnset(powerDns(c)?.ttl, 'unset (no PowerDNS)') },
  HOSTPLANE_CRASH_AT: { value: (c) => c.crashAt.map(crashPointName).join(', ') || 'unset (never)' },
};

function powerDns(c: Config) {
  return c.reverseDns?.access.settings as
    | { server_id?: string; ttl?: number; zones?: { cidr: string; zone: string }[] }
    | undefined;
}

/** Every variable with the value in effect; a variable nobody taught this file is shown as such, never read. */
export function effectiveSettings(config: Config): EffectiveSetting[] {
  return VARIABLES.map((v) => {
    const read = READ[v.name];
    return {
      name: v.name,
      description: v.description,
      default: v.default,
      value: read ? read.value(config) : '(not shown: server/src/config-effective.ts does not read it)',
      secret: read?.secret === true,
    };
  });
}

/** The variables this file can show (a test holds it to VARIABLES). */
export const SHOWN_VARIABLES = Object.keys(READ);

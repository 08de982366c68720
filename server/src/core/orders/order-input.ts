// What an order says, checked per plan type before any money moves (spec 4.7; §7 codes
// domain_required, bad_domain, bad_config_<field>). Every problem is collected — the checks
// here and the catalog lookups of the order service — and reported in one answer whose code
// names the first (CONTRACT §2: every failing field at once).
//
// The checks of each field are shared; which fields an order of a plan may hold, and which are
// required, is the plan's product's to say (core/products/, `order`). Only what the spec
// requires is required: a VPS order without `os` gets the default template, without
// `hostname` its label (core/products/vps/order.ts), and an order without `server_name` (or a
// hostname or domain to take it from) a generated label.

import { Type } from 'typebox';
import type { ErrorCode } from '../errors.ts';
import type { Product } from '../product-kit/product.ts';
import { tryParsePublicKey } from '../ssh/keys.ts';
import { type CheckedConfig, type FieldNaming, OrderProblems } from './order-problems.ts';

export interface OrderInput {
  /** Plan id, or its label. */
  plan: number | string;
  config: Record<string, unknown>;
  domain?: string | null;
}

const LABEL = /^[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?$/;
const HOSTNAME = /^(?=.{1,253}$)[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?(?:\.[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?)*$/;
const DOMAIN = /^(?=.{4,253}$)(?:[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?\.)+[a-z](?:[a-z0-9-]{0,61}[a-z0-9])$/;

/**
 * Top-level domains no site can be reached under: reserved for tests, documentation and local
 * networks (RFC 2606, 6761, 6762, 7686, 8375, ICANN's .internal) or used as private ones.
 */
const RESERVED_TLDS = new Set([
  'test',
  'example',
  'invalid',
  'localhost',
  'local',
  'onion',
  'arpa',
  'internal',
  'lan',
  'home',
  'corp',
  'intranet',
  'private',
  'localdomain',
]);

/**
 * The shape every order `config` has, whatever the plan: at most 20 keys, each value a scalar or
 * a short list of scalars (ssh_keys is the only list). The session surface's schema takes `config`
 * as an open record, so without this bound a body nested thousands of levels deep (well under the
 * body limit) reached code that walks it.
 */
export const ORDER_CONFIG_LIMITS = { keys: 20, items: 50, text: 8192 } as const;

/**
 * Cloud-init user data (CONTRACT §13, vps/kvm only): at most 64 KiB of UTF-8, counted in bytes.
 * It may carry secrets: sealed at rest until provisioning has used it, never logged or shown.
 */
export const USER_DATA_MAX_BYTES = 65_536;
export const USER_DATA_DESCRIPTION =
  `vps (kvm): cloud-init user data (#cloud-config, a #! script, …), at most ${USER_DATA_MAX_BYTES} bytes ` +
  '(64 KiB) of UTF-8; run on the first boot after the platform’s own settings (root password, SSH keys, ' +
  'hostname), which a key it sets replaces. Never shown again.';

/** Why `value` is not usable user data, or null. */
export function userDataProblem(value: unknown): string | null {
  if (typeof value !== 'string') return 'must be a string (the cloud-init user data)';
  const bytes = Buffer.byteLength(value, 'utf8');
  return bytes > USER_DATA_MAX_BYTES
    ? `must be at most ${USER_DATA_MAX_BYTES} bytes (64 KiB) of UTF-8; this is ${bytes} bytes`
    : null;
}

type ConfigScalar = string | number | boolean | null;
const SCALAR_TYPES = ['string', 'number', 'boolean', 'null'];

/**
 * The session surface's `config` (the token surfaces' deploy bodies are flat and closed). Its
 * longer text, `user_data`, is named: its byte limit is checked by checkOrderConfig (a clear
 * reason in bytes), the request body's limit bounds it before.
 */
export const OrderConfigSchema = Type.Object(
  { user_data: Type.Optional(Type.String({ description: USER_DATA_DESCRIPTION })) },
  {
    additionalProperties: Type.Unsafe<ConfigScalar | ConfigScalar[]>({
      type: [...SCALAR_TYPES, 'array'],
      maxLength: ORDER_CONFIG_LIMITS.text,
      maxItems: ORDER_CONFIG_LIMITS.items,
      items: { type: SCALAR_TYPES, maxLength: ORDER_CONFIG_LIMITS.text },
    }),
    maxProperties: ORDER_CONFIG_LIMITS.keys,
    description:
      `The plan's options: at most ${ORDER_CONFIG_LIMITS.keys} keys, each a string, number, boolean or null, ` +
      `or a list of at most ${ORDER_CONFIG_LIMITS.items} of those (ssh_keys); user_data (vps) a longer string`,
  },
);

function isScalar(value: unknown): boolean {
  return (
    value === null ||
    typeof value === 'number' ||
    typeof value === 'boolean' ||
    (typeof value === 'string' && value.length <= ORDER_CONFIG_LIMITS.text)
  );
}

/** Why `config` is not of the shape every order's is (OrderConfigSchema), or null. Looks two levels deep at most. */
export function configShapeProblem(config: Record<string, unknown>): string | null {
  // user_data has its own limit (checkOrderConfig).
  const values = Object.entries(config)
    .filter(([key, value]) => key !== 'user_data' || typeof value !== 'string')
    .map(([, value]) => value);
  const fits =
    Object.keys(config).length <= ORDER_CONFIG_LIMITS.keys &&
    values.every(
      (v) => isScalar(v) || (Array.isArray(v) && v.length <= ORDER_CONFIG_LIMITS.items && v.every(isScalar)),
    );
  return fits
    ? null
    : `must hold at most ${ORDER_CONFIG_LIMITS.keys} options, each a string, number, true/false, null or a list of ` +
        `at most ${ORDER_CONFIG_LIMITS.items} of those (no nested objects or lists)`;
}

/**
 * The problems of the values an order body gives, whatever its plan: for a route's
 * `fieldRules`, so that a body the schema refused still names every bad value. No database.
 */
export function orderFieldRules(config: unknown, domain: unknown, naming: FieldNaming): Record<string, string> {
  if (config === null || typeof config !== 'object' || Array.isArray(config)) return {};
  const problems = new OrderProblems();
  checkOrderConfig(null, config as Record<string, unknown>, domain, problems);
  const shape = naming === 'nested' ? configShapeProblem(config as Record<string, unknown>) : null;
  return { ...(shape === null ? {} : { config: shape }), ...problems.fields(naming) };
}

/**
 * Check `config` for a plan of `product`; null when the plan is unknown, which checks only the
 * values given (the plan's own problem is reported beside them).
 */
export function checkOrderConfig(
  product: Pick<Product, 'type' | 'order'> | null,
  config: Record<string, unknown>,
  domainRaw: unknown,
  problems: OrderProblems,
): CheckedConfig {
  const bad = (field: string, reason: string, code?: ErrorCode) => problems.add(field, reason, code);
  const rules = product?.order ?? null;
  if (product !== null && rules !== null)
    for (const key of Object.keys(config))
      if (!rules.keys.includes(key))
        bad(
          key,
          key === 'user_data'
            ? `is only for virtual servers (vps / kvm), not ${product.type} plans`
            : `is not an option of ${product.type} plans`,
        );

  const str = (key: string): string | null => {
    const v = config[key];
    if (v === undefined || v === null || v === '') return null;
    if (typeof v !== 'string') {
      bad(key, 'must be a string');
      return null;
    }
    return v.trim().toLowerCase();
  };

  let domain: string | null = null;
  const domainGiven = domainRaw !== undefined && domainRaw !== null && domainRaw !== '';
  if (rules?.domain === 'required' || (rules === null && domainGiven)) {
    if (!domainGiven) bad('domain', 'is required for web hosting', 'domain_required');
    else if (typeof domainRaw !== 'string' || !DOMAIN.test(domainRaw.trim().toLowerCase().replace(/\.$/, '')))
      bad('domain', 'must be a domain name such as example.in', 'bad_domain');
    else if (RESERVED_TLDS.has(domainRaw.trim().toLowerCase().replace(/\.$/, '').split('.').at(-1) ?? ''))
      bad('domain', 'must be under a public top-level domain (not .test, .local, .example, …)', 'bad_domain');
    else domain = domainRaw.trim().toLowerCase().replace(/\.$/, '');
  } else if (domainGiven) {
    bad('domain', 'is only for web hosting plans', 'bad_domain');
  }

  let hostname = str('hostname');
  if (hostname !== null && !HOSTNAME.test(hostname)) {
    bad('hostname', 'must be a host name such as web1 or web1.example.in');
    hostname = null;
  }

  let serverName = str('server_name');
  if (serverName !== null && !LABEL.test(serverName)) {
    bad('server_name', 'must be 1–63 of a–z, 0–9 and "-" (it becomes the label)');
  } else if (serverName === null && !problems.has('server_name')) {
    // Taken from what the caller did send, and only when that is valid: a derived name must
    // never produce an error about a field the caller never sent.
    const derived = hostname?.split('.')[0] ?? domain?.replace(/\./g, '-').slice(0, 63).replace(/-+$/, '') ?? null;
    serverName = derived !== null && LABEL.test(derived) ? derived : null;
  }

  const os = str('os');

  const region = str('region');
  const sshKeys: string[] = [];
  if (config.ssh_keys !== undefined) {
    if (!Array.isArray(config.ssh_keys) || config.ssh_keys.length > 10)
      bad('ssh_keys', 'must be a list of at most 10 public keys');
    else {
      // Checked as an account's keys are (core/ssh/keys.ts), so a key we inject is one sshd accepts.
      for (const [i, key] of config.ssh_keys.entries()) {
        const parsed = tryParsePublicKey(key);
        if ('problem' in parsed) {
          bad('ssh_keys', `[${i}]: ${parsed.problem}`);
          break;
        }
        sshKeys.push(parsed.normalized);
      }
    }
  }
  let userData: string | null = null;
  if (config.user_data !== undefined && config.user_data !== null) {
    const problem = userDataProblem(config.user_data);
    if (problem !== null) bad('user_data', problem);
    else if (config.user_data !== '') userData = config.user_data as string;
  }
  const eula = config.eula === true;
  if (config.eula !== undefined && typeof config.eula !== 'boolean') bad('eula', 'must be true or false');
  else if (rules?.eulaRequired && !eula) bad('eula', rules.eulaRequired);

  // An unknown plan (null) keeps them, so that they are checked against the catalog too.
  const keeps = (key: string) => rules === null || rules.keys.includes(key);
  return {
    serverName,
    region,
    hostname: keeps('hostname') ? hostname : null,
    os: keeps('os') ? os : null,
    sshKeys,
    eula,
    domain,
    userData: keeps('user_data') ? userData : null,
  };
}

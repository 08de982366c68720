// Parameter verification as PVE's JSON schema does it: unknown parameters, missing required
// ones and malformed values are a 400 "Parameter verification failed." listing every bad
// parameter with PVE's wording, so a driver bug shows up here rather than on a real node.

import { isIP } from 'node:net';
import { paramError } from './tasks.ts';

type Check = (value: string) => string | null;
export type Schema = Record<string, Check>;

const TRUE = ['1', 'true', 'yes', 'on'];
const FALSE = ['0', 'false', 'no', 'off'];

export const any: Check = () => null;
export const bool: Check = (v) =>
  TRUE.includes(v.toLowerCase()) || FALSE.includes(v.toLowerCase())
    ? null
    : `type check ('boolean') failed - got '${v}'`;
export const isTrue = (v: string | undefined): boolean => v !== undefined && TRUE.includes(v.toLowerCase());

export function int(min: number, max = Number.MAX_SAFE_INTEGER): Check {
  return (v) => {
    if (!/^-?\d+$/.test(v)) return `type check ('integer') failed - got '${v}'`;
    const n = Number(v);
    if (n < min) return `value must have a minimum value of ${min}`;
    if (n > max) return `value must have a maximum value of ${max}`;
    return null;
  };
}

export function oneOf(...values: string[]): Check {
  return (v) =>
    values.includes(v) ? null : `value '${v}' does not have a value in the enumeration '${values.join(', ')}'`;
}

export const dnsName: Check = (v) =>
  /^(?=.{1,255}$)[a-zA-Z0-9]([a-zA-Z0-9-]{0,61}[a-zA-Z0-9])?(\.[a-zA-Z0-9]([a-zA-Z0-9-]{0,61}[a-zA-Z0-9])?)*$/.test(v)
    ? null
    : 'invalid format - value does not look like a valid DNS name';

export const maxLength =
  (n: number): Check =>
  (v) =>
    v.length <= n ? null : `value may only be ${n} characters long`;

const tags: Check = (v) =>
  v
    .split(/[;, ]/)
    .filter(Boolean)
    .every((t) => /^[a-z0-9_][a-z0-9_\-+.]*$/i.test(t))
    ? null
    : `invalid format - invalid characters in tag list '${v}'`;

const nameservers: Check = (v) =>
  v
    .split(/[ ,;]+/)
    .filter(Boolean)
    .every((ip) => isIP(ip) !== 0)
    ? null
    : `invalid format - value '${v}' does not look like a valid list of IP addresses`;

/** `ip=<CIDR|dhcp>,gw=<IP>[,ip6=…,gw6=…]` */
const ipconfig: Check = (v) => {
  for (const part of v.split(',')) {
    const [key, value = ''] = part.split('=');
    const [address, prefix] = value.split('/');
    const ok =
      (key === 'ip' &&
        (value === 'dhcp' || (isIP(address ?? '') === 4 && /^\d+$/.test(prefix ?? '') && Number(prefix) <= 32))) ||
      (key === 'gw' && isIP(value) === 4) ||
      (key === 'ip6' && (value === 'dhcp' || value === 'auto' || isIP(address ?? '') === 6)) ||
      (key === 'gw6' && isIP(value) === 6);
    if (!ok) return `invalid format - format error\nipconfig: invalid format - value '${part}' is not valid`;
  }
  return null;
};

/** PVE URL-decodes sshkeys (percent escapes only: a `+` stays a `+`) and checks each key. */
const sshkeys: Check = (v) => {
  let decoded: string;
  try {
    decoded = decodeURIComponent(v);
  } catch {
    return 'invalid urlencoded string';
  }
  const keys = decoded.split('\n').filter((line) => line.trim() !== '');
  return keys.every((k) => /^(ssh-(rsa|dss|ed25519)|ecdsa-sha2-nistp\d+|sk-\S+) [A-Za-z0-9+/]+=*( .*)?$/.test(k.trim()))
    ? null
    : 'invalid format - unable to parse public key';
};

/** `[meta=<volume>][,network=<volume>][,user=<volume>][,vendor=<volume>]`, each a volume id `<storage>:<path>`. */
const cicustom: Check = (v) =>
  v.split(',').every((part) => /^(meta|network|user|vendor)=[a-z][a-z0-9_.-]*:[^\s,]+$/i.test(part)) &&
  new Set(v.split(',').map((part) => part.split('=')[0])).size === v.split(',').length
    ? null
    : `invalid format - value '${v}' does not look like a cicustom list of <type>=<volume>`;

const bridgeOf: Check = (v) => (/(^|,)bridge=[a-zA-Z0-9_.-]+(,|$)/.test(v) ? null : 'invalid format - missing bridge');

export const CONFIG: Schema = {
  name: dnsName,
  description: maxLength(8192),
  tags,
  cores: int(1, 1024),
  sockets: int(1, 4),
  memory: int(16),
  balloon: int(0),
  ciuser: maxLength(64),
  cipassword: maxLength(256),
  citype: oneOf('configdrive2', 'nocloud', 'opennebula'),
  cicustom,
  sshkeys,
  nameserver: nameservers,
  searchdomain: maxLength(255),
  onboot: bool,
  agent: any,
  protection: bool,
  boot: any,
  ostype: any,
  cpu: any,
  vga: any,
  scsihw: any,
  delete: any,
  revert: any,
  digest: (v) => (/^[a-f0-9]{40}$/.test(v) ? null : 'invalid format - value does not look like a SHA1 digest'),
  skiplock: bool,
};

/** Keys with an index: ipconfig0…, net0…, disks, serial ports. */
const INDEXED: [RegExp, Check][] = [
  [/^ipconfig\d$/, ipconfig],
  [/^net\d$/, bridgeOf],
  [/^(scsi\d{1,2}|virtio\d{1,2}|sata\d|ide\d|efidisk0|tpmstate0)$/, any],
  [/^serial[0-3]$/, any],
];

/** Check `params` against `schema`; `required` must be present. Throws a 400 listing every failure. */
export function verify(params: Record<string, string>, schema: Schema, required: string[] = []): void {
  const errors: Record<string, string> = {};
  for (const key of required) if (params[key] === undefined) errors[key] = 'property is missing and it is not optional';
  for (const [key, value] of Object.entries(params)) {
    const check = schema[key] ?? (schema === CONFIG ? INDEXED.find(([re]) => re.test(key))?.[1] : undefined);
    if (!check) {
      errors[key] = 'property is not defined in schema and the schema does not allow additional properties';
      continue;
    }
    const problem = check(value);
    if (problem) errors[key] = problem;
  }
  if (Object.keys(errors).length > 0) throw paramError(errors);
}

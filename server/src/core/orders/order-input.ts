// What an order says, checked per plan type before any money moves (spec 4.7; §7 codes
// domain_required, bad_domain, bad_config_<field>). Every problem is reported; the error code
// names the first.

import type { PlanType } from '../../db/tables.ts';
import { AppError, type ErrorCode } from '../errors.ts';

export interface OrderInput {
  /** Plan id, or its label. */
  plan: number | string;
  config: Record<string, unknown>;
  domain?: string | null;
}

export interface CheckedConfig {
  serverName: string;
  region: string | null;
  hostname: string | null;
  os: string | null;
  sshKeys: string[];
  eula: boolean;
  domain: string | null;
}

const LABEL = /^[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?$/;
const HOSTNAME = /^(?=.{1,253}$)[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?(?:\.[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?)*$/;
const DOMAIN = /^(?=.{4,253}$)(?:[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?\.)+[a-z](?:[a-z0-9-]{0,61}[a-z0-9])$/;
const SSH_KEY =
  /^(ssh-ed25519|ssh-rsa|ecdsa-sha2-nistp(256|384|521)|sk-ssh-ed25519@openssh\.com) [A-Za-z0-9+/]{40,}={0,3}( [^\n\r]{0,200})?$/;

const KEYS: Record<PlanType, string[]> = {
  vps: ['server_name', 'hostname', 'os', 'region', 'ssh_keys', 'eula'],
  game: ['server_name', 'region', 'eula'],
  web: ['server_name', 'region', 'eula'],
};

export function checkOrderConfig(type: PlanType, config: Record<string, unknown>, domainRaw: unknown): CheckedConfig {
  const fields: Record<string, string> = {};
  let code: string | null = null;
  const bad = (field: string, reason: string, errorCode = `bad_config_${field}`) => {
    fields[field === 'domain' ? 'domain' : `config.${field}`] = reason;
    code ??= errorCode;
  };
  for (const key of Object.keys(config)) if (!KEYS[type].includes(key)) bad(key, `is not an option of ${type} plans`);

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
  if (type === 'web') {
    if (domainRaw === undefined || domainRaw === null || domainRaw === '')
      bad('domain', 'is required for web hosting', 'domain_required');
    else if (typeof domainRaw !== 'string' || !DOMAIN.test(domainRaw.trim().toLowerCase().replace(/\.$/, '')))
      bad('domain', 'must be a domain name such as example.in', 'bad_domain');
    else domain = domainRaw.trim().toLowerCase().replace(/\.$/, '');
  } else if (domainRaw !== undefined && domainRaw !== null && domainRaw !== '') {
    bad('domain', `is only for web hosting plans`, 'bad_domain');
  }

  const hostname = type === 'vps' ? str('hostname') : null;
  if (type === 'vps') {
    if (hostname === null) bad('hostname', 'is required');
    else if (!HOSTNAME.test(hostname)) bad('hostname', 'must be a host name such as web1 or web1.example.in');
  }
  let serverName = str('server_name');
  if (serverName === null) serverName = hostname?.split('.')[0] ?? domain?.replace(/\./g, '-').slice(0, 63) ?? null;
  if (serverName === null) bad('server_name', 'is required');
  else if (!LABEL.test(serverName)) bad('server_name', 'must be 1–63 of a–z, 0–9 and "-" (it becomes the label)');

  const os = type === 'vps' ? str('os') : null;
  if (type === 'vps' && os === null) bad('os', 'is required (an OS template slug from the catalog)');

  const region = str('region');
  const sshKeys: string[] = [];
  if (config.ssh_keys !== undefined) {
    if (!Array.isArray(config.ssh_keys) || config.ssh_keys.length > 10)
      bad('ssh_keys', 'must be a list of at most 10 public keys');
    else {
      for (const key of config.ssh_keys) {
        if (typeof key !== 'string' || !SSH_KEY.test(key.trim())) {
          bad('ssh_keys', 'each must be an OpenSSH public key line (ssh-ed25519 AAAA… comment)');
          break;
        }
        sshKeys.push(key.trim());
      }
    }
  }
  const eula = config.eula === true;
  if (config.eula !== undefined && typeof config.eula !== 'boolean') bad('eula', 'must be true or false');
  else if (type === 'game' && !eula)
    bad('eula', 'must be true: the game server licence (e.g. the Minecraft EULA) must be accepted');

  if (code !== null)
    throw new AppError(code as ErrorCode, {
      message: Object.entries(fields)
        .map(([k, v]) => `${k} ${v}`)
        .join('; '),
      fields,
    });
  return { serverName: serverName as string, region, hostname, os, sshKeys, eula, domain };
}

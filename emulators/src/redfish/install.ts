// The emulator's stand-in for a seed ISO: real OS images take their install answers from a
// kickstart/preseed/autoinstall file or a cloud-init NoCloud seed image, which a BMC cannot
// see. Here the platform PATCHes them onto the system as an OEM property,
//   PATCH /redfish/v1/Systems/<id> {"Oem": {"Hostplane": {"Install": {
//     "Hostname", "SshKeys": [...], "PasswordHash": "$6$…" | null,
//     "IPv4": {"Address", "PrefixLength", "Gateway"} | null }}}}
// (null clears them), the installer reads them when it boots, and reports its progress as
// `Oem.Hostplane.InstallState` (idle / installing / done / failed). This file checks that value.

import { isObject, type Message, message, RedfishError } from './http.ts';
import type { InstallParams } from './state.ts';

const HOSTNAME =
  /^(?=.{1,253}$)[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?(?:\.[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?)*$/;
const IPV4 = /^(25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)(\.(25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)){3}$/;
/** crypt(3) hashes: `$id$[rounds=N$]salt$hash` (SHA-512 `$6$`, SHA-256 `$5$`, yescrypt `$y$`). */
const CRYPT = /^\$(?:1|5|6|y|2[aby])\$[./A-Za-z0-9$=,]{8,}$/;
const SSH_KEY = /^(ssh-(ed25519|rsa|dss)|ecdsa-sha2-nistp(256|384|521)|sk-[a-z0-9@.-]+) [A-Za-z0-9+/=]+( .*)?$/;

const POINTER = '#/Oem/Hostplane/Install';

/** The checked install parameters, or a 400 listing every bad property. */
export function parseInstall(value: unknown): InstallParams | null {
  if (value === null) return null;
  const problems: Message[] = [];
  const at = (key: string) => `${POINTER}/${key}`;
  const type = (key: string, v: unknown) =>
    problems.push(message('PropertyValueTypeError', [JSON.stringify(v) ?? 'undefined', key], [at(key)]));
  const format = (key: string, v: unknown) =>
    problems.push(message('PropertyValueFormatError', [JSON.stringify(v) ?? 'undefined', key], [at(key)]));
  if (!isObject(value)) {
    throw new RedfishError(400, message('PropertyValueTypeError', [JSON.stringify(value), 'Install'], [POINTER]));
  }
  for (const key of Object.keys(value)) {
    if (!['Hostname', 'SshKeys', 'PasswordHash', 'IPv4'].includes(key)) {
      problems.push(message('PropertyUnknown', [key], [at(key)]));
    }
  }
  const { Hostname, SshKeys, PasswordHash, IPv4 } = value;
  if (Hostname === undefined) problems.push(message('PropertyMissing', ['Hostname'], [at('Hostname')]));
  else if (typeof Hostname !== 'string') type('Hostname', Hostname);
  else if (!HOSTNAME.test(Hostname)) format('Hostname', Hostname);
  const keys: string[] = [];
  if (SshKeys !== undefined) {
    if (!Array.isArray(SshKeys)) type('SshKeys', SshKeys);
    else
      for (const [i, key] of SshKeys.entries()) {
        if (typeof key !== 'string' || !SSH_KEY.test(key.trim())) format(`SshKeys/${i}`, key);
        else keys.push(key.trim());
      }
  }
  if (PasswordHash !== undefined && PasswordHash !== null) {
    if (typeof PasswordHash !== 'string') type('PasswordHash', PasswordHash);
    else if (!CRYPT.test(PasswordHash)) format('PasswordHash', '(hidden)');
  }
  let ipv4: InstallParams['IPv4'] = null;
  if (IPv4 !== undefined && IPv4 !== null) {
    if (!isObject(IPv4)) type('IPv4', IPv4);
    else {
      const { Address, PrefixLength, Gateway } = IPv4;
      if (typeof Address !== 'string' || !IPV4.test(Address)) format('IPv4/Address', Address);
      if (
        typeof PrefixLength !== 'number' ||
        !Number.isInteger(PrefixLength) ||
        PrefixLength < 0 ||
        PrefixLength > 32
      ) {
        format('IPv4/PrefixLength', PrefixLength);
      }
      if (typeof Gateway !== 'string' || !IPV4.test(Gateway)) format('IPv4/Gateway', Gateway);
      ipv4 = { Address: String(Address), PrefixLength: Number(PrefixLength), Gateway: String(Gateway) };
    }
  }
  if (problems.length > 0) throw new RedfishError(400, problems);
  return {
    Hostname: String(Hostname),
    SshKeys: keys,
    PasswordHash: typeof PasswordHash === 'string' ? PasswordHash : null,
    IPv4: ipv4,
  };
}

// The account's DNS zone: seeded at createacct the way cPanel's zone template writes it (header
// comments, $TTL, SOA, two NS, A for the domain, www and mail, MX, SPF TXT), and DNS::parse_zone,
// which answers every line with names and data base64-encoded.

import { ApiError, type Ctx, required } from './context.ts';
import type { Params } from './http.ts';
import type { Account, ZoneLine } from './state.ts';

function b64(text: string): string {
  return Buffer.from(text, 'utf8').toString('base64');
}

/** YYYYMMDDNN for today, revision 01. */
export function initialSerial(date = new Date()): number {
  const y = date.getUTCFullYear();
  const m = String(date.getUTCMonth() + 1).padStart(2, '0');
  const d = String(date.getUTCDate()).padStart(2, '0');
  return Number(`${y}${m}${d}01`);
}

export function buildZone(ctx: Ctx, account: Account): ZoneLine[] {
  const s = ctx.settings;
  const d = `${account.domain}.`;
  const ns = s.nameservers.map((n) => `${n}.`);
  const rec = (dname: string, ttl: number, recordType: string, data: string[]): ZoneLine => ({
    type: 'record',
    dname,
    ttl,
    recordType,
    data,
  });
  return [
    {
      type: 'comment',
      text: `; cPanel first:${s.version} (update_time):${Math.floor(Date.now() / 1000)} Cpanel::ZoneFile::VERSION:1.3 hostname:${s.hostname} latest:${s.version}`,
    },
    { type: 'comment', text: `; Zone file for ${account.domain}` },
    { type: 'control', text: '$TTL 14400' },
    rec(d, 86400, 'SOA', [
      ns[0] ?? `${s.hostname}.`,
      `${account.email ? account.email.replace('@', '.') : `hostmaster.${account.domain}`}.`,
      String(initialSerial()),
      '3600',
      '1800',
      '1209600',
      '86400',
    ]),
    ...ns.map((n) => rec(d, 86400, 'NS', [n])),
    rec(d, 14400, 'A', [account.ip]),
    rec(d, 14400, 'MX', ['0', d]),
    rec(`mail.${d}`, 14400, 'A', [account.ip]),
    rec(`www.${d}`, 14400, 'A', [account.ip]),
    rec(d, 14400, 'TXT', [`v=spf1 +a +mx +ip4:${account.ip} ~all`]),
  ];
}

/** DNS::parse_zone (`zone` = a domain the account owns). */
export function parseZone(account: Account, params: Params): unknown {
  const [zone] = required({ zone: params.get('zone') });
  if ((zone ?? '').toLowerCase().replace(/\.$/, '') !== account.domain) {
    throw new ApiError(`You do not control a DNS zone named “${zone}”.`);
  }
  return account.zone.map((line, index) => {
    if (line.type !== 'record') return { line_index: index, type: line.type, text_b64: b64(line.text ?? '') };
    return {
      line_index: index,
      type: 'record',
      dname_b64: b64(line.dname ?? ''),
      ttl: line.ttl,
      record_type: line.recordType,
      data_b64: (line.data ?? []).map(b64),
    };
  });
}

const EDITABLE_TYPES = ['A', 'AAAA', 'CAA', 'CNAME', 'MX', 'SRV', 'TXT'];

interface RecordInput {
  line_index?: unknown;
  dname?: unknown;
  ttl?: unknown;
  record_type?: unknown;
  data?: unknown;
}

function currentSerial(account: Account): number {
  const soa = account.zone.find((l) => l.type === 'record' && l.recordType === 'SOA');
  return Number(soa?.data?.[2] ?? 0);
}

function recordOf(item: RecordInput, name: 'add' | 'edit'): ZoneLine {
  const needed =
    name === 'add' ? ['dname', 'ttl', 'record_type', 'data'] : ['line_index', 'dname', 'ttl', 'record_type', 'data'];
  const missing = needed.filter((k) => item[k as keyof RecordInput] === undefined);
  if (missing.length > 0) {
    const list = needed.map((k) => `“${k}”`);
    throw new ApiError(`Each “${name}” requires ${list.slice(0, -1).join(', ')}, and ${list.at(-1)}.`);
  }
  if (!Array.isArray(item.data)) throw new ApiError('“data” must be an array.');
  const type = String(item.record_type).toUpperCase();
  if (!EDITABLE_TYPES.includes(type)) {
    throw new ApiError(
      `This interface cannot create “${type}” records. It can only create ${EDITABLE_TYPES.slice(0, -1).join(', ')}, and ${EDITABLE_TYPES.at(-1)} records.`,
    );
  }
  const ttl = Number(item.ttl);
  if (!Number.isInteger(ttl) || ttl < 0) throw new ApiError(`“${String(item.ttl)}” is not a valid TTL.`);
  return { type: 'record', dname: String(item.dname), ttl, recordType: type, data: item.data.map(String) };
}

function parseItems(params: Params, name: 'add' | 'edit'): RecordInput[] {
  return params.all(name).map((text) => {
    let value: unknown;
    try {
      value = JSON.parse(text);
    } catch {
      throw new ApiError(`Each “${name}” must be an object.`);
    }
    if (typeof value !== 'object' || value === null || Array.isArray(value)) {
      throw new ApiError(`Each “${name}” must be an object.`);
    }
    return value as RecordInput;
  });
}

/** DNS::mass_edit_zone: `zone`, `serial` (must match), `add`/`edit` (JSON, repeatable), `remove` (line indexes). */
export function massEditZone(account: Account, params: Params): unknown {
  const [zone = '', serialText = ''] = required({ zone: params.get('zone'), serial: params.get('serial') });
  if (zone.toLowerCase().replace(/\.$/, '') !== account.domain) {
    throw new ApiError(`You do not control a DNS zone named “${zone}”.`);
  }
  const adds = parseItems(params, 'add');
  const edits = parseItems(params, 'edit');
  const removals = params.all('remove');
  if (adds.length === 0 && edits.length === 0 && removals.length === 0) {
    throw new ApiError('You must provide at least one change to the DNS zone.');
  }
  const removeIdx = removals.map((r) => {
    if (!/^\d+$/.test(r)) throw new ApiError('Each “remove” must be a nonnegative integer.');
    return Number(r);
  });
  const added = adds.map((a) => recordOf(a, 'add'));
  const edited = edits.map((e) => ({ index: Number(e.line_index), line: recordOf(e, 'edit') }));
  const serial = currentSerial(account);
  if (Number(serialText) !== serial) {
    throw new ApiError(
      `The DNS zone’s serial number (${serial}) does not match the given serial number (${serialText}). Reload the zone, and then try again.`,
      { type: 'Stale', detail: null },
    );
  }
  const editable = (index: number): boolean => {
    const line = account.zone[index];
    return !!line && line.type === 'record' && line.recordType !== 'SOA' && line.recordType !== 'NS';
  };
  for (const index of [...removeIdx, ...edited.map((e) => e.index)]) {
    if (!Number.isInteger(index) || !editable(index)) {
      throw new ApiError(`Line ${index} of the DNS zone is not a record that this interface can change.`);
    }
  }
  for (const { index, line } of edited) account.zone[index] = line;
  const next = account.zone.filter((_, i) => !removeIdx.includes(i));
  next.push(...added);
  const today = initialSerial();
  const newSerial = today > serial ? today : serial + 1;
  const soa = next.find((l) => l.type === 'record' && l.recordType === 'SOA');
  if (soa?.data) soa.data[2] = String(newSerial);
  account.zone = next;
  return { new_serial: String(newSerial) };
}

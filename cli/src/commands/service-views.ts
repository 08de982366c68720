// How `instances list` and `instances show` print services of every type (the objects of GET
// /api/v1/instances and /api/v1/instances/{id}): one table for a mixed list, columns that fit the
// type when the list is filtered to one, and a detail whose fields depend on what the type has.

import { type Hostplane, HostplaneError, type Service, type ServiceDetail, type ServiceStats } from '@hostplane/sdk';
import { type Cell, out, paint, rupees, type Safe, state, table } from '../output.ts';
import { scheduleLine } from './backups.ts';

/** The types `--type` takes (`kvm` is the second surface's name of `vps`). */
export const SERVICE_TYPES = ['vps', 'baremetal', 'game', 'web', 'kvm'] as const;

/** Where the service is reached: a web site by its domain, anything else by its IPv4 (else its hostname). */
const address = (s: Service): string | null => (s.type === 'web' ? s.domain : (s.ipv4 ?? s.hostname));

const paidUntil = (s: Service): Cell =>
  s.overdue ? paint(out.red, `${s.paid_until ?? '-'} (overdue)`) : (s.paid_until ?? null);

/** The table of a list: the common columns, or the ones a single type has. */
export function serviceTable(list: Service[], type: string | undefined): Safe {
  switch (type) {
    case 'vps':
    case 'baremetal':
      return table(
        ['ID', 'LABEL', 'STATUS', 'POWER', 'IPV4', 'HOSTNAME', 'OS', 'REGION', 'PLAN'],
        list.map((s) => [
          s.id,
          s.label,
          state(s.status),
          state(s.power),
          s.ipv4,
          s.hostname,
          s.os,
          s.region.code,
          s.plan.label,
        ]),
      );
    case 'game':
      return table(
        ['ID', 'LABEL', 'STATUS', 'POWER', 'ADDRESS', 'REGION', 'PLAN', 'PAID UNTIL'],
        list.map((s) => [
          s.id,
          s.label,
          state(s.status),
          state(s.power),
          address(s),
          s.region.code,
          s.plan.label,
          paidUntil(s),
        ]),
      );
    case 'web':
      return table(
        ['ID', 'LABEL', 'STATUS', 'DOMAIN', 'REGION', 'PLAN', 'PAID UNTIL'],
        list.map((s) => [s.id, s.label, state(s.status), s.domain, s.region.code, s.plan.label, paidUntil(s)]),
      );
    default:
      return table(
        ['ID', 'LABEL', 'TYPE', 'STATUS', 'POWER', 'ADDRESS', 'REGION', 'PLAN'],
        list.map((s) => [
          s.id,
          s.label,
          s.type,
          state(s.status),
          s.type === 'web' ? null : state(s.power),
          address(s),
          s.region.code,
          s.plan.label,
        ]),
      );
  }
}

const gib = (bytes: number | null) => (bytes === null ? '?' : `${(bytes / 2 ** 30).toFixed(1)} GiB`);

function uptime(seconds: number | null): string | null {
  if (seconds === null) return null;
  const d = Math.floor(seconds / 86_400);
  const h = Math.floor((seconds % 86_400) / 3600);
  const m = Math.floor((seconds % 3600) / 60);
  return d > 0 ? `${d}d ${h}h` : h > 0 ? `${h}h ${m}m` : `${m}m`;
}

/**
 * The live figures of an active service that has them, for the table only: a node that is slow or
 * down, or a type without them (web hosting), leaves them out instead of failing the command.
 */
async function liveStats(client: Hostplane, s: ServiceDetail): Promise<ServiceStats | null> {
  if (s.type === 'web' || s.status !== 'active') return null;
  try {
    return await client.serviceStats(s.id);
  } catch (error) {
    if (error instanceof HostplaneError && error.status !== 401 && error.status !== 403) return null;
    throw error;
  }
}

/** `name  value` lines of one service, by what its type has. */
export async function serviceFields(
  client: Hostplane,
  s: ServiceDetail,
  showPassword: boolean,
): Promise<[string, Cell][]> {
  const stats = await liveStats(client, s);
  const c = s.credentials;
  const job = s.last_job;
  const rows: [string, Cell][] = [
    ['id', s.id],
    ['label', s.label],
    ['type', s.type],
    ['status', s.suspend_reason ? state(`${s.status} (${s.suspend_reason})`) : state(s.status)],
    ['plan', `${s.plan.label} (${s.plan.name})`],
    ['region', `${s.region.code} (${s.region.name})`],
    ['price', `${rupees(s.price.monthly)}/month${s.price.includes_gst ? '' : ' + GST'}`],
    ['paid until', paidUntil(s)],
    ['created', s.created_at],
  ];
  if (s.type === 'web') rows.splice(4, 0, ['domain', s.domain]);
  else {
    rows.splice(
      4,
      0,
      ['power', state(stats?.power ?? s.power)],
      ['ipv4', s.ipv4],
      ...(s.type === 'vps' || s.type === 'baremetal' ? ([['reverse dns', s.ptr ?? null]] as [string, Cell][]) : []),
      ...(s.type === 'vps' ? ([['backups', scheduleLine(s.backup_schedule) ?? 'off']] as [string, Cell][]) : []),
      ['hostname', s.hostname],
      ...(s.os ? ([['image', s.os]] as [string, Cell][]) : []),
    );
  }
  if (stats) {
    rows.push(
      ['cpu', stats.cpu === null ? null : `${Math.round(stats.cpu * 100)}% of ${stats.cpus}`],
      ['memory', `${gib(stats.memory.used_bytes)} / ${gib(stats.memory.total_bytes)}`],
      ['uptime', uptime(stats.uptime_seconds)],
    );
  }
  rows.push(
    ['last job', job ? `${job.id} (${job.type}) ${job.status}${job.error ? `: ${job.error.message}` : ''}` : null],
    ['username', c?.username ?? null],
    ['password', c ? (showPassword ? c.password : paint(out.dim, '(hidden: --show-password)')) : null],
  );
  return rows;
}

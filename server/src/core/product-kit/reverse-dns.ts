// Reverse DNS of a service's IPv4 address (issue 37, CONTRACT §13): the `rdns` action, shared by
// the products that give a service its own address (vps, baremetal). `{ptr: "host.example.in"}`
// sets the PTR record, `{ptr: null}` (or "") clears it, through the DNS driver of the platform
// (upstreams/dns.ts, reached as ctx.drivers.reverseDns()); `services.ptr` keeps what was set.
//
// Order: the DNS server first, then the row. A refusal or failure of the DNS server leaves the
// row as it was (what the views show stays what the server held before). Were the row's update to
// fail after the server accepted, the server would be ahead of the row until the next set or clear,
// which writes both again: both are idempotent (REPLACE, DELETE).

import { Type } from 'typebox';
import type { Service } from '../../db/tables.ts';
import { HOSTNAME_LABEL } from '../../upstreams/dns.ts';
import { UpstreamError } from '../../upstreams/errors.ts';
import { AppError } from '../errors.ts';
import type { ActionContext, ProductAction } from './actions.ts';

/** The longest hostname (RFC 1035 §2.3.4: 255 octets on the wire, 253 characters written). */
export const MAX_HOSTNAME = 253;

/**
 * A PTR name as stored and sent: trimmed, lower-case, without the trailing dot; null clears.
 * Throws 422 (validation_failed, `ptr`) for anything that is not a hostname of RFC 1123 labels
 * with at least two of them and a last label that is not all digits.
 */
export function normalizePtr(raw: unknown): string | null {
  if (raw === null) return null;
  if (typeof raw !== 'string') {
    throw AppError.fields(
      { ptr: 'must be a hostname, or null to clear it' },
      'The reverse DNS name must be a hostname.',
    );
  }
  const name = raw.trim().toLowerCase().replace(/\.$/, '');
  if (raw.trim() === '') return null;
  const problem = ptrProblem(name);
  if (problem) throw AppError.fields({ ptr: problem }, `The reverse DNS name ${problem}.`);
  return name;
}

/** Why a name (lower-case, no trailing dot) is not a hostname a PTR may point to, or null. */
export function ptrProblem(name: string): string | null {
  if (name.length > MAX_HOSTNAME) return `must be at most ${MAX_HOSTNAME} characters`;
  const labels = name.split('.');
  if (labels.some((l) => l === '')) return 'must not have an empty label (two dots in a row, or a leading dot)';
  if (labels.length < 2) return 'must be a fully qualified name such as host.example.in';
  for (const label of labels) {
    if (label.length > 63) return `has a label longer than 63 characters (${label.slice(0, 20)}…)`;
    if (!HOSTNAME_LABEL.test(label)) {
      return 'each label is letters, digits and hyphens, not starting or ending with a hyphen (no underscores or spaces)';
    }
  }
  if (/^\d+$/.test(labels.at(-1) as string)) return 'must end in a name, not a number';
  return null;
}

/** The service's IPv4 address (409 unavailable:no_ipv4 when it has none yet). */
async function addressOf(ctx: ActionContext): Promise<string> {
  const row = await ctx.db
    .selectFrom('ipv4_addresses')
    .select('address')
    .where('service_id', '=', ctx.service.id)
    .orderBy('id')
    .executeTakeFirst();
  if (!row) throw AppError.unavailable('no_ipv4', 'This service has no IPv4 address yet.');
  return row.address;
}

/** What a client sees when the DNS server refuses or fails (never its key or address). */
export function dnsError(error: unknown): unknown {
  if (!(error instanceof UpstreamError)) return error;
  switch (error.kind) {
    case 'rejected':
      return AppError.fields(
        { ptr: error.detail ?? 'was refused by the DNS server' },
        'The DNS server refused this name.',
      );
    case 'not_found':
      return AppError.unavailable('reverse_zone', 'Reverse DNS is not available for this address yet.');
    case 'rate_limited':
      return new AppError('rate_limited', {
        message: 'The DNS server is busy; try again shortly.',
        retryAfter: Math.max(1, Math.ceil(error.retryAfterSeconds ?? 10)),
        cause: error,
      });
    case 'unreachable':
    case 'timeout':
      return new AppError('node_unreachable', {
        message: 'The DNS server did not answer; try again shortly.',
        retryAfter: 10,
        cause: error,
      });
    default:
      return new AppError('service_unavailable', {
        message: 'Reverse DNS cannot be changed right now; try again later.',
        retryAfter: 60,
        cause: error,
      });
  }
}

/** The reverse DNS of a service as every surface shows it. */
export const rdnsView = (ipv4: string, ptr: string | null) => ({ ipv4, ptr });

export function rdnsAction(description = 'the IPv4 address'): ProductAction {
  return {
    name: 'rdns',
    method: 'mutate',
    params: Type.Object(
      {
        ptr: Type.Union([Type.String({ maxLength: 300 }), Type.Null()], {
          description: `rdns: the PTR hostname of ${description} (RFC 1123 labels, at most 253 characters, a trailing dot optional); null or "" clears it`,
        }),
      },
      { additionalProperties: false },
    ),
    states: ['active'],
    description: `set ({ptr: hostname}) or clear ({ptr: null}) the reverse DNS (PTR) of ${description}`,
    usage: '{ptr | null}',
    surfaces: { session: 'services' },
    async check(_ctx, params) {
      if (!('ptr' in params)) throw AppError.fields({ ptr: 'is required (null clears it)' });
      return { ptr: normalizePtr(params.ptr) };
    },
    async handler(ctx, params) {
      const ptr = params.ptr as string | null;
      const address = await addressOf(ctx);
      const dns = ctx.drivers.reverseDns();
      try {
        if (ptr === null) await dns.clearPtr(address);
        else await dns.setPtr(address, ptr);
      } catch (error) {
        throw dnsError(error);
      }
      await ctx.db
        .updateTable('services')
        .set({ ptr })
        .where('id', '=', ctx.service.id)
        .where('account_id', '=', ctx.accountId)
        .execute();
      return {
        kind: 'data',
        message: ptr === null ? `Reverse DNS of ${address} cleared.` : `Reverse DNS of ${address} set to ${ptr}.`,
        data: { rdns: rdnsView(address, ptr) },
      };
    },
    example: (_service: Service) => ({ ptr: 'battery.example.in' }),
  };
}

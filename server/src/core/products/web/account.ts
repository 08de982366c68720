// The hosting account behind a web service: where it is kept (services.external, written by
// provisioning: `{claim, marker}` before the account is created, `{username, domain, marker}`
// once it is; read through ./data.ts webExternal), how an action reaches the node's driver, and
// how the panel's refusals read to a client (spec §7 web row: weak_password, bad_db_name,
// bad_mailbox, node_unreachable; 409 limit_reached with the limit).

import type { Service } from '../../../db/tables.ts';
import { UpstreamError } from '../../../upstreams/errors.ts';
import type { WebPanel } from '../../../upstreams/web-panel.ts';
import { AppError } from '../../errors.ts';
import type { ActionContext } from '../../product-kit/actions.ts';
import { webExternalOf } from './data.ts';

export interface WebAccountRef {
  username: string;
  domain: string;
}

/**
 * The username provisioning chose for the service and the marker (the account's contact e-mail)
 * it creates the account with, both recorded before `createacct`: an account on the server is
 * this service's only when it has that username and carries that marker.
 */
export interface WebClaim {
  username: string;
  marker: string;
}

/** The service's claim, or null: none recorded yet (or a service provisioned before markers). */
export function claimOf(service: Pick<Service, 'id' | 'external'>): WebClaim | null {
  const ref = webExternalOf(service);
  const username = ref?.claim ?? ref?.username;
  return username !== undefined && ref?.marker !== undefined ? { username, marker: ref.marker } : null;
}

/** The hosting account a service points at, or null before provisioning created it. */
export function accountOf(service: Pick<Service, 'id' | 'external'>): WebAccountRef | null {
  const ref = webExternalOf(service);
  return ref?.username !== undefined && ref.domain !== undefined
    ? { username: ref.username, domain: ref.domain }
    : null;
}

export const noPanelUser = () =>
  new AppError('no_panel_user', { message: 'The hosting account is still being created; try again in a minute.' });

/** The refusal of a web action for the service's status (CONTRACT §6 state checks). */
export function webRefused(service: Service): AppError {
  switch (service.status) {
    case 'suspended':
      return new AppError('suspended', { message: 'The hosting account is suspended.' });
    case 'pending':
    case 'provisioning':
      return noPanelUser();
    default:
      return new AppError('no_panel_user', { message: `The service is ${service.status}; it has no hosting account.` });
  }
}

/** The node's panel driver and the service's account, for an action. */
export async function webTarget(ctx: ActionContext): Promise<{ panel: WebPanel; account: WebAccountRef }> {
  const account = accountOf(ctx.service);
  if (!account) throw noPanelUser();
  return { panel: ctx.drivers.driverFor(await ctx.node(), 'webPanel'), account };
}

const LIMIT = /(\d+)/;

/** What a client sees when the panel refuses or fails; `field` names the parameter a refusal is about. */
export function webError(error: unknown, field = 'name'): unknown {
  if (!(error instanceof UpstreamError)) return error;
  const detail = error.detail ?? 'The hosting panel refused the request.';
  switch (error.kind) {
    case 'rejected':
      switch (error.reason) {
        case 'weak_password':
          return new AppError('weak_password', { message: detail, fields: { password: detail } });
        case 'bad_db_name':
          return new AppError('bad_db_name', { message: detail, fields: { [field]: detail } });
        case 'bad_mailbox':
          return new AppError('bad_mailbox', { message: detail, fields: { [field]: detail } });
        case 'exists':
          return new AppError('conflict', { message: detail, fields: { [field]: 'is already taken' } });
        case 'not_found':
          return new AppError('not_found', { message: detail });
        case 'limit': {
          const limit = LIMIT.exec(detail);
          return new AppError('limit_reached', {
            message: detail,
            ...(limit ? { details: { limit: Number(limit[1]) } } : {}),
          });
        }
        default:
          return new AppError('conflict', { message: detail });
      }
    case 'not_found':
      return new AppError('not_found', { message: detail });
    case 'auth':
    case 'forbidden':
    case 'protocol':
      return new AppError('service_unavailable', {
        message: 'The hosting panel cannot be used right now; try again later.',
        retryAfter: 60,
        cause: error,
      });
    default:
      return new AppError('node_unreachable', {
        message: 'The hosting panel did not answer; try again shortly.',
        retryAfter: 10,
        cause: error,
      });
  }
}

/** Ask the panel about the action's account; refusals become ours (webError). */
export async function askWeb<T>(
  ctx: ActionContext,
  call: (panel: WebPanel, account: WebAccountRef) => Promise<T>,
  field?: string,
): Promise<T> {
  const { panel, account } = await webTarget(ctx);
  try {
    return await call(panel, account);
  } catch (error) {
    // "Not found" may be about what was named (a database, a mailbox) or about the account itself,
    // removed on the server behind the platform's back: the latter is no_panel_user, not a 404.
    if (error instanceof UpstreamError && (error.kind === 'not_found' || error.reason === 'not_found')) {
      const exists = await panel.findAccount(account.username).catch(() => undefined);
      if (exists === null) {
        throw new AppError('no_panel_user', {
          message: 'The hosting account is no longer on its server; contact support.',
        });
      }
    }
    throw webError(error, field);
  }
}

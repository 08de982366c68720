// The panel server behind a game service: where its reference is kept (services.external, JSON
// written by provisioning: the server's ids, the name it carries, its owner's panel user id), the
// platform's names and addresses on the panel, how an action reaches the node's driver, and how
// the panel's refusals read to a client (CONTRACT §6: node_unreachable 503, upstream_forbidden 403,
// 409 for the server's state, 422 with the panel's field messages, 409 limit_reached with the limit).

import type { Kysely } from 'kysely';
import type { DB, Service } from '../../../db/tables.ts';
import { UpstreamError } from '../../../upstreams/errors.ts';
import type { GamePanel, GameServerRef } from '../../../upstreams/game-panel.ts';
import { AppError } from '../../errors.ts';
import * as jobs from '../../jobs/job.repository.ts';
import type { ActionContext } from '../../product-kit/actions.ts';
import { storedOrNull } from '../../product-kit/data.ts';
import { externalName } from '../../system/installation.ts';
import { type GameExternal, gameExternal } from './data.ts';

/** What provisioning recorded of the service's server, or null before it made one. */
export function gameExternalOf(service: Pick<Service, 'external'>): GameExternal | null {
  return storedOrNull(gameExternal, service.external);
}

/**
 * The name of a service's server on the panel (its external_id): the one recorded with the
 * server (a server made before names carried the installation keeps `hp-svc-<id>`, migration
 * 0021), else this installation's `hp-<installation>-svc-<id>`.
 */
export function serverExternalId(installationId: string, service: Pick<Service, 'id' | 'external'>): string {
  return gameExternalOf(service)?.name || externalName(installationId, 'svc', service.id);
}

/** The panel user of an account (its external_id, also its username): `hp-<installation>-acct-<id>`. */
export const userExternalId = (installationId: string, accountId: number) =>
  externalName(installationId, 'acct', accountId);

/** Where the panel users' platform-owned addresses live: PUBLIC_URL's host when it is a DNS name. */
export function panelMailDomain(publicUrl: string): string {
  const host = new URL(publicUrl).hostname.toLowerCase();
  // An IP address (or anything else no mailbox can be at) gets a name that can never be delivered.
  return /^(?=.*[a-z])[a-z0-9-]+(\.[a-z0-9-]+)*$/.test(host) ? host : 'hostplane.invalid';
}

/**
 * The address of an account's panel user: the platform's own (never the customer's), so no
 * invite of the customer's address, made before or after, can stand in the way of the user.
 */
export const panelUserEmail = (publicUrl: string, installationId: string, accountId: number) =>
  `${userExternalId(installationId, accountId)}@${panelMailDomain(publicUrl)}`;

/** Addresses only the platform's own panel users have: an invite may not claim one. */
export function isPlatformPanelAddress(publicUrl: string, email: string): boolean {
  const at = email.lastIndexOf('@');
  return at > 0 && /^hp-/i.test(email.slice(0, at)) && email.slice(at + 1).toLowerCase() === panelMailDomain(publicUrl);
}

/** The panel server a service points at, or null before provisioning created it. */
export function serverRefOf(service: Pick<Service, 'external'>): GameServerRef | null {
  const ref = gameExternalOf(service);
  return ref ? { id: ref.id, uuid: ref.uuid, identifier: ref.identifier } : null;
}

export const noServer = () =>
  new AppError('no_server', { message: 'The game server is still being created; try again in a minute.' });
export const installing = () =>
  new AppError('server_installing', { message: 'The game server is installing; try again when it has finished.' });

/** The refusal of a game action for the service's status (CONTRACT §6 state checks). */
export function gameRefused(service: Service): AppError {
  switch (service.status) {
    case 'suspended':
      return new AppError('suspended', { message: 'The game server is suspended.' });
    case 'pending':
    case 'provisioning':
      return serverRefOf(service) ? installing() : noServer();
    default:
      return new AppError('no_server', { message: `The service is ${service.status}; it has no game server.` });
  }
}

/** A reinstall running on an active service: the panel is installing (`server_installing`). */
export async function refuseWhileInstalling(db: Kysely<DB>, service: Service): Promise<void> {
  if (service.status !== 'active') return;
  const active = await jobs.activeForService(db, service.id);
  if (active?.type === 'reinstall') throw installing();
}

/** The node's panel driver and the service's server, for an action. */
export async function gameTarget(ctx: ActionContext): Promise<{ panel: GamePanel; ref: GameServerRef }> {
  const ref = serverRefOf(ctx.service);
  if (!ref) throw noServer();
  const panel = ctx.drivers.driverFor(await ctx.node(), 'gamePanel');
  return { panel, ref };
}

/** Map a panel field (e.g. `environment.SERVER_JARFILE`, `value`) to the action's parameter. */
export type FieldMap = Record<string, string>;

const LIMIT = /limit of (\d+)/i;

/** What a client sees when the panel refuses or fails (never the platform's credentials or the node's address). */
export function panelError(error: unknown, fieldMap: FieldMap = {}): unknown {
  if (!(error instanceof UpstreamError)) return error;
  const detail = error.detail;
  switch (error.kind) {
    case 'forbidden':
      return new AppError('upstream_forbidden', {
        message: 'The game panel refused this action.',
        cause: error,
      });
    case 'rate_limited':
      return new AppError('rate_limited', {
        message: detail ?? 'The game panel is busy; try again shortly.',
        retryAfter: Math.max(1, Math.ceil(error.retryAfterSeconds ?? 10)),
        cause: error,
      });
    case 'conflict':
      if (detail && /suspended/i.test(detail)) return new AppError('suspended', { cause: error });
      if (detail && /installation process/i.test(detail)) return installing();
      return new AppError('conflict', {
        message: detail ?? 'The game server is busy; try again shortly.',
        cause: error,
      });
    case 'not_found':
      return new AppError('not_found', { message: detail ?? 'Not found on the game server.', cause: error });
    case 'rejected': {
      if (error.fields) {
        const fields: Record<string, string> = {};
        for (const [field, message] of Object.entries(error.fields)) fields[fieldMap[field] ?? field] = message;
        return AppError.fields(fields, 'The game panel refused some values.');
      }
      const limit = detail ? LIMIT.exec(detail) : null;
      if (limit && /limit/i.test(detail ?? '')) {
        return new AppError('limit_reached', { message: detail, details: { limit: Number(limit[1]) }, cause: error });
      }
      return new AppError('conflict', { message: detail ?? 'The game panel refused the request.', cause: error });
    }
    case 'auth':
    case 'protocol':
      return new AppError('service_unavailable', {
        message: 'The game panel cannot be used right now; try again later.',
        retryAfter: 60,
        cause: error,
      });
    default:
      return new AppError('node_unreachable', {
        message: 'The game panel did not answer; try again shortly.',
        retryAfter: 10,
        cause: error,
      });
  }
}

/** Ask the panel about the action's server; refusals become ours (panelError). */
export async function ask<T>(
  ctx: ActionContext,
  call: (panel: GamePanel, ref: GameServerRef) => Promise<T>,
  fieldMap?: FieldMap,
): Promise<T> {
  const { panel, ref } = await gameTarget(ctx);
  try {
    return await call(panel, ref);
  } catch (error) {
    throw panelError(error, fieldMap);
  }
}

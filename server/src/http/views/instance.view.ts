// An instance as the token surfaces show it (rest/ and cloud/ alike): a page of the caller's
// services or one of them with its live state from the node, and its login details. Each
// surface renders the view its own way; what is fetched, and how, is the same.

import { Type } from 'typebox';
import type { Deps } from '../../core/deps.ts';
import { AppError } from '../../core/errors.ts';
import type { ServiceScope } from '../../core/services/service.repository.ts';
import { listedServiceView, serviceView } from './service.view.ts';

/**
 * A page of the caller's instances in `scope`, with their live state from each node's cached
 * listing (every token surface lists them so; its power is in the view).
 */
export async function instancePage(
  deps: Deps,
  accountId: number,
  page: number,
  perPage: number,
  scope: ServiceScope = {},
) {
  const list = await deps.services.list(accountId, page, perPage, scope);
  const live = await deps.serviceActions.liveStates(list.rows.map((d) => d.service));
  return {
    instances: list.rows.map((d) => ({
      service: d.service,
      live: live.get(d.service.id) ?? null,
      view: listedServiceView(deps, d, live.get(d.service.id) ?? null),
    })),
    total: list.total,
  };
}

/** One of the caller's instances in `scope` with its live state and last job (404 not_owner otherwise). */
export async function instanceDetail(deps: Deps, accountId: number, id: number, scope: ServiceScope = {}) {
  const detail = await deps.services.detail(accountId, id, scope);
  const live = (await deps.serviceActions.liveStates([detail.service])).get(id) ?? null;
  return {
    service: detail.service,
    live,
    view: serviceView(deps, detail.service, {
      plan: detail.plan,
      location: detail.location,
      ipv4: detail.ipv4,
      overdue: detail.overdue,
      backupSchedule: detail.backupSchedule,
      power: live?.power ?? null,
      lastJob: detail.lastJob,
    }),
  };
}

/** The instance's login details, or null while it has none. Secret: never cached or logged. */
export async function instanceCredentials(deps: Deps, accountId: number, id: number) {
  try {
    const c = await deps.services.credentials(accountId, id);
    return { username: c.username, password: c.password, ssh: c.ssh };
  } catch (error) {
    if (error instanceof AppError && error.code === 'no_vm') return null;
    throw error;
  }
}

export const CredentialsSchema = Type.Union([
  Type.Object({
    username: Type.String(),
    password: Type.String(),
    ssh: Type.Union([Type.String(), Type.Null()]),
  }),
  Type.Null(),
]);

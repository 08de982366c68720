// Whether something found on an upstream by the platform's name is this service's (security
// review 3, T3-M2). Provisioning finds what an earlier attempt made by its name before making
// anything, so a crash between "created" and "recorded" resumes the same server or VM. A name
// alone is not proof: a second installation on the same panel, or a legacy name (`hp-svc-<id>`,
// from before names carried the installation), can match something another installation made.
// What is adopted is therefore only
//   - the resource whose panel id this service already recorded (services.external), or
//   - one carrying THIS installation's name for this service (`hp-<installation>-svc-<id>`)
//     that no other service of this database records.
// Anything else is refused for good, with the reason in the job's staff detail and an error in
// the log; nothing on the upstream is changed or deleted.

import { sql } from 'kysely';
import { UpstreamError } from '../../upstreams/errors.ts';
import { externalName } from '../system/installation.ts';
import type { JobEnv } from './jobs.ts';

export interface FoundResource {
  /** How the log and the staff detail name it (e.g. `server 12 (3f2a…)`, `VM 104 on pve`). */
  label: string;
  /** The name (external id, VM name) it carries. */
  name: string | null;
  /** It is the one this service recorded (same panel id). */
  recorded: boolean;
  /** `services.external` fields that identify it: a service recording all of them claims it. */
  identity: Record<string, string | number>;
}

/** The name this installation gives the service's server or VM now. */
export const serviceName = (env: Pick<JobEnv, 'installation' | 'service'>): string =>
  externalName(env.installation.id, 'svc', env.service.id);

/** Another service of this database whose `external` records the resource (null: none). */
async function claimedBy(env: JobEnv, identity: Record<string, string | number>): Promise<number | null> {
  let query = env.db
    .selectFrom('services')
    .select('id')
    .where('id', '!=', env.service.id)
    .where('type', '=', env.service.type);
  for (const [field, value] of Object.entries(identity)) {
    query = query.where(sql<string>`external->>${field}`, '=', String(value));
  }
  const row = await query.limit(1).executeTakeFirst();
  return row?.id ?? null;
}

/** Why `found` must not be taken as the service's, or null when it may. */
export async function adoptionRefusal(env: JobEnv, found: FoundResource): Promise<string | null> {
  if (found.recorded) return null;
  if (found.name !== serviceName(env)) {
    return `${found.label} carries the name ${found.name ?? '(none)'}, which is not this installation's name for service ${env.service.id}, and it is not the one the service recorded`;
  }
  const other = await claimedBy(env, found.identity);
  return other === null ? null : `${found.label} is recorded by service ${other}`;
}

/** Throw (not retryable) unless `found` may be taken as the service's; logs the refusal as an error for staff. */
export async function assertAdoptable(env: JobEnv, found: FoundResource): Promise<void> {
  const refusal = await adoptionRefusal(env, found);
  if (refusal === null) return;
  env.logger.error(
    { service: env.service.id, job: env.job.id, node: env.node?.name, found: found.label, name: found.name },
    "refused to adopt an upstream resource that is not this service's",
  );
  throw new UpstreamError('conflict', `refused to adopt ${refusal}; nothing on the node was changed`, {
    retryable: false,
  });
}

/** For an undo: whether `found` is the service's to remove (a foreign one is left alone). */
export async function isOurs(env: JobEnv, found: FoundResource): Promise<boolean> {
  return (await adoptionRefusal(env, found)) === null;
}

// How the second token surface ({ALT_BASE_PATH}/v1/, CONTRACT §9) shows instances and plans:
// the services and plans of every surface (http/views/), named as a cloud API names them —
// `kvm` for a virtual server (plan type vps), `baremetal` for a dedicated machine — with the
// utilisation of each instance from its node's latest listing.

import { Type } from 'typebox';
import type { LiveState, UtilisationGap } from '../../core/product-kit/live.ts';
import { isoWithOffset } from '../../core/time.ts';
import type { PlanType } from '../../db/tables.ts';
import { ServiceSchema } from '../views/service.view.ts';

/** The instance types of this surface and the plan type each is. */
export const INSTANCE_TYPES = { kvm: 'vps', baremetal: 'baremetal' } as const;
export type InstanceType = keyof typeof INSTANCE_TYPES;

/**
 * The services this surface sees: what it deploys. Any other (game, web) answers exactly like a
 * missing id on every route of it, and is neither listed nor counted (core/services ServiceScope).
 */
export const CLOUD_SCOPE: { types: readonly PlanType[] } = { types: Object.values(INSTANCE_TYPES) };

/** The instance type of a plan type (other products keep their plan type). */
const NAMES: ReadonlyMap<string, string> = new Map(Object.entries(INSTANCE_TYPES).map(([name, type]) => [type, name]));

export function instanceType(planType: string): string {
  return NAMES.get(planType) ?? planType;
}

export const UtilisationSchema = Type.Union(
  [
    Type.Object({
      cpu: Type.Union([Type.Number(), Type.Null()], {
        description: 'fraction of the CPUs in use, 0–1; null when the machine does not say',
      }),
      cpus: Type.Integer(),
      memory_used_bytes: Type.Union([Type.Integer(), Type.Null()], {
        description: 'null when the machine does not say',
      }),
      memory_total_bytes: Type.Integer(),
    }),
    Type.Null(),
  ],
  { description: "from the node's latest listing (see live_as_of); null says why in utilisation_reason" },
);

export const InstanceSchema = Type.Object({
  ...ServiceSchema.properties,
  type: Type.String({ description: 'kvm or baremetal' }),
  plan_type: Type.String({ description: 'the plan type behind it: vps or baremetal' }),
  utilisation: UtilisationSchema,
  utilisation_reason: Type.Union(
    [
      Type.Literal('not_running'),
      Type.Literal('node_unreachable'),
      Type.Literal('not_found'),
      Type.Literal('not_reported'),
      Type.Null(),
    ],
    {
      description:
        'why utilisation is null: not_running (stopped, or no machine yet), node_unreachable (the node did not ' +
        'answer and nothing recent is known), not_found (the node no longer has the machine), not_reported ' +
        '(bare metal: the BMC does not see the operating system)',
    },
  ),
  live_as_of: Type.Union([Type.String({ format: 'date-time' }), Type.Null()], {
    description:
      'when the node said the power and utilisation shown: a few seconds ago, older (up to a minute) when ' +
      'the node is slow to answer; null when it was not asked',
  }),
});

/** The live part of an instance: from its node's cached listing (core/product-kit/live.ts), never a live read. */
export function liveView(state: LiveState | null) {
  const u = state?.utilisation ?? null;
  return {
    utilisation: u
      ? { cpu: u.cpu, cpus: u.cpus, memory_used_bytes: u.memoryBytes, memory_total_bytes: u.memoryTotalBytes }
      : null,
    utilisation_reason: u ? null : (state?.gap ?? ('not_running' satisfies UtilisationGap)),
    live_as_of: state?.measuredAt ? isoWithOffset(state.measuredAt) : null,
  };
}

/** Instance views by the service view they were made from, with what they showed live. */
const made = new WeakMap<object, { live: string; view: object }>();

/** What a list shows of a live state, as one comparable string. */
function liveKey(state: LiveState | null): string {
  if (!state) return '';
  const u = state.utilisation;
  return `${state.power}|${state.gap}|${state.measuredAt?.getTime()}|${u?.cpu}|${u?.cpus}|${u?.memoryBytes}|${u?.memoryTotalBytes}`;
}

/**
 * A service view (views/service.view.ts) as this surface shows it. A list's service views are the
 * same objects while their rows and power are unchanged (listedServiceView), and live states change
 * once per probe: the instance view is made again only then, not per request. The view returned is
 * shared: never modify it.
 */
export function instanceView<V extends { type: string }>(view: V, state: LiveState | null) {
  const live = liveKey(state);
  const hit = made.get(view);
  if (hit && hit.live === live) return hit.view as ReturnType<typeof buildInstanceView<V>>;
  const built = buildInstanceView(view, state);
  made.set(view, { live, view: built });
  return built;
}

function buildInstanceView<V extends { type: string }>(view: V, state: LiveState | null) {
  // Object.assign, not two spreads: V8 builds `{ ...a, x, ...b }` of twenty fields several times
  // slower.
  const named: { type: string; plan_type: string } = { type: instanceType(view.type), plan_type: view.type };
  return Object.assign({}, view, named, liveView(state));
}

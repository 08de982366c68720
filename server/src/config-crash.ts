// HOSTPLANE_CRASH_AT (issue 39, docs/RELIABILITY.md): failure drills only. The points of
// provisioning at which a worker kills itself with SIGKILL (worker/crash-point.ts acts on them;
// nothing else does). Unset, the list is empty and nothing changes. Refused with
// NODE_ENV=production, whatever else is set.

/** Where in a provisioning job: just before a step runs, just after it returned, or once the job settled. */
export type CrashWhen = 'before' | 'after' | 'settled';

export interface CrashPoint {
  /** The product (`vps`, `game`, …). */
  product: string;
  /** The provisioning step's name as the job shows it; null for `settled`. */
  step: string | null;
  when: CrashWhen;
}

/** Config's part (config.ts extends it). */
export interface CrashConfig {
  /** Failure drills: where a worker kills itself; empty (the default) in every real deployment. */
  crashAt: readonly CrashPoint[];
}

export const CRASH_VARIABLES = [
  {
    name: 'HOSTPLANE_CRASH_AT',
    description:
      'failure drills only: comma-separated points (product:step:before|after, product:settled) at which a worker kills itself (SIGKILL); refused with NODE_ENV=production',
    default: 'unset (never)',
  },
] as const;

interface Reader {
  get(name: string): string | undefined;
  fail(name: string, value: string, why: string): void;
}

/** `vps:creating the virtual machine:after`, `game:settled`. */
export function crashPointName(point: CrashPoint): string {
  return point.when === 'settled' ? `${point.product}:settled` : `${point.product}:${point.step}:${point.when}`;
}

const ITEM = /^([a-z][a-z0-9_-]*):(?:(settled)|([^:]+):(before|after))$/;

export function readCrashPoints(r: Reader): CrashConfig {
  const raw = r.get('HOSTPLANE_CRASH_AT');
  if (raw === undefined) return { crashAt: [] };
  if (r.get('NODE_ENV') === 'production') {
    r.fail('HOSTPLANE_CRASH_AT', raw, 'a failure-drill setting, refused with NODE_ENV=production');
    return { crashAt: [] };
  }
  const points: CrashPoint[] = [];
  const seen = new Set<string>();
  for (const part of raw.split(',')) {
    const item = part.trim();
    const match = ITEM.exec(item);
    if (!match) {
      r.fail('HOSTPLANE_CRASH_AT', item, 'each point is product:step:before, product:step:after or product:settled');
      continue;
    }
    const [, product = '', settled, step = '', when] = match;
    const point: CrashPoint = settled
      ? { product, step: null, when: 'settled' }
      : { product, step: step.trim(), when: when as 'before' | 'after' };
    const name = crashPointName(point);
    if (seen.has(name)) r.fail('HOSTPLANE_CRASH_AT', item, 'named twice');
    seen.add(name);
    points.push(point);
  }
  return { crashAt: points };
}

// What a plan's `specs` hold, per type. Checked when staff add a plan, so the catalog and the
// provisioning drivers can rely on the shape.

import type { PlanType } from '../../db/tables.ts';

type Rule = { kind: 'int'; min: number; max: number } | { kind: 'number'; min: number; max: number } | { kind: 'slug' };

const RULES: Record<PlanType, Record<string, Rule>> = {
  vps: {
    vcpu: { kind: 'int', min: 1, max: 64 },
    ram_mb: { kind: 'int', min: 512, max: 524_288 },
    disk_gb: { kind: 'int', min: 10, max: 4096 },
    bandwidth_tb: { kind: 'number', min: 0.1, max: 100 },
  },
  game: {
    game: { kind: 'slug' },
    ram_mb: { kind: 'int', min: 512, max: 65_536 },
    cpu_percent: { kind: 'int', min: 25, max: 1600 },
    disk_gb: { kind: 'int', min: 1, max: 1024 },
    slots: { kind: 'int', min: 1, max: 1000 },
  },
  web: {
    sites: { kind: 'int', min: 1, max: 1000 },
    disk_gb: { kind: 'int', min: 1, max: 1024 },
    mailboxes: { kind: 'int', min: 0, max: 10_000 },
    databases: { kind: 'int', min: 0, max: 1000 },
  },
};

export const SPEC_KEYS: Record<PlanType, string[]> = {
  vps: Object.keys(RULES.vps),
  game: Object.keys(RULES.game),
  web: Object.keys(RULES.web),
};

/** Problems with a plan's specs, by key; empty when they fit the type exactly. */
export function specProblems(type: PlanType, specs: unknown): Record<string, string> {
  const problems: Record<string, string> = {};
  if (specs === null || typeof specs !== 'object' || Array.isArray(specs)) return { specs: 'must be an object' };
  const value = specs as Record<string, unknown>;
  for (const [key, rule] of Object.entries(RULES[type])) {
    const v = value[key];
    if (v === undefined) problems[key] = 'is required';
    else if (rule.kind === 'slug' && (typeof v !== 'string' || !/^[a-z0-9][a-z0-9-]{1,47}$/.test(v)))
      problems[key] = 'must be a slug';
    else if (
      rule.kind !== 'slug' &&
      (typeof v !== 'number' || v < rule.min || v > rule.max || (rule.kind === 'int' && !Number.isInteger(v)))
    ) {
      problems[key] = `must be ${rule.kind === 'int' ? 'a whole number' : 'a number'} from ${rule.min} to ${rule.max}`;
    }
  }
  for (const key of Object.keys(value)) if (!(key in RULES[type])) problems[key] = `is not a ${type} spec`;
  return problems;
}

/** The node kind that runs services of a plan type. */
export const NODE_KIND_FOR: Record<PlanType, 'proxmox' | 'pterodactyl' | 'cpanel'> = {
  vps: 'proxmox',
  game: 'pterodactyl',
  web: 'cpanel',
};

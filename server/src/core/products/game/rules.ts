// Value rules checked before the panel sees a value: an egg variable's Laravel validation rules
// (`required|string|max:20`, `regex:/^…$/`, `in:a,b`, …; the panel checks them too, but a
// refusal here names our field and costs the node nothing) and the five cron fields of a
// schedule, which the panel only checks as a whole expression (upstreams.md §1.6).

import { CronExpressionParser } from 'cron-parser';

/** Why `value` breaks `rules` (null: it fits). Unknown rules are left to the panel. */
export function eggRuleProblem(rules: string, value: string): string | null {
  const list = splitRules(rules);
  const has = (name: string) => list.some((r) => r.name === name);
  if (value === '') return has('required') ? 'is required' : null;
  const numeric = has('integer') || has('numeric');
  for (const { name, arg } of list) {
    switch (name) {
      case 'integer':
        if (!/^-?\d+$/.test(value)) return 'must be a whole number';
        break;
      case 'numeric':
        if (!/^-?\d+(\.\d+)?$/.test(value)) return 'must be a number';
        break;
      case 'boolean':
        if (!['0', '1', 'true', 'false'].includes(value)) return 'must be true, false, 1 or 0';
        break;
      case 'alpha_dash':
        if (!/^[\p{L}\p{M}\p{N}_-]+$/u.test(value)) return 'may hold only letters, digits, dashes and underscores';
        break;
      case 'alpha_num':
        if (!/^[\p{L}\p{M}\p{N}]+$/u.test(value)) return 'may hold only letters and digits';
        break;
      case 'url':
        if (!URL.canParse(value)) return 'must be a URL';
        break;
      case 'max':
      case 'min': {
        const bound = Number(arg);
        if (!Number.isFinite(bound)) break;
        const size = numeric ? Number(value) : [...value].length;
        if (name === 'max' && size > bound)
          return numeric ? `must be at most ${bound}` : `must be at most ${bound} characters`;
        if (name === 'min' && size < bound)
          return numeric ? `must be at least ${bound}` : `must be at least ${bound} characters`;
        break;
      }
      case 'between': {
        const [low, high] = (arg ?? '').split(',').map(Number);
        if (low === undefined || high === undefined || !Number.isFinite(low) || !Number.isFinite(high)) break;
        const size = numeric ? Number(value) : [...value].length;
        if (size < low || size > high) return `must be between ${low} and ${high}`;
        break;
      }
      case 'in': {
        const allowed = (arg ?? '').split(',');
        if (!allowed.includes(value)) return `must be one of ${allowed.join(', ')}`;
        break;
      }
      case 'regex': {
        const pattern = phpRegex(arg ?? '');
        if (pattern && !pattern.test(value)) return 'has the wrong format';
        break;
      }
    }
  }
  return null;
}

/** Laravel's rule string; `regex:` may itself contain `|`, so it runs to the end when last. */
function splitRules(rules: string): { name: string; arg: string | undefined }[] {
  const out: { name: string; arg: string | undefined }[] = [];
  let rest = rules;
  while (rest.length > 0) {
    let part: string;
    if (rest.startsWith('regex:')) {
      // The pattern ends at its closing delimiter (plus flags).
      const match = /^regex:(\/(?:\\.|[^/])*\/[a-z]*)(\||$)/.exec(rest);
      part = match ? `regex:${match[1]}` : rest;
      rest = match ? rest.slice(match[0].length) : '';
    } else {
      const at = rest.indexOf('|');
      part = at < 0 ? rest : rest.slice(0, at);
      rest = at < 0 ? '' : rest.slice(at + 1);
    }
    const colon = part.indexOf(':');
    out.push(colon < 0 ? { name: part, arg: undefined } : { name: part.slice(0, colon), arg: part.slice(colon + 1) });
  }
  return out;
}

/** A PCRE `/…/flags` pattern as a JavaScript RegExp (null when it cannot be read as one). */
function phpRegex(source: string): RegExp | null {
  const match = /^\/(.*)\/([a-z]*)$/s.exec(source);
  if (!match) return null;
  try {
    return new RegExp(match[1] as string, (match[2] as string).replace(/[^imsu]/g, ''));
  } catch {
    return null;
  }
}

export const CRON_FIELDS = ['minute', 'hour', 'day_of_month', 'month', 'day_of_week'] as const;
export type CronField = (typeof CRON_FIELDS)[number];

const FIELD_SYNTAX = /^[0-9A-Za-z*,/-]{1,64}$/;

/** Problems with a schedule's cron fields, by field (each alone, then the whole expression). */
export function cronProblems(cron: Record<CronField, string>): Record<string, string> {
  const problems: Record<string, string> = {};
  for (const field of CRON_FIELDS) {
    if (!FIELD_SYNTAX.test(cron[field])) {
      problems[field] = 'must be a cron field: digits, names, "*", ",", "-" and "/"';
      continue;
    }
    // Each field checked in a neutral expression, so the error names the field at fault.
    const probe = CRON_FIELDS.map((f) => (f === field ? cron[field] : '*')).join(' ');
    try {
      CronExpressionParser.parse(probe, { strict: false });
    } catch {
      problems[field] = `is not a valid ${field.replace(/_/g, ' ')} for a schedule`;
    }
  }
  return problems;
}

/** The next run of a schedule in UTC (null: never), for the answer. */
export function nextRun(cron: Record<CronField, string>, from: Date): string | null {
  try {
    const expression = CronExpressionParser.parse(CRON_FIELDS.map((f) => cron[f]).join(' '), {
      currentDate: from,
      tz: 'UTC',
      strict: false,
    });
    return expression.next().toISOString();
  } catch {
    return null;
  }
}

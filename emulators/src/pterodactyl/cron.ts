// Cron expressions as the panel reads schedules (dragonmantank/cron-expression): five fields
// (minute hour day-of-month month day-of-week) with `*`, `?`, lists, ranges, steps and month/day
// names; an invalid one is the panel's 400 "The cron data provided does not evaluate to a valid
// expression.". nextRun finds the next matching minute (UTC).

const MONTHS = ['JAN', 'FEB', 'MAR', 'APR', 'MAY', 'JUN', 'JUL', 'AUG', 'SEP', 'OCT', 'NOV', 'DEC'];
const DAYS = ['SUN', 'MON', 'TUE', 'WED', 'THU', 'FRI', 'SAT'];

interface FieldSpec {
  min: number;
  max: number;
  names?: string[];
  nameBase?: number;
}

const SPECS: FieldSpec[] = [
  { min: 0, max: 59 },
  { min: 0, max: 23 },
  { min: 1, max: 31 },
  { min: 1, max: 12, names: MONTHS, nameBase: 1 },
  { min: 0, max: 7, names: DAYS, nameBase: 0 },
];

function value(text: string, spec: FieldSpec): number | null {
  const upper = text.toUpperCase();
  const named = spec.names?.indexOf(upper) ?? -1;
  if (named >= 0) return named + (spec.nameBase ?? 0);
  if (!/^\d+$/.test(text)) return null;
  const n = Number(text);
  return n >= spec.min && n <= spec.max ? n : null;
}

/** The set of values a field allows, or null when it does not parse. */
function parseField(field: string, spec: FieldSpec): Set<number> | null {
  const out = new Set<number>();
  if (field === '') return null;
  for (const part of field.split(',')) {
    const [range = '', stepText] = part.split('/');
    const step = stepText === undefined ? 1 : /^\d+$/.test(stepText) ? Number(stepText) : Number.NaN;
    if (!Number.isFinite(step) || step < 1) return null;
    let lo: number;
    let hi: number;
    if (range === '*' || range === '?') {
      lo = spec.min;
      hi = spec.max;
    } else if (range.includes('-')) {
      const [a = '', b = ''] = range.split('-');
      const va = value(a, spec);
      const vb = value(b, spec);
      if (va === null || vb === null || va > vb) return null;
      lo = va;
      hi = vb;
    } else {
      const v = value(range, spec);
      if (v === null) return null;
      lo = v;
      hi = stepText === undefined ? v : spec.max;
    }
    for (let v = lo; v <= hi; v += step) out.add(v);
  }
  return out;
}

export interface CronFields {
  minute: string;
  hour: string;
  dayOfMonth: string;
  month: string;
  dayOfWeek: string;
}

export interface Cron {
  sets: Set<number>[];
  domAny: boolean;
  dowAny: boolean;
}

export function parseCron(f: CronFields): Cron | null {
  const fields = [f.minute, f.hour, f.dayOfMonth, f.month, f.dayOfWeek].map((x) => x.trim());
  const sets: Set<number>[] = [];
  for (let i = 0; i < 5; i++) {
    const set = parseField(fields[i] ?? '', SPECS[i] as FieldSpec);
    if (!set) return null;
    sets.push(set);
  }
  const dow = sets[4] as Set<number>;
  if (dow.has(7)) dow.add(0);
  return { sets, domAny: fields[2] === '*' || fields[2] === '?', dowAny: fields[4] === '*' || fields[4] === '?' };
}

function matches(cron: Cron, d: Date): boolean {
  const [min, hour, dom, month, dow] = cron.sets as [Set<number>, Set<number>, Set<number>, Set<number>, Set<number>];
  if (!min.has(d.getUTCMinutes()) || !hour.has(d.getUTCHours()) || !month.has(d.getUTCMonth() + 1)) return false;
  const domOk = dom.has(d.getUTCDate());
  const dowOk = dow.has(d.getUTCDay());
  // Standard cron: when both day fields are restricted, either may match.
  if (!cron.domAny && !cron.dowAny) return domOk || dowOk;
  return domOk && dowOk;
}

/** The next minute after `from` that the expression matches, or null within ~5 years. */
export function nextRun(cron: Cron, from = new Date()): Date | null {
  const d = new Date(from.getTime());
  d.setUTCSeconds(0, 0);
  d.setUTCMinutes(d.getUTCMinutes() + 1);
  const limit = from.getTime() + 5 * 366 * 24 * 3600 * 1000;
  const [, hours, , months] = cron.sets as [Set<number>, Set<number>, Set<number>, Set<number>, Set<number>];
  while (d.getTime() < limit) {
    if (!months.has(d.getUTCMonth() + 1)) {
      d.setUTCMonth(d.getUTCMonth() + 1, 1);
      d.setUTCHours(0, 0, 0, 0);
      continue;
    }
    if (!hours.has(d.getUTCHours())) {
      d.setUTCHours(d.getUTCHours() + 1, 0, 0, 0);
      continue;
    }
    if (matches(cron, d)) return d;
    d.setUTCMinutes(d.getUTCMinutes() + 1);
  }
  return null;
}

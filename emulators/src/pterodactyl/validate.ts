// A small Laravel validator: the pipe-separated rules the panel's form requests and egg
// variables use (required, present, nullable, sometimes, string, integer, numeric, boolean,
// array, min, max, between, size, in, regex, alpha_dash, email), with the panel's English
// messages (resources/lang/en/validation.php) and 422 entries as Handler::invalidJson makes them.

import { PteroError } from './http.ts';

export interface Failure {
  field: string;
  rule: string;
  detail: string;
}

/** A rule that is not a Laravel string rule (e.g. `unique`, `exists`): returns a failure or null. */
export type CustomRule = (value: unknown, present: boolean) => { rule: string; message: string } | null;

export type RuleSet = string | (string | CustomRule)[];

function lookup(data: unknown, path: string): { present: boolean; value: unknown } {
  let cur: unknown = data;
  for (const part of path.split('.')) {
    if (typeof cur !== 'object' || cur === null || !(part in cur)) return { present: false, value: undefined };
    cur = (cur as Record<string, unknown>)[part];
  }
  return { present: true, value: cur };
}

/** PHP's `/pattern/flags` as a JS RegExp. */
export function phpRegex(spec: string): RegExp | null {
  const m = /^\/(.*)\/([a-z]*)$/s.exec(spec);
  if (!m) return null;
  try {
    return new RegExp(m[1] ?? '', (m[2] ?? '').replace(/[^imsu]/g, ''));
  } catch {
    return null;
  }
}

function isEmpty(value: unknown): boolean {
  if (value === null || value === undefined) return true;
  if (typeof value === 'string') return value.trim() === '';
  if (Array.isArray(value)) return value.length === 0;
  if (typeof value === 'object') return Object.keys(value).length === 0;
  return false;
}

function isNumeric(value: unknown): boolean {
  if (typeof value === 'number') return Number.isFinite(value);
  return typeof value === 'string' && /^\s*[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?\s*$/.test(value);
}

function isInteger(value: unknown): boolean {
  if (typeof value === 'number') return Number.isInteger(value);
  return typeof value === 'string' && /^[+-]?\d+$/.test(value);
}

function splitRules(rules: string): string[] {
  // A regex rule may contain '|': keep it whole (Laravel needs the array form for that; the
  // eggs' regexes here have none, but be lenient).
  const out: string[] = [];
  for (const part of rules.split('|')) {
    const last = out.at(-1);
    if (last?.startsWith('regex:') && !/\/[a-z]*$/.test(last)) out[out.length - 1] = `${last}|${part}`;
    else if (part !== '') out.push(part);
  }
  return out;
}

function displayName(field: string, attributes: Record<string, string>): string {
  return attributes[field] ?? field.replace(/_/g, ' ');
}

/** Validate `data` against `rules`; every failure, in rule order. */
export function check(
  data: unknown,
  rules: Record<string, RuleSet>,
  attributes: Record<string, string> = {},
): Failure[] {
  const failures: Failure[] = [];
  for (const [field, spec] of Object.entries(rules)) {
    const list: (string | CustomRule)[] = typeof spec === 'string' ? splitRules(spec) : spec;
    const names = list.filter((r): r is string => typeof r === 'string').map((r) => r.split(':')[0] ?? '');
    const { present, value } = lookup(data, field);
    if (names.includes('sometimes') && !present) continue;
    const nulled = names.includes('nullable') && (value === null || value === '');
    const kind =
      names.includes('numeric') || names.includes('integer') ? 'numeric' : Array.isArray(value) ? 'array' : 'string';
    const attr = displayName(field, attributes);
    const size = (v: unknown): number =>
      kind === 'numeric' ? Number(v) : Array.isArray(v) ? v.length : typeof v === 'string' ? [...v].length : 0;
    const fail = (rule: string, detail: string) => failures.push({ field, rule, detail });
    for (const rule of list) {
      if (typeof rule !== 'string') {
        if (!present || nulled || value === null || value === '') continue;
        const f = rule(value, present);
        if (f) {
          fail(f.rule, f.message.replace(':attribute', attr));
          if (names.includes('bail')) break;
        }
        continue;
      }
      const [name = '', arg = ''] = rule.includes(':')
        ? [rule.slice(0, rule.indexOf(':')), rule.slice(rule.indexOf(':') + 1)]
        : [rule];
      if (name === 'required') {
        if (isEmpty(value)) {
          fail('required', `The ${attr} field is required.`);
          break;
        }
        continue;
      }
      if (name === 'present') {
        if (!present) {
          fail('present', `The ${attr} field must be present.`);
          break;
        }
        continue;
      }
      if (name === 'nullable' || name === 'sometimes' || name === 'bail') continue;
      // Non-implicit rules do not run on absent or empty-string values.
      if (!present || nulled || (typeof value === 'string' && value.trim() === '')) continue;
      let failed: string | null = null;
      switch (name) {
        case 'string':
          if (typeof value !== 'string') failed = `The ${attr} must be a string.`;
          break;
        case 'integer':
          if (!isInteger(value)) failed = `The ${attr} must be an integer.`;
          break;
        case 'numeric':
          if (!isNumeric(value)) failed = `The ${attr} must be a number.`;
          break;
        case 'boolean':
          if (![true, false, 0, 1, '0', '1'].includes(value as never))
            failed = `The ${attr} field must be true or false.`;
          break;
        case 'array':
          if (typeof value !== 'object' || value === null) failed = `The ${attr} must be an array.`;
          break;
        case 'min':
          if (size(value) < Number(arg)) {
            failed =
              kind === 'numeric'
                ? `The ${attr} must be at least ${arg}.`
                : kind === 'array'
                  ? `The ${attr} must have at least ${arg} items.`
                  : `The ${attr} must be at least ${arg} characters.`;
          }
          break;
        case 'max':
          if (size(value) > Number(arg)) {
            failed =
              kind === 'numeric'
                ? `The ${attr} may not be greater than ${arg}.`
                : kind === 'array'
                  ? `The ${attr} may not have more than ${arg} items.`
                  : `The ${attr} may not be greater than ${arg} characters.`;
          }
          break;
        case 'between': {
          const [lo = '0', hi = '0'] = arg.split(',');
          const n = size(value);
          if (n < Number(lo) || n > Number(hi)) {
            failed =
              kind === 'numeric'
                ? `The ${attr} must be between ${lo} and ${hi}.`
                : `The ${attr} must be between ${lo} and ${hi} characters.`;
          }
          break;
        }
        case 'size':
          if (size(value) !== Number(arg)) {
            failed = kind === 'numeric' ? `The ${attr} must be ${arg}.` : `The ${attr} must be ${arg} characters.`;
          }
          break;
        case 'in':
          if (!arg.split(',').includes(String(typeof value === 'boolean' ? Number(value) : value))) {
            failed = `The selected ${attr} is invalid.`;
          }
          break;
        case 'regex': {
          const re = phpRegex(arg);
          if (typeof value !== 'string' && typeof value !== 'number') failed = `The ${attr} format is invalid.`;
          else if (re && !re.test(String(value))) failed = `The ${attr} format is invalid.`;
          break;
        }
        case 'alpha_dash':
          if (typeof value !== 'string' || !/^[\p{L}\p{M}\p{N}_-]+$/u.test(value)) {
            failed = `The ${attr} may only contain letters, numbers, and dashes.`;
          }
          break;
        case 'email':
          if (typeof value !== 'string' || !/^[^\s@]+@[^\s@]+$/.test(value))
            failed = `The ${attr} must be a valid email address.`;
          break;
        default:
          break;
      }
      if (failed !== null) {
        fail(name, failed);
        if (names.includes('bail')) break;
      }
    }
  }
  return failures;
}

/** Throw the panel's 422 when anything failed. */
export function validate(data: unknown, rules: Record<string, RuleSet>, attributes: Record<string, string> = {}): void {
  const failures = check(data, rules, attributes);
  if (failures.length > 0) throw PteroError.validation(failures);
}

// The rules an account's fields follow, checked in one place for the API and the staff CLI.
// Every rule reports, so a request learns all its problems at once.

const EMAIL =
  /^[a-z0-9.!#$%&'*+/=?^_`{|}~-]+@[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?(?:\.[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?)+$/;

/** 3–32 of a–z, 0–9, `_`, `.`, `-`; starts and ends with a letter or digit; never an `@`. */
const USERNAME = /^[a-z0-9](?:[a-z0-9_.-]{1,30})[a-z0-9]$/;

const RESERVED_USERNAMES = new Set([
  'admin',
  'administrator',
  'root',
  'support',
  'staff',
  'hostplane',
  'system',
  'billing',
  'abuse',
  'security',
  'postmaster',
  'webmaster',
  'noreply',
  'no-reply',
  'api',
  'help',
  'sales',
]);

export const NAME_MIN = 2;
export const NAME_MAX = 128;
export const PASSWORD_MIN = 8;
export const PASSWORD_MAX = 128;

const CONTROL = /\p{Cc}/u;
/** Bidirectional overrides and isolates: they reorder what a reader (or a staff terminal) sees. */
const BIDI = /[\u202A-\u202E\u2066-\u2069]/u;

/** Lower-case and trim: e-mail addresses and usernames are compared case-insensitively. */
export function normalizeIdentifier(raw: string): string {
  return raw.trim().toLowerCase();
}

export function nameProblem(raw: string): string | null {
  const name = raw.trim();
  const length = [...name].length;
  if (length < NAME_MIN || length > NAME_MAX) return `must be ${NAME_MIN}–${NAME_MAX} characters`;
  if (CONTROL.test(name)) return 'must not contain control characters';
  if (BIDI.test(name)) return 'must not contain text-direction override characters';
  // The name opens mail the platform sends (F12): no links or addresses in it.
  if (/:\/\/|www\./i.test(name) || name.includes('@'))
    return 'must not contain a web address or an e-mail address ("://", "www." or "@")';
  return null;
}

/**
 * Free text a client writes for staff to read (a request's note): no control characters, which
 * could drive the staff terminal (escape sequences, a carriage return over a line). Line feeds
 * are allowed when `multiline`; a carriage return, tab, ESC, BEL, DEL or C1 character never is.
 */
export function freeTextProblem(raw: string, { multiline = false }: { multiline?: boolean } = {}): string | null {
  const control = multiline ? /(?!\n)\p{Cc}/u : CONTROL;
  if (BIDI.test(raw)) return 'must not contain text-direction override characters';
  if (control.test(raw))
    return multiline
      ? 'must not contain control characters (line breaks are allowed)'
      : 'must not contain control characters';
  return null;
}

export function emailProblem(raw: string): string | null {
  const email = normalizeIdentifier(raw);
  if (email.length > 254 || (email.split('@')[0]?.length ?? 0) > 64) return 'is too long';
  if (!EMAIL.test(email)) return 'must be a valid e-mail address';
  return null;
}

export function usernameProblem(raw: string): string | null {
  const username = normalizeIdentifier(raw);
  if (!USERNAME.test(username)) {
    return 'must be 3–32 characters of a–z, 0–9, "_", "." or "-", starting and ending with a letter or digit';
  }
  if (RESERVED_USERNAMES.has(username)) return 'is reserved';
  return null;
}

export function passwordProblem(password: string, context: { email?: string; username?: string } = {}): string | null {
  const length = [...password].length;
  if (length < PASSWORD_MIN) return `must be at least ${PASSWORD_MIN} characters`;
  if (length > PASSWORD_MAX) return `must be at most ${PASSWORD_MAX} characters`;
  if (!/\p{L}/u.test(password) || !/\p{Nd}/u.test(password)) return 'must contain at least one letter and one number';
  const lower = password.toLowerCase();
  if (
    (context.email && lower === context.email.toLowerCase()) ||
    (context.username && lower === context.username.toLowerCase())
  ) {
    return 'must not be your e-mail address or username';
  }
  return null;
}

const text = (input: Record<string, unknown>, key: string): string | null =>
  typeof input[key] === 'string' ? (input[key] as string) : null;

/** Keep the fields that have a problem. */
function problems(checks: Record<string, string | null>): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [field, problem] of Object.entries(checks)) if (problem) out[field] = problem;
  return out;
}

/**
 * Every value rule of a registration, for the fields that are strings (a field of another type
 * is the schema's to report): pure, so it also runs when the schema refused the body.
 */
export function registrationProblems(input: Record<string, unknown>): Record<string, string> {
  const name = text(input, 'name');
  const email = text(input, 'email');
  const username = text(input, 'username');
  const password = text(input, 'password');
  return problems({
    name: name === null ? null : nameProblem(name),
    email: email === null ? null : emailProblem(email),
    username: username === null ? null : usernameProblem(username),
    password:
      password === null
        ? null
        : passwordProblem(password, {
            ...(email === null ? {} : { email: normalizeIdentifier(email) }),
            ...(username === null ? {} : { username: normalizeIdentifier(username) }),
          }),
  });
}

/** The value rules of a profile change that need no account: new name, new password. */
export function profileProblems(input: Record<string, unknown>): Record<string, string> {
  const name = text(input, 'name');
  const password = text(input, 'password');
  const current = input.current_password;
  return problems({
    name: name === null ? null : nameProblem(name),
    password: password === null ? null : passwordProblem(password),
    current_password:
      password !== null && (current === undefined || current === '') ? 'is required to change the password' : null,
  });
}

/** A one-time sign-in code as mailed: exactly six digits. */
export function loginCodeProblem(code: string): string | null {
  return /^\d{6}$/.test(code.trim()) ? null : 'must be the 6-digit code from the e-mail';
}

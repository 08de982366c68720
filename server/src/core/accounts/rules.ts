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

/** Lower-case and trim: e-mail addresses and usernames are compared case-insensitively. */
export function normalizeIdentifier(raw: string): string {
  return raw.trim().toLowerCase();
}

export function isEmailIdentifier(identifier: string): boolean {
  return identifier.includes('@');
}

export function nameProblem(raw: string): string | null {
  const name = raw.trim();
  const length = [...name].length;
  if (length < NAME_MIN || length > NAME_MAX) return `must be ${NAME_MIN}–${NAME_MAX} characters`;
  if (CONTROL.test(name)) return 'must not contain control characters';
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

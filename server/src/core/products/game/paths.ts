// Paths inside a game server (CONTRACT §6 files): relative to the server's root, `/`-separated
// and normalised here, once, before anything reaches the panel. A path that would leave the
// root (`..` past it, in plain or percent-encoded form), a NUL or a backslash is 400
// `path_traversal`; other control characters are 422. The panel (Wings) confines paths too;
// this is the platform's own line, so a refusal never depends on the node.

import { AppError } from '../../errors.ts';

export const MAX_PATH = 4096;
const MAX_NAME = 255;

export const traversal = (field: string) =>
  new AppError('path_traversal', {
    message: 'The path leaves the server root.',
    fields: { [field]: 'must stay inside the server root (no "..", backslashes or NUL bytes)' },
  });

/**
 * `input` as an absolute path from the server root (`/`, `/plugins/x.jar`). A leading `/` is the
 * root itself, as in the panel; `.` and empty segments are dropped, `..` goes up and may not
 * go past the root.
 */
export function normalisePath(input: string, field: string): string {
  if (input.includes('\0') || input.includes('\\')) throw traversal(field);
  // An encoded dot, slash, backslash or NUL is what a traversal looks like after one decode too
  // many somewhere; no real file name needs one.
  if (/%(2e|2f|5c|00)/i.test(input)) throw traversal(field);
  // biome-ignore lint/suspicious/noControlCharactersInRegex: refusing them is the point
  if (/[\u0001-\u001f\u007f]/.test(input)) throw AppError.fields({ [field]: 'must not contain control characters' });
  if (input.length > MAX_PATH) throw AppError.fields({ [field]: `must be at most ${MAX_PATH} characters` });
  const segments: string[] = [];
  for (const segment of input.split('/')) {
    if (segment === '' || segment === '.') continue;
    if (segment === '..') {
      if (segments.length === 0) throw traversal(field);
      segments.pop();
      continue;
    }
    if (segment.length > MAX_NAME) throw AppError.fields({ [field]: `has a name longer than ${MAX_NAME} characters` });
    segments.push(segment);
  }
  return `/${segments.join('/')}`;
}

/** A path that must name a file or folder, not the root itself. */
export function normaliseEntry(input: string, field: string): string {
  const path = normalisePath(input, field);
  if (path === '/') throw AppError.fields({ [field]: 'must name a file or folder, not the server root' });
  return path;
}

/** One name inside a folder (no `/`): the files of a delete or compress, a new folder's name. */
export function normaliseName(input: string, field: string): string {
  const path = normaliseEntry(input, field);
  if (path.lastIndexOf('/') !== 0) throw AppError.fields({ [field]: 'must be a name in the folder, without "/"' });
  return path.slice(1);
}

/** Split `/a/b/c.txt` into its folder (`/a/b`) and name (`c.txt`). */
export function splitPath(path: string): { directory: string; name: string } {
  const at = path.lastIndexOf('/');
  return { directory: at <= 0 ? '/' : path.slice(0, at), name: path.slice(at + 1) };
}

/** Parameters that hold paths or names inside the server, at any depth (a rename's from/to). */
const PATH_KEYS = new Set(['path', 'directory', 'root', 'name', 'from', 'to', 'files', 'file']);

/**
 * A NUL byte in any path parameter is `path_traversal` (400), whatever else is wrong with the
 * request: checked before the parameters' shape, which would call it a plain 422.
 */
export function refuseNulInPaths(params: Record<string, unknown>, depth = 0): void {
  if (depth > 4) return;
  for (const [key, value] of Object.entries(params)) {
    const values = Array.isArray(value) ? value : [value];
    for (const v of values) {
      if (typeof v === 'string' && PATH_KEYS.has(key) && v.includes('\0')) throw traversal(key);
      if (v !== null && typeof v === 'object') refuseNulInPaths(v as Record<string, unknown>, depth + 1);
    }
  }
}

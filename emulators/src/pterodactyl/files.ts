// A server's files as Wings keeps them: a tree below the server root, paths cleaned like Wings'
// SafePath (a path that climbs out of the root is refused: 404 "The requested resources was not
// found on the system.", as Wings answers), listing with directories first, write creating
// parents, copy naming "<name> copy<.ext>" then "<name> copy 1<.ext>", rename refusing an existing
// destination, compress to a real archive-<RFC3339 without colons>.tar.gz, decompress, chmod, and
// snapshots for backups.

import { NOT_FOUND_ON_SYSTEM, WingsError } from './http.ts';
import { atom, type FileEntry } from './state.ts';
import { packTarGz, type TarEntry, unpackTar } from './tar.ts';

export type Tree = Map<string, FileEntry>;

const IS_DIRECTORY = 'Cannot perform that action: file is a directory.';

/** The path relative to the root ('' = the root); throws Wings' 404 when it escapes the root. */
export function resolve(...parts: string[]): string {
  const out: string[] = [];
  for (const part of parts.join('/').split('/')) {
    if (part === '' || part === '.') continue;
    if (part === '..') {
      if (out.length === 0) throw new WingsError(404, NOT_FOUND_ON_SYSTEM);
      out.pop();
      continue;
    }
    out.push(part);
  }
  return out.join('/');
}

export function parentOf(path: string): string {
  const cut = path.lastIndexOf('/');
  return cut === -1 ? '' : path.slice(0, cut);
}

export function baseName(path: string): string {
  return path.slice(path.lastIndexOf('/') + 1);
}

function children(tree: Tree, dir: string): string[] {
  const prefix = dir === '' ? '' : `${dir}/`;
  const out: string[] = [];
  for (const path of tree.keys()) {
    if (path === '' || !path.startsWith(prefix)) continue;
    if (!path.slice(prefix.length).includes('/')) out.push(path);
  }
  return out;
}

/** Every path at or below `path`. */
function subtree(tree: Tree, path: string): string[] {
  if (path === '') return [...tree.keys()];
  return [...tree.keys()].filter((p) => p === path || p.startsWith(`${path}/`));
}

function mkdirs(tree: Tree, dir: string): void {
  if (dir === '') return;
  const existing = tree.get(dir);
  if (existing) {
    if (!existing.dir) throw new WingsError(400, 'Cannot perform that action: file is not a directory.');
    return;
  }
  mkdirs(tree, parentOf(dir));
  const now = atom();
  tree.set(dir, { dir: true, content: Buffer.alloc(0), mode: 0o755, created: now, modified: now });
}

function modeString(entry: FileEntry): string {
  const bits = ['r', 'w', 'x'];
  let out = entry.dir ? 'd' : '-';
  for (let i = 8; i >= 0; i--) out += entry.mode & (1 << i) ? bits[(8 - i) % 3] : '-';
  return out;
}

const MIME: Record<string, string> = {
  jar: 'application/jar',
  zip: 'application/zip',
  gz: 'application/gzip',
  json: 'application/json',
  png: 'image/png',
};

function mimeOf(path: string, entry: FileEntry): string {
  if (entry.dir) return 'inode/directory';
  const ext = path.slice(path.lastIndexOf('.') + 1).toLowerCase();
  const known = MIME[ext];
  if (known) return known;
  if (entry.content.length === 0) return 'inode/x-empty';
  return entry.content.subarray(0, 8000).includes(0) ? 'application/octet-stream' : 'text/plain; charset=utf-8';
}

/** The `file_object` attributes of one entry. */
export function fileObject(path: string, entry: FileEntry): Record<string, unknown> {
  return {
    name: baseName(path),
    mode: modeString(entry),
    mode_bits: (entry.mode & 0o777).toString(8),
    size: entry.dir ? 4096 : entry.content.length,
    is_file: !entry.dir,
    is_symlink: false,
    mimetype: mimeOf(path, entry),
    created_at: entry.created,
    modified_at: entry.modified,
  };
}

export function fileEnvelope(path: string, entry: FileEntry): Record<string, unknown> {
  return { object: 'file_object', attributes: fileObject(path, entry) };
}

/** A directory's entries, directories first, then by name. */
export function list(tree: Tree, directory: string): [string, FileEntry][] {
  const dir = resolve(directory);
  const entry = tree.get(dir);
  if (!entry) throw new WingsError(404, NOT_FOUND_ON_SYSTEM);
  if (!entry.dir) throw new WingsError(404, 'The requested directory does not exist.');
  return children(tree, dir)
    .map((p): [string, FileEntry] => [p, tree.get(p) as FileEntry])
    .sort(([a, ea], [b, eb]) => (ea.dir !== eb.dir ? (ea.dir ? -1 : 1) : baseName(a).localeCompare(baseName(b))));
}

export function read(tree: Tree, file: string): Buffer {
  const path = resolve(file);
  const entry = tree.get(path);
  if (!entry) throw new WingsError(404, NOT_FOUND_ON_SYSTEM);
  if (entry.dir) throw new WingsError(400, IS_DIRECTORY);
  return entry.content;
}

/** Write a file (creating its parent directories), keeping the mode of an existing one. */
export function write(tree: Tree, file: string, content: Buffer): string {
  const path = resolve(file);
  if (path === '') throw new WingsError(400, IS_DIRECTORY);
  const existing = tree.get(path);
  if (existing?.dir) throw new WingsError(400, IS_DIRECTORY);
  mkdirs(tree, parentOf(path));
  const now = atom();
  tree.set(path, {
    dir: false,
    content,
    mode: existing?.mode ?? 0o644,
    created: existing?.created ?? now,
    modified: now,
  });
  return path;
}

export function createFolder(tree: Tree, root: string, name: string): void {
  const path = resolve(root, name);
  if (tree.get(path) && !tree.get(path)?.dir)
    throw new WingsError(400, 'Cannot create directory: a file with that name already exists.');
  mkdirs(tree, path);
}

/** Delete files and directories (recursively); missing ones are ignored, as Wings does. */
export function remove(tree: Tree, root: string, names: string[]): void {
  const paths = names.map((n) => resolve(root, n));
  if (paths.includes('')) throw new WingsError(400, 'Cannot delete root server directory.');
  for (const path of paths) for (const p of subtree(tree, path)) tree.delete(p);
}

/** Rename/move; a missing source is skipped, an existing destination refused. */
export function rename(tree: Tree, root: string, moves: { from: string; to: string }[]): void {
  for (const { from, to } of moves) {
    const src = resolve(root, from);
    const dst = resolve(root, to);
    if (!tree.has(src) || src === '') continue;
    if (tree.has(dst)) throw new WingsError(400, 'Cannot move or rename file, destination already exists.');
    if (dst === src || dst.startsWith(`${src}/`)) throw new WingsError(400, 'Cannot move a directory into itself.');
    mkdirs(tree, parentOf(dst));
    for (const p of subtree(tree, src)) {
      const entry = tree.get(p) as FileEntry;
      tree.delete(p);
      tree.set(dst + p.slice(src.length), { ...entry, modified: atom() });
    }
  }
}

/** Copy a file next to itself: "<name> copy<.ext>", then "<name> copy 1<.ext>"… Returns the new path. */
export function copy(tree: Tree, location: string): string {
  const path = resolve(location);
  const entry = tree.get(path);
  if (!entry || entry.dir) throw new WingsError(404, NOT_FOUND_ON_SYSTEM);
  const base = baseName(path);
  const dot = base.lastIndexOf('.');
  let ext = dot > 0 ? base.slice(dot) : '';
  let name = dot > 0 ? base.slice(0, dot) : base;
  if (name.endsWith('.tar')) {
    ext = `.tar${ext}`;
    name = name.slice(0, -4);
  }
  const dir = parentOf(path);
  let target = '';
  for (let i = 0; i < 51; i++) {
    const suffix = i === 0 ? ' copy' : ` copy ${i}`;
    target = resolve(dir, `${name}${suffix}${ext}`);
    if (!tree.has(target)) break;
    if (i === 50) target = resolve(dir, `${name}copy.${new Date().toISOString()}${ext}`);
  }
  const now = atom();
  tree.set(target, { ...entry, content: Buffer.from(entry.content), created: now, modified: now });
  return target;
}

export function chmod(tree: Tree, root: string, files: { file: string; mode: string | number }[]): void {
  for (const { file, mode } of files) {
    const path = resolve(root, file);
    const entry = tree.get(path);
    if (!entry) throw new WingsError(404, NOT_FOUND_ON_SYSTEM);
    const bits = Number.parseInt(String(mode), 8);
    if (!Number.isFinite(bits) || bits < 0 || bits > 0o7777) throw new WingsError(400, 'Invalid file mode.');
    entry.mode = bits;
  }
}

/** Tar entries for these paths (each with everything below it), relative to `base`. */
function entriesOf(tree: Tree, base: string, paths: string[], ignored: (p: string) => boolean): TarEntry[] {
  const seen = new Set<string>();
  const out: TarEntry[] = [];
  for (const path of paths) {
    for (const p of subtree(tree, path).sort()) {
      if (p === '' || seen.has(p) || ignored(p)) continue;
      seen.add(p);
      const entry = tree.get(p) as FileEntry;
      const rel = base === '' ? p : p.slice(base.length + 1);
      out.push({
        path: rel,
        dir: entry.dir,
        mode: entry.mode,
        mtime: Date.parse(entry.modified),
        content: entry.content,
      });
    }
  }
  return out;
}

/** Wings' archive name: `archive-` + RFC 3339 time without colons (UTC: …T120430Z) + `.tar.gz`. */
export function archiveName(now = new Date()): string {
  const stamp = now
    .toISOString()
    .replace(/\.\d{3}Z$/, 'Z')
    .replace(/:/g, '');
  return `archive-${stamp}.tar.gz`;
}

/** Compress files of `root` into an archive in `root`; returns its path. */
export function compress(tree: Tree, root: string, files: string[]): string {
  const dir = resolve(root);
  const dirEntry = tree.get(dir);
  if (!dirEntry?.dir) throw new WingsError(404, NOT_FOUND_ON_SYSTEM);
  const paths = files.map((f) => resolve(dir, f));
  for (const p of paths) if (!tree.has(p)) throw new WingsError(404, NOT_FOUND_ON_SYSTEM);
  const archive = packTarGz(entriesOf(tree, dir, paths, () => false));
  let name = archiveName();
  for (let i = 1; tree.has(resolve(dir, name)); i++) name = archiveName(new Date(Date.now() + i * 1000));
  return write(tree, resolve(dir, name), archive);
}

/** Extract an archive into `root` (existing files are overwritten). */
export function decompress(tree: Tree, root: string, file: string): void {
  const dir = resolve(root);
  const content = read(tree, resolve(dir, file));
  let entries: TarEntry[];
  try {
    entries = unpackTar(content);
  } catch {
    throw new WingsError(400, 'The archive provided is in a format Wings does not understand.');
  }
  for (const e of entries) {
    const path = resolve(dir, e.path);
    if (e.dir) mkdirs(tree, path);
    else {
      write(tree, path, e.content);
      const entry = tree.get(path);
      if (entry) entry.mode = e.mode & 0o7777;
    }
  }
}

/** A glob line from a backup's ignore list, as a test on relative paths. */
function ignoreTest(patterns: string[]): (p: string) => boolean {
  const tests = patterns
    .map((line) => line.trim())
    .filter((line) => line !== '' && !line.startsWith('#'))
    .map((line) => {
      const clean = line.replace(/^\/+/, '').replace(/\/+$/, '');
      const re = new RegExp(
        `^${clean
          .split('')
          .map((c) => (c === '*' ? '[^/]*' : c === '?' ? '[^/]' : c.replace(/[.+^${}()|[\]\\]/g, '\\$&')))
          .join('')}(/.*)?$`,
      );
      return (p: string) => re.test(p) || re.test(baseName(p));
    });
  return (p) => tests.some((t) => t(p));
}

/** The whole tree as a .tar.gz (a backup), leaving out ignored paths. */
export function snapshot(tree: Tree, ignored: string[]): Buffer {
  return packTarGz(entriesOf(tree, '', [''], ignoreTest(ignored)));
}

/** Restore a backup: with `truncate`, everything else is deleted first. */
export function restore(tree: Tree, archive: Buffer, truncate: boolean): void {
  if (truncate) for (const p of [...tree.keys()]) if (p !== '') tree.delete(p);
  for (const e of unpackTar(archive)) {
    const path = resolve(e.path);
    if (e.dir) mkdirs(tree, path);
    else {
      write(tree, path, e.content);
      const entry = tree.get(path);
      if (entry) entry.mode = e.mode & 0o7777;
    }
  }
}

/** Total bytes stored (disk usage). */
export function diskBytes(tree: Tree): number {
  let total = 0;
  for (const e of tree.values()) total += e.dir ? 4096 : e.content.length;
  return total;
}

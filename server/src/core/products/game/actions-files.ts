// Game actions, spec 4.9 Files (CONTRACT §6): every path normalised by ./paths.ts before the
// panel sees it; text read and written up to 1 MiB (415 binary_file, 413 file_too_large);
// uploads up to 100 MiB streamed (through a temporary file, never held in memory); signed URLs
// for uploads and downloads straight to the node, valid minutes.

import { createReadStream } from 'node:fs';
import { Type } from 'typebox';
import { AppError } from '../../errors.ts';
import { isoWithOffset } from '../../time.ts';
import { answer, gameAction, PathParam } from './action.ts';
import { normaliseEntry, normaliseName, normalisePath, splitPath } from './paths.ts';
import { ask } from './server.ts';
import { fileView } from './views.ts';

export const MAX_TEXT_BYTES = 1024 * 1024;
export const MAX_UPLOAD_BYTES = 100 * 1024 * 1024;
/** How long the panel's signed URLs live (Wings: 15 minutes). */
const SIGNED_URL_SECONDS = 15 * 60;

const Names = Type.Array(Type.String({ minLength: 1, maxLength: 255 }), {
  minItems: 1,
  maxItems: 100,
  description: 'names inside `root`',
});

/** Whether `bytes` is text we can edit: UTF-8 without NUL bytes. */
export function isText(bytes: Buffer): boolean {
  if (bytes.includes(0)) return false;
  try {
    new TextDecoder('utf-8', { fatal: true }).decode(bytes);
    return true;
  } catch {
    return false;
  }
}

const signed = (url: string, now: Date) => ({
  url,
  expires_at: isoWithOffset(new Date(now.getTime() + SIGNED_URL_SECONDS * 1000)),
});

export const fileActions = [
  gameAction({
    name: 'files',
    group: 'files',
    method: 'read',
    description: 'The files and folders of a folder (`directory`, default the server root)',
    params: { directory: Type.Optional(PathParam('a folder, from the server root')) },
    handler: async (ctx, p) => {
      const directory = normalisePath(String(p.directory ?? '/'), 'directory');
      const files = await ask(ctx, (panel, ref) => panel.listFiles(ref, directory));
      return answer('Files loaded.', { directory, files: files.map((f) => fileView(directory, f)) });
    },
  }),
  gameAction({
    name: 'file_read',
    group: 'files',
    method: 'read',
    description: 'The text of a file (`path`), up to 1 MiB; binary files are 415, larger ones 413',
    params: { path: PathParam('the file, from the server root') },
    example: () => ({ path: '/server.properties' }),
    handler: async (ctx, p) => {
      const path = normaliseEntry(String(p.path), 'path');
      const bytes = await ask(ctx, (panel, ref) => panel.readFile(ref, path, MAX_TEXT_BYTES));
      if (bytes.length > MAX_TEXT_BYTES) {
        throw new AppError('file_too_large', {
          message: 'The file is larger than 1 MiB; download it instead.',
          details: { limit_bytes: MAX_TEXT_BYTES },
        });
      }
      if (!isText(bytes)) throw new AppError('binary_file', { message: 'This file is not text; download it instead.' });
      return answer('File loaded.', { path, size: bytes.length, content: bytes.toString('utf8') });
    },
  }),
  gameAction({
    name: 'file_write',
    group: 'files',
    method: 'mutate',
    description: 'Write a text file (`path`, `content` up to 1 MiB), creating it and its folders when missing',
    params: {
      path: PathParam('the file, from the server root'),
      content: Type.String({ maxLength: MAX_TEXT_BYTES, description: 'the whole new text' }),
    },
    example: () => ({ path: '/notes.txt', content: 'hello\n' }),
    handler: async (ctx, p) => {
      const path = normaliseEntry(String(p.path), 'path');
      const content = String(p.content);
      if (Buffer.byteLength(content) > MAX_TEXT_BYTES || content.includes('\0')) {
        throw AppError.fields({ content: 'must be text of at most 1 MiB (UTF-8), without NUL bytes' });
      }
      await ask(ctx, (panel, ref) => panel.writeFile(ref, path, content));
      return answer('File saved.', { path, size: Buffer.byteLength(content) });
    },
  }),
  gameAction({
    name: 'file_upload',
    group: 'files',
    method: 'mutate',
    description:
      'Upload one file (multipart/form-data: `file`, and `directory` before it, default the root), up to 100 MiB, streamed',
    params: { directory: Type.Optional(PathParam('the folder to put it in')) },
    upload: { field: 'file', maxBytes: MAX_UPLOAD_BYTES },
    handler: async (ctx, p) => {
      const directory = normalisePath(String(p.directory ?? '/'), 'directory');
      const upload = ctx.upload;
      if (!upload) throw AppError.fields({ file: 'is required (a multipart file part)' });
      const name = normaliseName(upload.filename, 'file');
      await ask(ctx, (panel, ref) =>
        panel.uploadFile(ref, directory, name, createReadStream(upload.path), upload.bytes),
      );
      const path = directory === '/' ? `/${name}` : `${directory}/${name}`;
      return answer('File uploaded.', { path, size: upload.bytes }, 201);
    },
  }),
  gameAction({
    name: 'file_upload_url',
    noStore: true,
    group: 'files',
    method: 'read',
    description:
      "A signed URL on the server's node for uploading files directly (multipart field `files`), valid 15 minutes",
    params: {},
    handler: async (ctx) => {
      const url = await ask(ctx, (panel, ref) => panel.uploadUrl(ref));
      return answer('Upload URL issued.', { upload: signed(url, ctx.clock()) });
    },
  }),
  gameAction({
    name: 'file_download',
    noStore: true,
    group: 'files',
    method: 'read',
    description: 'A signed URL to download a file (`path`), valid 15 minutes',
    params: { path: PathParam('the file, from the server root') },
    example: () => ({ path: '/server.properties' }),
    handler: async (ctx, p) => {
      const path = normaliseEntry(String(p.path), 'path');
      const url = await ask(ctx, (panel, ref) => panel.downloadUrl(ref, path));
      return answer('Download URL issued.', { download: signed(url, ctx.clock()) });
    },
  }),
  gameAction({
    name: 'files_delete',
    group: 'files',
    method: 'mutate',
    description: 'Delete files and folders (`files`, names inside `root`)',
    params: { root: Type.Optional(PathParam('the folder they are in')), files: Names },
    example: () => ({ files: ['no-such-file.txt'] }),
    handler: async (ctx, p) => {
      const root = normalisePath(String(p.root ?? '/'), 'root');
      const names = (p.files as string[]).map((n, i) => normaliseName(n, `files.${i}`));
      await ask(ctx, (panel, ref) => panel.deleteFiles(ref, root, names));
      return answer(`${names.length} deleted.`, { root, files: names });
    },
  }),
  gameAction({
    name: 'files_rename',
    group: 'files',
    method: 'mutate',
    description: 'Rename or move files (`files`: [{from, to}], paths relative to `root`)',
    params: {
      root: Type.Optional(PathParam('the folder the paths start from')),
      files: Type.Array(
        Type.Object(
          { from: Type.String({ minLength: 1, maxLength: 4096 }), to: Type.String({ minLength: 1, maxLength: 4096 }) },
          { additionalProperties: false },
        ),
        { minItems: 1, maxItems: 100 },
      ),
    },
    handler: async (ctx, p) => {
      const root = normalisePath(String(p.root ?? '/'), 'root');
      // Each side resolved against the root must stay inside the server (`../x` from a folder moves
      // the file up, which is fine); sent to the panel from the server root, so no `..` remains.
      const moves = (p.files as { from: string; to: string }[]).map((m, i) => ({
        from: normaliseEntry(`${root}/${m.from}`, `files.${i}.from`).slice(1),
        to: normaliseEntry(`${root}/${m.to}`, `files.${i}.to`).slice(1),
      }));
      await ask(ctx, (panel, ref) => panel.renameFiles(ref, '/', moves));
      return answer('Renamed.', { files: moves.map((m) => ({ from: `/${m.from}`, to: `/${m.to}` })) });
    },
  }),
  gameAction({
    name: 'file_copy',
    group: 'files',
    method: 'mutate',
    description: 'Copy a file next to itself (`path`): "name copy.ext", then "name copy 1.ext", …',
    params: { path: PathParam('the file to copy') },
    handler: async (ctx, p) => {
      const path = normaliseEntry(String(p.path), 'path');
      await ask(ctx, (panel, ref) => panel.copyFile(ref, path));
      return answer('Copied.', { path });
    },
  }),
  gameAction({
    name: 'files_compress',
    group: 'files',
    method: 'mutate',
    description: 'Pack files and folders (`files`, names inside `root`) into a .tar.gz archive in `root`',
    params: { root: Type.Optional(PathParam('the folder they are in')), files: Names },
    handler: async (ctx, p) => {
      const root = normalisePath(String(p.root ?? '/'), 'root');
      const names = (p.files as string[]).map((n, i) => normaliseName(n, `files.${i}`));
      const archive = await ask(ctx, (panel, ref) => panel.compressFiles(ref, root, names));
      return answer('Archive created.', { archive: fileView(root, archive) });
    },
  }),
  gameAction({
    name: 'file_decompress',
    group: 'files',
    method: 'mutate',
    description: 'Unpack an archive (`path`) into its folder',
    params: { path: PathParam('the archive') },
    handler: async (ctx, p) => {
      const path = normaliseEntry(String(p.path), 'path');
      const { directory, name } = splitPath(path);
      await ask(ctx, (panel, ref) => panel.decompressFile(ref, directory, name));
      return answer('Unpacked.', { path, into: directory });
    },
  }),
  gameAction({
    name: 'folder_create',
    group: 'files',
    method: 'mutate',
    description: 'Create a folder (`name`) in `root`',
    params: {
      root: Type.Optional(PathParam('the folder to create it in')),
      name: Type.String({ minLength: 1, maxLength: 255 }),
    },
    example: () => ({ name: 'world-backups' }),
    handler: async (ctx, p) => {
      const root = normalisePath(String(p.root ?? '/'), 'root');
      const name = normaliseName(String(p.name), 'name');
      await ask(ctx, (panel, ref) => panel.createFolder(ref, root, name));
      return answer('Folder created.', { path: root === '/' ? `/${name}` : `${root}/${name}` }, 201);
    },
  }),
];

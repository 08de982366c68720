// The Client API's file routes (upstreams.md §1.6): list, contents (raw text/plain, 4 MiB
// editor limit), write (raw body, query `file`), signed upload/download URLs on Wings, delete,
// rename, copy, compress, decompress, create-folder and chmod. Wings errors come back as the
// panel's DaemonConnectionException with Wings' status.

import { nodeToken } from './client.ts';
import type { Ctx, Req } from './context.ts';
import {
  chmod,
  compress,
  copy,
  createFolder,
  decompress,
  fileEnvelope,
  list as listDir,
  read,
  remove,
  rename,
  write,
} from './files.ts';
import { NO_CONTENT, ok, PteroError } from './http.ts';
import { log, need, route, type ServerRoute } from './routes.ts';
import type { FileEntry, Server } from './state.ts';
import { item, list } from './transform.ts';
import { validate } from './validate.ts';

/** PTERODACTYL_FILES_MAX_EDIT_SIZE default. */
export const MAX_EDIT_SIZE = 4 * 1024 * 1024;

/** Query and body input together, as Laravel's request bag has them. */
function input(req: Req): Record<string, unknown> {
  return { ...Object.fromEntries(req.query), ...req.body };
}

function strings(value: unknown): string[] {
  return Array.isArray(value) ? value.map((v) => String(v)) : [];
}

function treeOf(ctx: Ctx, server: Server) {
  return ctx.state.treeOf(server.id);
}

export function signedUrl(url: string): { object: string; attributes: { url: string } } {
  return item('signed_url', { url }) as { object: string; attributes: { url: string } };
}

export const FILE_ROUTES: ServerRoute[] = [
  route(
    'GET',
    /^\/files\/list$/,
    (ctx, req, server) => {
      need(ctx, req, server, 'file.read');
      const directory = req.query.get('directory') ?? '/';
      return ok(list(listDir(treeOf(ctx, server), directory).map(([p, e]) => fileEnvelope(p, e))));
    },
    true,
  ),
  route(
    'GET',
    /^\/files\/contents$/,
    (ctx, req, server) => {
      need(ctx, req, server, 'file.read-content');
      validate(input(req), { file: ['required', 'string'] });
      const file = String(req.query.get('file'));
      const content = read(treeOf(ctx, server), file);
      if (content.length > MAX_EDIT_SIZE) {
        throw new PteroError(
          400,
          'FileSizeTooLargeException',
          'The file you are attempting to open is too large to view in the file editor.',
        );
      }
      log(ctx, req, server, 'server:file.read', { file });
      return { status: 200, raw: content, type: 'text/plain' };
    },
    true,
  ),
  route('GET', /^\/files\/download$/, (ctx, req, server) => {
    need(ctx, req, server, 'file.read-content');
    validate(input(req), { file: ['required', 'string'] });
    const file = decodeURIComponent(String(req.query.get('file')));
    const token = nodeToken(ctx, req, server, 15 * 60, { file_path: file, server_uuid: server.uuid });
    log(ctx, req, server, 'server:file.download', { file });
    return ok(signedUrl(`${ctx.wingsUrl}/download/file?token=${token}`));
  }),
  route('GET', /^\/files\/upload$/, (ctx, req, server) => {
    need(ctx, req, server, 'file.create');
    const token = nodeToken(ctx, req, server, 15 * 60, { server_uuid: server.uuid });
    return ok(signedUrl(`${ctx.wingsUrl}/upload/file?token=${token}`));
  }),
  route(
    'POST',
    /^\/files\/write$/,
    (ctx, req, server) => {
      need(ctx, req, server, 'file.create');
      validate(input(req), { file: ['required', 'string'] });
      const file = String(req.query.get('file') ?? req.body.file);
      write(treeOf(ctx, server), file, Buffer.from(req.raw));
      log(ctx, req, server, 'server:file.write', { file });
      ctx.state.save();
      return NO_CONTENT;
    },
    true,
  ),
  route(
    'POST',
    /^\/files\/delete$/,
    (ctx, req, server) => {
      need(ctx, req, server, 'file.delete');
      validate(req.body, { root: ['required', 'nullable', 'string'], files: ['required', 'array'] });
      const root = String(req.body.root ?? '/');
      const files = strings(req.body.files);
      remove(treeOf(ctx, server), root, files);
      log(ctx, req, server, 'server:file.delete', { directory: root, files });
      ctx.state.save();
      return NO_CONTENT;
    },
    true,
  ),
  route(
    'PUT',
    /^\/files\/rename$/,
    (ctx, req, server) => {
      need(ctx, req, server, 'file.update');
      validate(req.body, { root: ['required', 'nullable', 'string'], files: ['required', 'array'] });
      const moves = (Array.isArray(req.body.files) ? req.body.files : []).map((f, i) => {
        const o = (typeof f === 'object' && f !== null && !Array.isArray(f) ? f : {}) as Record<string, unknown>;
        validate(
          { files: { [i]: o } },
          { [`files.${i}.to`]: ['required', 'string'], [`files.${i}.from`]: ['required', 'string'] },
        );
        return { from: String(o.from), to: String(o.to) };
      });
      const root = String(req.body.root ?? '/');
      rename(treeOf(ctx, server), root, moves);
      log(ctx, req, server, 'server:file.rename', { directory: root, files: moves });
      ctx.state.save();
      return NO_CONTENT;
    },
    true,
  ),
  route(
    'POST',
    /^\/files\/copy$/,
    (ctx, req, server) => {
      need(ctx, req, server, 'file.create');
      validate(req.body, { location: ['required', 'string'] });
      const location = String(req.body.location);
      copy(treeOf(ctx, server), location);
      log(ctx, req, server, 'server:file.copy', { file: location });
      ctx.state.save();
      return NO_CONTENT;
    },
    true,
  ),
  route(
    'POST',
    /^\/files\/compress$/,
    (ctx, req, server) => {
      need(ctx, req, server, 'file.archive');
      validate(req.body, { root: ['sometimes', 'nullable', 'string'], files: ['required', 'array'] });
      const root = String(req.body.root ?? '/');
      const files = strings(req.body.files);
      const tree = treeOf(ctx, server);
      const path = compress(tree, root, files);
      log(ctx, req, server, 'server:file.compress', { directory: root, files });
      ctx.state.save();
      return ok(fileEnvelope(path, tree.get(path) as FileEntry));
    },
    true,
  ),
  route(
    'POST',
    /^\/files\/decompress$/,
    (ctx, req, server) => {
      need(ctx, req, server, 'file.archive');
      validate(req.body, { root: ['sometimes', 'nullable', 'string'], file: ['required', 'string'] });
      const root = String(req.body.root ?? '/');
      const file = String(req.body.file);
      decompress(treeOf(ctx, server), root, file);
      log(ctx, req, server, 'server:file.decompress', { directory: root, files: file });
      ctx.state.save();
      return NO_CONTENT;
    },
    true,
  ),
  route(
    'POST',
    /^\/files\/create-folder$/,
    (ctx, req, server) => {
      need(ctx, req, server, 'file.create');
      validate(req.body, { root: ['sometimes', 'nullable', 'string'], name: ['required', 'string'] });
      const root = String(req.body.root ?? '/');
      const name = String(req.body.name);
      createFolder(treeOf(ctx, server), root, name);
      log(ctx, req, server, 'server:file.create-directory', { directory: root, name });
      ctx.state.save();
      return NO_CONTENT;
    },
    true,
  ),
  route(
    'POST',
    /^\/files\/chmod$/,
    (ctx, req, server) => {
      need(ctx, req, server, 'file.update');
      validate(req.body, { root: ['required', 'nullable', 'string'], files: ['required', 'array'] });
      const files = (Array.isArray(req.body.files) ? req.body.files : []).map((f, i) => {
        const o = (typeof f === 'object' && f !== null && !Array.isArray(f) ? f : {}) as Record<string, unknown>;
        validate(
          { files: { [i]: o } },
          { [`files.${i}.file`]: ['required', 'string'], [`files.${i}.mode`]: ['required', 'numeric'] },
        );
        return { file: String(o.file), mode: String(o.mode) };
      });
      const root = String(req.body.root ?? '/');
      chmod(treeOf(ctx, server), root, files);
      log(ctx, req, server, 'server:file.chmod', { directory: root, files });
      ctx.state.save();
      return NO_CONTENT;
    },
    true,
  ),
];

// The Wings node's own HTTP listener (separate port, like a real node): the signed upload
// endpoint `POST /upload/file?token=&directory=` (multipart field `files`, parsed as it streams
// in), `GET /download/file?token=` and `GET /download/backup?token=` (single-use JWTs signed by
// the panel), and the console WebSocket upgrade. `wingsDown` resets every connection.

import { randomUUID } from 'node:crypto';
import { createServer, type Server as HttpServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import { type ConsoleEndpoint, consoleEndpoint } from './console.ts';
import type { Ctx } from './context.ts';
import { baseName, read, resolve, write } from './files.ts';
import { WingsError } from './http.ts';
import { type Claims, verifyJwt } from './jwt.ts';
import { boundaryOf, MultipartParser } from './multipart.ts';
import type { Server } from './state.ts';

/** Wings' default `api.upload_limit`, in MiB. */
export const UPLOAD_LIMIT_MB = 100;

function json(res: ServerResponse, status: number, body: unknown): void {
  const text = JSON.stringify(body);
  res.writeHead(status, {
    'content-type': 'application/json; charset=utf-8',
    'content-length': Buffer.byteLength(text),
    'x-request-id': randomUUID(),
  });
  res.end(text);
}

function wingsError(res: ServerResponse, error: WingsError): void {
  json(res, error.status, { error: error.message, request_id: randomUUID() });
}

const UNEXPECTED = 'An unexpected error was encountered while handling this request.';
const NOT_ON_SERVER = 'The requested resource was not found on this server.';

/** Verify a signed-URL token and take it (single use, keyed on `unique_id`). */
function takeToken(ctx: Ctx, token: string): { claims: Claims; server: Server } | WingsError {
  let claims: Claims | null = null;
  for (const node of ctx.state.nodes.values()) {
    const check = verifyJwt(node.daemonToken, token);
    if (check.ok) {
      claims = check.claims;
      break;
    }
  }
  if (!claims) return new WingsError(500, UNEXPECTED);
  const server = [...ctx.state.servers.values()].find((s) => s.uuid === claims.server_uuid);
  if (!server || ctx.usedJti.has(claims.unique_id)) return new WingsError(404, NOT_ON_SERVER);
  ctx.usedJti.add(claims.unique_id);
  return { claims, server };
}

async function upload(ctx: Ctx, req: IncomingMessage, res: ServerResponse, url: URL): Promise<void> {
  const taken = takeToken(ctx, url.searchParams.get('token') ?? '');
  if (taken instanceof WingsError) {
    req.resume();
    return wingsError(res, taken);
  }
  const boundary = boundaryOf(req.headers['content-type']);
  if (!boundary) {
    req.resume();
    return json(res, 400, { error: 'Failed to get multipart form data from request.' });
  }
  const limit = UPLOAD_LIMIT_MB * 1024 * 1024;
  const files: { name: string; chunks: Buffer[]; size: number }[] = [];
  const parser = new MultipartParser(boundary, (headers) => {
    if (headers.name !== 'files' || headers.filename === null) return { data: () => {}, end: () => {} };
    const file = { name: baseName(headers.filename.replace(/\\/g, '/')), chunks: [] as Buffer[], size: 0 };
    files.push(file);
    return {
      data(chunk) {
        file.size += chunk.length;
        // Past the limit the upload is refused anyway: count, do not keep.
        if (file.size <= limit) file.chunks.push(chunk);
      },
      end() {},
    };
  });
  let broken = false;
  let aborted = false;
  await new Promise<void>((done) => {
    req.on('data', (chunk: Buffer) => {
      if (broken) return;
      try {
        parser.write(chunk);
      } catch {
        broken = true;
      }
    });
    req.on('end', () => done());
    // A client that gives up mid-upload: nothing is written, nobody to answer.
    req.on('error', () => {
      aborted = true;
      done();
    });
  });
  if (aborted || req.socket.destroyed) return;
  if (broken || !parser.end()) return json(res, 400, { error: 'Failed to get multipart form data from request.' });
  if (files.length === 0) return json(res, 400, { error: 'No files were found on the request body.' });
  for (const f of files) {
    if (f.size > limit) {
      return json(res, 400, {
        error: `File ${f.name} is larger than the maximum file upload size of ${UPLOAD_LIMIT_MB} MB.`,
      });
    }
  }
  const directory = url.searchParams.get('directory') ?? '';
  const tree = ctx.state.treeOf(taken.server.id);
  try {
    for (const f of files) {
      write(tree, resolve(directory, f.name), Buffer.concat(f.chunks));
      ctx.state.addActivity({
        serverId: taken.server.id,
        batch: null,
        event: 'server:file.uploaded',
        isApi: false,
        ip: req.socket.remoteAddress?.replace(/^::ffff:/, '') ?? '127.0.0.1',
        description: null,
        properties: { file: f.name, directory: `/${resolve(directory)}` },
        actorId: [...ctx.state.users.values()].find((u) => u.uuid === taken.claims.user_uuid)?.id ?? null,
      });
    }
  } catch (error) {
    if (error instanceof WingsError) return wingsError(res, error);
    throw error;
  }
  ctx.state.save();
  res.writeHead(200, { 'content-length': 0 });
  res.end();
}

function attachment(res: ServerResponse, name: string, content: Buffer): void {
  res.writeHead(200, {
    'content-length': content.length,
    'content-disposition': `attachment; filename=${JSON.stringify(name)}`,
    'content-type': 'application/octet-stream',
  });
  res.end(content);
}

function downloadFile(ctx: Ctx, res: ServerResponse, url: URL): void {
  const taken = takeToken(ctx, url.searchParams.get('token') ?? '');
  if (taken instanceof WingsError) {
    wingsError(res, taken);
    return;
  }
  const tree = ctx.state.treeOf(taken.server.id);
  try {
    const path = resolve(taken.claims.file_path ?? '');
    if (tree.get(path)?.dir) json(res, 404, { error: NOT_ON_SERVER });
    else attachment(res, baseName(path), read(tree, path));
  } catch (error) {
    if (!(error instanceof WingsError)) throw error;
    wingsError(res, error);
  }
}

function downloadBackup(ctx: Ctx, res: ServerResponse, url: URL): void {
  const taken = takeToken(ctx, url.searchParams.get('token') ?? '');
  if (taken instanceof WingsError) {
    wingsError(res, taken);
    return;
  }
  const backup = ctx.state.backups.get(taken.claims.backup_uuid ?? '');
  if (!backup || backup.serverId !== taken.server.id || backup.deletedAt !== null || !backup.archive) {
    json(res, 404, { error: 'The requested backup was not found on this server.' });
    return;
  }
  attachment(res, `${backup.uuid}.tar.gz`, backup.archive);
}

export interface Wings {
  http: HttpServer;
  console: ConsoleEndpoint;
  sockets: Set<Socket>;
}

export function createWings(ctx: Ctx, statsIntervalMs: number, count: (key: string) => void): Wings {
  const sockets = new Set<Socket>();
  const endpoint = consoleEndpoint(ctx, statsIntervalMs);
  const http = createServer((req, res) => {
    if (ctx.faults.wingsDown) return void req.socket.resetAndDestroy();
    const url = new URL(req.url ?? '/', 'http://wings');
    const method = req.method ?? 'GET';
    count(`${method} ${url.pathname}`);
    const work = async () => {
      if (ctx.faults.latencyMs > 0) await new Promise((r) => setTimeout(r, ctx.faults.latencyMs));
      if (method === 'POST' && url.pathname === '/upload/file') return upload(ctx, req, res, url);
      req.resume();
      if (method === 'GET' && url.pathname === '/download/file') return downloadFile(ctx, res, url);
      if (method === 'GET' && url.pathname === '/download/backup') return downloadBackup(ctx, res, url);
      res.writeHead(404, { 'content-type': 'text/plain' });
      res.end('404 page not found');
    };
    work().catch((error: unknown) => {
      console.error('pterodactyl emulator (wings): request failed', error);
      if (!res.headersSent) json(res, 500, { error: UNEXPECTED });
    });
  });
  http.on('upgrade', (req: IncomingMessage, socket: Socket, head: Buffer) => {
    if (ctx.faults.wingsDown) return void socket.resetAndDestroy();
    const path = new URL(req.url ?? '/', 'http://wings').pathname.replace(/\/api\/servers\/[^/]+\//, '/api/servers/:/');
    count(`GET ${path}`);
    endpoint.upgrade(req, socket, head);
  });
  http.on('connection', (socket: Socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });
  return { http, console: endpoint, sockets };
}

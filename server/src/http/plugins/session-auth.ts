// Cookie-session auth for a session surface (spec §5), as a plugin any prefix registers in its
// own scope (the client API at /api/v1/client, search at /api/v1/search).
// onRequest: resolve the cookie (SVCSESSID) to a session (or an anonymous id) and refuse
// anonymous callers of `client` routes before any body is read. preValidation (the body is
// parsed, not yet validated): check CSRF on mutations (and on public ones sent as a form rather
// than JSON), so a forged request is refused before anything about its body is looked at.
// Multipart bodies are parsed first (files only on routes marked `uploads`, streamed to a
// temporary file), so a form's `csrf_token` field counts like a JSON one. onRoute: each route's
// OpenAPI `security` says what it needs (cookie; cookie and CSRF header; or nothing).

import { rm } from 'node:fs/promises';
import cookie from '@fastify/cookie';
import multipart from '@fastify/multipart';
import type { FastifyInstance, FastifyPluginAsync, FastifyRequest } from 'fastify';
import { csrfMatches, isSessionId, type LoadedSession, loadSession, SESSION_COOKIE } from '../../core/auth/sessions.ts';
import { MAX_UPLOAD_BYTES, type ReceivedUpload, receiveUpload, uploadDirs } from '../../core/deposits/uploads.ts';
import { type ReceivedFile, receiveFile } from '../uploads.ts';

/** The largest file any route takes (a game server's file_upload, CONTRACT §6); each route has its own cap. */
export const MAX_ANY_FILE_BYTES = 100 * 1024 * 1024;

import type { Deps } from '../../core/deps.ts';
import { AppError } from '../../core/errors.ts';

export interface ClientSession {
  /** The cookie's session id (possibly anonymous: no row), or null without a usable cookie. */
  id: string | null;
  /** The signed-in session, or null when anonymous. */
  loaded: LoadedSession | null;
}

const SAFE_METHODS = new Set(['GET', 'HEAD', 'OPTIONS']);

function presentedCsrf(body: unknown, header: string | string[] | undefined): string | undefined {
  if (typeof header === 'string' && header !== '') return header;
  if (body !== null && typeof body === 'object' && 'csrf_token' in body) {
    const value = (body as { csrf_token: unknown }).csrf_token;
    if (typeof value === 'string') return value;
  }
  return undefined;
}

/** Whether the body came as something other than JSON (a form type a cross-site page may send). */
function sentAsForm(request: FastifyRequest): boolean {
  const type = request.headers['content-type'];
  if (type === undefined || type === '') return false;
  return !/^application\/json\s*(;|$)/i.test(type);
}

declare module 'fastify' {
  interface FastifyRequest {
    clientSession: ClientSession;
    /** Temporary files this request's multipart body was streamed to; removed whatever the outcome. */
    uploadTmpFiles: string[] | null;
    /**
     * The files of this request's multipart body, by field name, as received. Routes take files
     * from here only: the parsed body is the client's word, and a JSON body could hold anything.
     */
    receivedFiles: Record<string, ReceivedUpload> | null;
    /** The file part of a route whose `uploads` takes any type, by field name. */
    receivedAnyFiles: Record<string, ReceivedFile> | null;
  }
  interface FastifyContextConfig {
    /** `client` routes need a signed-in session; `public` ones do not. */
    access?: 'public' | 'client';
    /** Check the CSRF token (default: every non-GET route with `client` access). */
    csrf?: boolean;
    /**
     * Accepts a file part in a multipart body (streamed to a temporary file): `true` a payment
     * proof (checked by content, 5 MiB), or any file up to `maxBytes` (request.receivedAnyFile).
     */
    uploads?: boolean | { anyType: true; maxBytes: number };
    /** The same path also answers a bearer token (a twin route on the token surface): documented as such. */
    alsoBearer?: boolean;
  }
}

/** What a route needs, for the OpenAPI document (securitySchemes in plugins/openapi.ts). */
function securityOf(method: string, config: { access?: 'public' | 'client'; csrf?: boolean }): object[] {
  const access = config.access ?? 'client';
  // Reads never check CSRF; a public mutation sent as JSON needs no token (a form does: see below).
  const csrf = !SAFE_METHODS.has(method) && (config.csrf ?? access === 'client');
  if (csrf) return [{ session: [], csrf: [] }];
  return access === 'client' ? [{ session: [] }] : [];
}

async function removeUploads(request: FastifyRequest): Promise<void> {
  const files = request.uploadTmpFiles ?? [];
  request.uploadTmpFiles = null;
  await Promise.all(files.map((file) => rm(file, { force: true })));
}

async function sessionAuthPlugin(app: FastifyInstance, { deps }: { deps: Deps }): Promise<void> {
  await app.register(cookie);
  const tmpDir = uploadDirs(deps.config.dataDir).tmp;
  await app.register(multipart, {
    attachFieldsToBody: 'keyValues',
    // The byte count is enforced while streaming (receiveUpload); busboy's own cap sits just above
    // it so an oversize file is seen, not silently truncated.
    limits: {
      fileSize: Math.max(MAX_UPLOAD_BYTES, MAX_ANY_FILE_BYTES) + 1,
      files: 1,
      fields: 10,
      fieldSize: 4096,
      parts: 12,
      headerPairs: 100,
    },
    async onFile(part) {
      const uploads = this.routeOptions.config.uploads;
      if (!uploads) {
        part.file.resume();
        throw new AppError('unsupported_media_type', { message: 'This route takes no files.' });
      }
      if (uploads !== true) {
        const file = await receiveFile(part.file, tmpDir, uploads.maxBytes, part.filename ?? '');
        this.uploadTmpFiles = [...(this.uploadTmpFiles ?? []), file.tmpPath];
        this.receivedAnyFiles = { ...this.receivedAnyFiles, [part.fieldname]: file };
        (part as unknown as { value: string }).value = file.filename;
        return;
      }
      const upload = await receiveUpload(part.file, tmpDir);
      this.uploadTmpFiles = [...(this.uploadTmpFiles ?? []), upload.tmpPath];
      this.receivedFiles = { ...this.receivedFiles, [part.fieldname]: upload };
      (part as unknown as { value: ReceivedUpload }).value = upload;
    },
  });
  app.decorateRequest('clientSession', null as unknown as ClientSession);
  app.decorateRequest('uploadTmpFiles', null);
  app.decorateRequest('receivedFiles', null);
  app.decorateRequest('receivedAnyFiles', null);

  app.addHook('onRoute', (route) => {
    const schema = (route.schema ?? {}) as Record<string, unknown>;
    const method = Array.isArray(route.method) ? String(route.method[0]) : route.method;
    const security = [...securityOf(method, route.config ?? {}), ...(route.config?.alsoBearer ? [{ bearer: [] }] : [])];
    route.schema = { ...schema, security } as typeof route.schema;
  });

  app.addHook('onRequest', async (request) => {
    const raw = request.cookies[SESSION_COOKIE];
    const id = isSessionId(raw) ? raw : null;
    const loaded = id === null ? null : await loadSession(deps.database.db, deps.clock, id, deps.sessionCache);
    request.clientSession = { id, loaded };
    const access = request.routeOptions.config.access ?? 'client';
    if (access === 'client' && loaded === null) throw new AppError('unauthenticated');
  });

  app.addHook('preValidation', async (request) => {
    if (SAFE_METHODS.has(request.method)) return;
    // Fetch Metadata: a browser tells us when a request was started by another site.
    if (request.headers['sec-fetch-site'] === 'cross-site') {
      throw new AppError('csrf_failed', { message: 'Cross-site requests are refused.' });
    }
    const config = request.routeOptions.config;
    // Public routes take JSON without a token (spec §4.3), which a page of another site cannot send
    // without a CORS preflight. A form (multipart, or any other body that is not JSON) can be
    // posted cross-site by any page, so on a public route it needs the anonymous session's token.
    const needsCsrf = config.csrf ?? ((config.access ?? 'client') === 'client' || sentAsForm(request));
    if (!needsCsrf) return;
    const id = request.clientSession.id;
    if (id === null || !csrfMatches(deps.secretKey, id, presentedCsrf(request.body, request.headers['x-csrf-token']))) {
      throw new AppError('csrf_failed');
    }
  });

  // Before the answer leaves (a kept upload was already moved, so this removes only leftovers),
  // and again at the end for a request that failed before onSend.
  app.addHook('onSend', async (request, _reply, payload) => {
    await removeUploads(request);
    return payload;
  });
  app.addHook('onResponse', removeUploads);
}

// Not encapsulated (what fastify-plugin does): the hooks apply to the scope that registers it.
(sessionAuthPlugin as unknown as Record<symbol, boolean>)[Symbol.for('skip-override')] = true;

/** Register in a surface's scope, before its routes: `await app.register(sessionAuth, { deps })`. */
export const sessionAuth: FastifyPluginAsync<{ deps: Deps }> = sessionAuthPlugin;

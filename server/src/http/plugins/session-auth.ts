// Cookie-session auth for a session surface (spec §5), as a plugin any prefix registers in its
// own scope (the client API at /api/v1/client, search at /api/v1/search).
// onRequest: resolve the cookie (SVCSESSID) to a session (or an anonymous id) and refuse
// anonymous callers of `client` routes before any body is read. preValidation (the body is
// parsed, not yet validated): check CSRF on mutations (and on public ones sent as a form rather
// than JSON), so a forged request is refused before anything about its body is looked at.
// Multipart bodies are parsed first (files only on routes marked `uploads`, streamed to a
// temporary file), so a form's `csrf_token` field counts like a JSON one. onRoute: each route's
// OpenAPI `security` says what it needs (cookie; cookie and CSRF header; or nothing).
//
// Uploads are decided before a byte of the file is read (T3-M4). preParsing, before the body is
// touched: a multipart request to an upload route is refused if cross-site or with a wrong
// X-CSRF-Token header; a route that takes any file (a game server's file_upload) needs that header,
// as its own preParsing hook then decides the action, ownership, type and state. A payment proof
// may carry its token as a form field instead, if the field comes before the file: onFile checks
// it when the file part starts. Then, still before the file is read, the upload gate (../uploads.ts):
// two uploads in flight per account, and a free-space floor on the temporary directory's disk.

import { rm } from 'node:fs/promises';
import cookie from '@fastify/cookie';
import multipart from '@fastify/multipart';
import type { FastifyInstance, FastifyPluginAsync, FastifyRequest } from 'fastify';
import { csrfMatches, isSessionId, type LoadedSession, loadSession, SESSION_COOKIE } from '../../core/auth/sessions.ts';
import { MAX_UPLOAD_BYTES, type ReceivedUpload, receiveUpload, uploadDirs } from '../../core/deposits/uploads.ts';
import { createUploadGate, type ReceivedFile, receiveFile, type UploadGate } from '../uploads.ts';

/** The largest file any route takes (a game server's file_upload, CONTRACT §6); each route has its own cap. */
export const MAX_ANY_FILE_BYTES = 100 * 1024 * 1024;

import type { Deps } from '../../core/deps.ts';
import { AppError } from '../../core/errors.ts';

export interface ClientSession {
  /** The cookie's session id (possibly anonymous: no row), or null without a usable cookie. */
  id: string | null;
  /** The signed-in session, or null when anonymous (or only half signed in). */
  loaded: LoadedSession | null;
  /**
   * A half session (the second factor still to come, CONTRACT §11), or null. Only routes marked
   * `halfSession` are reached with one; `loaded` is then null, so nothing signed-in (tokens,
   * sign-in links, the account) can be had from it.
   */
  pending: LoadedSession | null;
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
    /** The X-CSRF-Token header was checked before the body was read (a multipart upload). */
    csrfCheckedEarly: boolean;
    /** Gives back this request's upload slot (the upload gate); null when it holds none. */
    uploadRelease: (() => void) | null;
  }
  interface FastifyContextConfig {
    /** `client` routes need a signed-in session; `public` ones do not. */
    access?: 'public' | 'client';
    /**
     * A half session (password proven, second factor still to come) may call this `client` route:
     * the second step and logout. Every other `client` route answers it 401 two_factor_required.
     */
    halfSession?: boolean;
    /** Check the CSRF token (default: every non-GET route with `client` access). */
    csrf?: boolean;
    /**
     * Accepts a file part in a multipart body (streamed to a temporary file): `true` a payment
     * proof (checked by content, 5 MiB), or any file up to `maxBytes` (request.receivedAnyFile;
     * the CSRF token must then come as the X-CSRF-Token header, checked before the body is read).
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

function releaseUpload(request: FastifyRequest): void {
  const release = request.uploadRelease;
  request.uploadRelease = null;
  release?.();
}

/** Whether the request says it carries a multipart form (known before its body is parsed). */
export function sentAsMultipart(request: FastifyRequest): boolean {
  return /^multipart\/form-data\s*(;|$)/i.test(request.headers['content-type'] ?? '');
}

/** A form field parsed so far (before the file part), when sent once. */
function fieldSoFar(fields: unknown, name: string): unknown {
  const field = (fields as Record<string, unknown> | undefined)?.[name];
  return field !== null && typeof field === 'object' && !Array.isArray(field) && 'value' in field
    ? (field as { value: unknown }).value
    : undefined;
}

/** Every surface of one server shares its upload gate (one per app, so tests' apps do not meet). */
const gates = new WeakMap<Deps, UploadGate>();
function gateOf(deps: Deps): UploadGate {
  let gate = gates.get(deps);
  if (!gate) {
    gate = createUploadGate({
      tmpDir: uploadDirs(deps.config.dataDir).tmp,
      floorBytes: deps.config.uploadFreeSpaceFloorMb * 1024 * 1024,
    });
    gates.set(deps, gate);
  }
  return gate;
}

/** What an upload may write: its declared length, at most the route's cap (chunked: the cap). */
function expectedBytes(request: FastifyRequest, cap: number): number {
  const declared = Number(request.headers['content-length']);
  return Number.isSafeInteger(declared) && declared > 0 ? Math.min(declared, cap) : cap;
}

/** Whether the request's token (header, or `csrf_token` in `body`) is its session's. */
function csrfValid(deps: Deps, request: FastifyRequest, body: unknown): boolean {
  const id = request.clientSession.id;
  return id !== null && csrfMatches(deps.secretKey, id, presentedCsrf(body, request.headers['x-csrf-token']));
}

/**
 * Multipart bodies: fields go into the body; a file part only on a route marked `uploads`, once
 * the request may send it (its CSRF token, a signed-in account, a slot of the upload gate), then
 * streamed to a temporary file (see the top of this file).
 */
async function registerMultipart(app: FastifyInstance, deps: Deps): Promise<void> {
  const tmpDir = uploadDirs(deps.config.dataDir).tmp;
  const gate = gateOf(deps);
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
      // Nothing of the file is read for a request that may not send it: a payment proof's token
      // sent as a field must come before the file; any other file needs the header, checked (with
      // the route's own decisions) before parsing.
      const early = this.csrfCheckedEarly;
      if (
        !early &&
        (uploads !== true || !csrfValid(deps, this, { csrf_token: fieldSoFar(part.fields, 'csrf_token') }))
      ) {
        part.file.destroy();
        throw new AppError('csrf_failed', {
          message: 'The CSRF token is missing or wrong (send it as X-CSRF-Token, or as a field before the file).',
        });
      }
      const account = this.clientSession.loaded?.account.id;
      if (account === undefined) {
        part.file.destroy();
        throw new AppError('unauthenticated');
      }
      if (this.uploadRelease === null) {
        try {
          this.uploadRelease = await gate.admit(
            account,
            expectedBytes(this, uploads === true ? MAX_UPLOAD_BYTES : uploads.maxBytes),
          );
        } catch (error) {
          part.file.destroy();
          throw error;
        }
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
}

async function sessionAuthPlugin(app: FastifyInstance, { deps }: { deps: Deps }): Promise<void> {
  await app.register(cookie);
  await registerMultipart(app, deps);
  app.decorateRequest('clientSession', null as unknown as ClientSession);
  app.decorateRequest('uploadTmpFiles', null);
  app.decorateRequest('receivedFiles', null);
  app.decorateRequest('receivedAnyFiles', null);
  app.decorateRequest('csrfCheckedEarly', false);
  app.decorateRequest('uploadRelease', null);

  app.addHook('onRoute', (route) => {
    const schema = (route.schema ?? {}) as Record<string, unknown>;
    const method = Array.isArray(route.method) ? String(route.method[0]) : route.method;
    const security = [...securityOf(method, route.config ?? {}), ...(route.config?.alsoBearer ? [{ bearer: [] }] : [])];
    route.schema = { ...schema, security } as typeof route.schema;
  });

  app.addHook('onRequest', async (request, reply) => {
    const raw = request.cookies[SESSION_COOKIE];
    const id = isSessionId(raw) ? raw : null;
    const found = id === null ? null : await loadSession(deps.database.db, deps.clock, id, deps.sessionCache);
    const pending = found?.twoFactorPending ? found : null;
    const loaded = pending === null ? found : null;
    request.clientSession = { id, loaded, pending };
    const config = request.routeOptions.config;
    if ((config.access ?? 'client') === 'client' && loaded === null && !(pending !== null && config.halfSession)) {
      throw new AppError(pending === null ? 'unauthenticated' : 'two_factor_required');
    }
    // An upload's slot goes back however the request ends (a client gone mid-upload included).
    if (request.routeOptions.config.uploads) reply.raw.once('close', () => releaseUpload(request));
  });

  /** Fetch Metadata: a browser tells us when a request was started by another site. */
  const refuseCrossSite = (request: FastifyRequest) => {
    if (request.headers['sec-fetch-site'] === 'cross-site') {
      throw new AppError('csrf_failed', { message: 'Cross-site requests are refused.' });
    }
  };

  // A multipart upload, before its body is read (see the top of this file).
  app.addHook('preParsing', async (request) => {
    const uploads = request.routeOptions.config.uploads;
    if (!uploads || SAFE_METHODS.has(request.method) || !sentAsMultipart(request)) return;
    refuseCrossSite(request);
    const header = request.headers['x-csrf-token'];
    if (header === undefined && uploads === true) return; // a payment proof's field: onFile
    if (!csrfValid(deps, request, undefined)) {
      throw new AppError('csrf_failed', {
        message: 'Send the CSRF token as the X-CSRF-Token header with a file upload.',
      });
    }
    request.csrfCheckedEarly = true;
  });

  app.addHook('preValidation', async (request) => {
    if (SAFE_METHODS.has(request.method)) return;
    refuseCrossSite(request);
    const config = request.routeOptions.config;
    // Public routes take JSON without a token (spec §4.3), which a page of another site cannot send
    // without a CORS preflight. A form (multipart, or any other body that is not JSON) can be
    // posted cross-site by any page, so on a public route it needs the anonymous session's token.
    const needsCsrf = config.csrf ?? ((config.access ?? 'client') === 'client' || sentAsForm(request));
    if (!needsCsrf) return;
    if (!csrfValid(deps, request, request.body)) throw new AppError('csrf_failed');
  });

  // Before the answer leaves (a kept upload was already moved, so this removes only leftovers),
  // and again at the end for a request that failed before onSend.
  app.addHook('onSend', async (request, _reply, payload) => {
    await removeUploads(request);
    return payload;
  });
  app.addHook('onResponse', async (request) => {
    releaseUpload(request);
    await removeUploads(request);
  });
}

// Not encapsulated (what fastify-plugin does): the hooks apply to the scope that registers it.
(sessionAuthPlugin as unknown as Record<symbol, boolean>)[Symbol.for('skip-override')] = true;

/** Register in a surface's scope, before its routes: `await app.register(sessionAuth, { deps })`. */
export const sessionAuth: FastifyPluginAsync<{ deps: Deps }> = sessionAuthPlugin;

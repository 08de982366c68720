// The client panel (CONTRACT §10): the Vite build in PANEL_DIR (web/dist, built by `npm ci`),
// read into memory once at start. Content-hashed files under /assets/ are immutable for a year;
// the HTML is `no-cache` (revalidated by ETag) and carries the panel's security headers. Every
// GET of a path that belongs to no API surface loads the panel, whose router shows the page or
// its own not-found page; the API prefixes, /docs, /metrics, the console WebSocket and /staff
// are never answered with it. /staff and /staff/… load the staff console instead (CONTRACT §14):
// a second entry of the same build (staff.html), so the customer's bundle holds no staff code.

import { createHash } from 'node:crypto';
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { extname, join, relative, sep } from 'node:path';
import { brotliCompressSync, constants, gzipSync } from 'node:zlib';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { underTokenPrefix } from './plugins/token-auth.ts';

const TYPES: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.mjs': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.jpg': 'image/jpeg',
  '.webp': 'image/webp',
  '.ico': 'image/x-icon',
  '.woff2': 'font/woff2',
  '.woff': 'font/woff',
  '.ttf': 'font/ttf',
  '.json': 'application/json',
  '.txt': 'text/plain; charset=utf-8',
  '.wasm': 'application/wasm',
};

/** Worth compressing: text. Images and fonts are compressed already. */
const COMPRESSIBLE = new Set(['.html', '.js', '.mjs', '.css', '.svg', '.json', '.txt', '.wasm']);

const cspOf = (formAction: string) =>
  [
    "default-src 'self'",
    "script-src 'self'",
    "style-src 'self'",
    "img-src 'self' data: blob:",
    "connect-src 'self'",
    "font-src 'self'",
    "object-src 'none'",
    "base-uri 'self'",
    `form-action ${formAction}`,
    "frame-ancestors 'none'",
  ].join('; ');

/** The panel's policy when no payment gateway is configured. */
export const PANEL_CSP = cspOf("'self'");

/**
 * The policy with the payment gateway's checkout origin (CONTRACT §10's one exception): the
 * wallet page submits Hosted Checkout's form there. Only form-action widens; nothing of the
 * gateway's is loaded into the panel.
 */
export function panelCsp(gatewayOrigin: string | null): string {
  return gatewayOrigin === null ? PANEL_CSP : cspOf(`'self' ${gatewayOrigin}`);
}

/** Browser features the panel does not use, denied (clipboard and WebAuthn stay with the default, self). */
const PERMISSIONS_POLICY =
  'accelerometer=(), camera=(), display-capture=(), geolocation=(), gyroscope=(), magnetometer=(), microphone=(), midi=(), payment=(), usb=(), serial=(), hid=()';

interface PanelFile {
  body: Buffer;
  /** Whether the file is worth compressing (text over 512 bytes). */
  compressible: boolean;
  /** Made on the first request that takes it, then kept (not at start: brotli 11 over the build is seconds). */
  gzip(): Buffer;
  br(): Buffer;
  type: string;
  etag: string;
}

export interface PanelBundle {
  index: PanelFile;
  /** The staff console's page (staff.html), or null in a build without it. */
  staff: PanelFile | null;
  /** By URL path: /assets/index-abc123.js, /favicon.svg. */
  files: Map<string, PanelFile>;
}

function once(make: () => Buffer): () => Buffer {
  let made: Buffer | null = null;
  return () => {
    made ??= make();
    return made;
  };
}

function fileOf(path: string): PanelFile {
  const body = readFileSync(path);
  const ext = extname(path).toLowerCase();
  const compress = COMPRESSIBLE.has(ext) && body.length > 512;
  return {
    body,
    compressible: compress,
    gzip: once(() => gzipSync(body, { level: 9 })),
    br: once(() => brotliCompressSync(body, { params: { [constants.BROTLI_PARAM_QUALITY]: 11 } })),
    type: TYPES[ext] ?? 'application/octet-stream',
    etag: `"${createHash('sha256').update(body).digest('base64url').slice(0, 27)}"`,
  };
}

function walk(dir: string): string[] {
  const found: string[] = [];
  for (const entry of readdirSync(dir)) {
    const path = join(dir, entry);
    if (statSync(path).isDirectory()) found.push(...walk(path));
    else found.push(path);
  }
  return found;
}

const loaded = new Map<string, PanelBundle>();

/**
 * The built panel in `dir`, or null when there is none (not built, or PANEL_DIR=off). Read and
 * compressed once per process and build (several apps in one process share it).
 */
export function loadPanel(dir: string | null): PanelBundle | null {
  if (dir === null || !existsSync(join(dir, 'index.html'))) return null;
  const key = `${dir}:${statSync(join(dir, 'index.html')).mtimeMs}`;
  let bundle = loaded.get(key);
  if (bundle === undefined) {
    bundle = readPanel(dir);
    loaded.set(key, bundle);
  }
  return bundle;
}

function readPanel(dir: string): PanelBundle {
  const files = new Map<string, PanelFile>();
  for (const path of walk(dir)) {
    const rel = relative(dir, path).split(sep).join('/');
    // Vite's manifest describes the build for tools (bench, tests); it is not served.
    if (rel === 'index.html' || rel === 'staff.html' || rel.startsWith('.vite/')) continue;
    files.set(`/${rel}`, fileOf(path));
  }
  const staff = join(dir, 'staff.html');
  return { index: fileOf(join(dir, 'index.html')), staff: existsSync(staff) ? fileOf(staff) : null, files };
}

function send(request: FastifyRequest, reply: FastifyReply, file: PanelFile): FastifyReply {
  reply.header('Content-Type', file.type).header('ETag', file.etag).header('X-Content-Type-Options', 'nosniff');
  if (file.compressible) reply.header('Vary', 'Accept-Encoding');
  if (request.headers['if-none-match'] === file.etag) return reply.code(304).send();
  const accepted = String(request.headers['accept-encoding'] ?? '');
  if (file.compressible && /\bbr\b/.test(accepted)) return reply.header('Content-Encoding', 'br').send(file.br());
  if (file.compressible && /\bgzip\b/.test(accepted)) return reply.header('Content-Encoding', 'gzip').send(file.gzip());
  return reply.send(file.body);
}

/** Paths the panel never answers: the API surfaces and the other things this process serves. */
export function isReserved(path: string, altBasePath: string): boolean {
  const bare = path.split('?', 1)[0] ?? '/';
  const under = (prefix: string) => bare === prefix || bare.startsWith(`${prefix}/`);
  return (
    under('/api') ||
    under(altBasePath) ||
    under('/docs') ||
    under('/metrics') ||
    under('/ws') ||
    under('/staff') ||
    under('/assets') ||
    // A file name (robots.txt, app.js.map) that the build does not have is a 404, not a page.
    /\.[A-Za-z0-9]{1,8}$/.test(bare)
  );
}

export function registerPanel(
  app: FastifyInstance,
  bundle: PanelBundle,
  altBasePath: string,
  /** The payment gateway's checkout origin now (demo mode configures it after start), or null. */
  gatewayOrigin: () => string | null = () => null,
): void {
  const page = (request: FastifyRequest, reply: FastifyReply, file: PanelFile = bundle.index) => {
    reply
      .header('Cache-Control', 'no-cache')
      .header('Content-Security-Policy', panelCsp(gatewayOrigin()))
      .header('Referrer-Policy', 'same-origin')
      .header('Permissions-Policy', PERMISSIONS_POLICY)
      .header('X-Frame-Options', 'DENY');
    return send(request, reply, file);
  };

  app.get('/assets/*', { schema: { hide: true } }, async (request, reply) => {
    const file = bundle.files.get(request.url.split('?', 1)[0] ?? '');
    if (file === undefined) return reply.callNotFound();
    reply.header('Cache-Control', 'public, max-age=31536000, immutable');
    return send(request, reply, file);
  });

  for (const [path, file] of bundle.files) {
    if (path.startsWith('/assets/')) continue;
    app.get(path, { schema: { hide: true } }, async (request, reply) => {
      reply.header('Cache-Control', 'public, max-age=3600');
      return send(request, reply, file);
    });
  }

  // The staff console's routes (/staff, /staff/invite, /staff/deposits, …): its router shows them.
  const staff = bundle.staff;
  if (staff !== null) {
    app.get('/staff', { schema: { hide: true } }, async (request, reply) => page(request, reply, staff));
    app.get('/staff/*', { schema: { hide: true } }, async (request, reply) =>
      /\.[A-Za-z0-9]{1,8}$/.test(request.url.split('?', 1)[0] ?? '')
        ? reply.callNotFound()
        : page(request, reply, staff),
    );
  }

  // The panel's own routes (/, /login, /services/42, …) and any path it may show as not found.
  app.get('/', { schema: { hide: true } }, async (request, reply) => page(request, reply));
  // Any prefix a token surface is mounted at (tokenPrefixes) is the API's too, wherever it is.
  app.get('/*', { schema: { hide: true } }, async (request, reply) =>
    isReserved(request.url, altBasePath) || underTokenPrefix(app, request.url.split('?', 1)[0] ?? '')
      ? reply.callNotFound()
      : page(request, reply),
  );
}

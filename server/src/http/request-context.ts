// Who is calling, as every surface sees it: the client's address (behind the configured
// proxies), its key for per-IP limits, its user agent, and its Bearer credential.

import type { FastifyRequest } from 'fastify';
import { byClient, type Who } from '../core/activity/activity.ts';
import { normalizeIp, rateKeyIp } from '../core/net/ip.ts';

export function clientIp(request: FastifyRequest): string {
  // A socket destroyed before the answer (e.g. a refused WebSocket upgrade) has no address left.
  const ip = request.ip as string | undefined;
  if (ip === undefined) return 'unknown';
  return normalizeIp(ip) ?? ip;
}

/** The client's key for per-IP rate limits: an IPv4 address, or the /64 of an IPv6 one (rateKeyIp). */
export function clientRateKey(request: FastifyRequest): string {
  return rateKeyIp(clientIp(request));
}

export function clientInfo(request: FastifyRequest): { ip: string | null; userAgent: string | null } {
  const ua = request.headers['user-agent'];
  return { ip: clientIp(request), userAgent: typeof ua === 'string' ? ua : null };
}

/** The customer making this request, as the activity log records them (CONTRACT §11). */
export function whoOf(request: FastifyRequest): Who {
  return byClient(clientIp(request));
}

/** `Authorization: Bearer …`, then the credential when the rest of the header is one word. */
const BEARER = /^Bearer\s(?:\s*(\S+)$)?/i;

/** The credential of an `Authorization: Bearer <credential>` header, or null for any other header or none. */
export function bearerToken(header: string | string[] | undefined): string | null {
  return typeof header === 'string' ? (BEARER.exec(header)?.[1] ?? null) : null;
}

/**
 * Whether the header names the Bearer scheme, whatever follows: such a request is a token
 * request (surfaces.ts), to be refused as one when its credential is not one word.
 */
export function isBearer(header: string | string[] | undefined): boolean {
  return typeof header === 'string' && BEARER.test(header);
}

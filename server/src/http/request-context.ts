// Who is calling, as every surface sees it: the client's address (behind the configured
// proxies), its key for per-IP limits, and its user agent.

import type { FastifyRequest } from 'fastify';
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

/** The credential of an `Authorization: Bearer <credential>` header, or null for any other header or none. */
export function bearerToken(header: string | undefined): string | null {
  return header === undefined ? null : (/^Bearer\s+(\S+)$/i.exec(header)?.[1] ?? null);
}

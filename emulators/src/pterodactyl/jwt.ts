// The JWTs the panel signs for Wings (NodeJWTService): HS256 with the node's daemon token, `iss`
// the panel URL, `aud` the node address, `jti` md5(user id + server uuid) (also in the header),
// `iat`, `nbf` (5 minutes back), `exp`, then the claims (server_uuid, permissions, file_path,
// backup_uuid…), `user_uuid`, `user_id` and a random `unique_id` (single-use tokens key on it).

import { createHash, createHmac, timingSafeEqual } from 'node:crypto';
import { randomString } from './seed.ts';

export interface Claims {
  iss: string;
  aud: string[];
  jti: string;
  iat: number;
  nbf: number;
  exp: number;
  unique_id: string;
  user_uuid?: string;
  user_id?: number;
  server_uuid?: string;
  permissions?: string[];
  file_path?: string;
  backup_uuid?: string;
}

function b64url(data: Buffer | string): string {
  return Buffer.from(data).toString('base64url');
}

export function signJwt(
  secret: string,
  base: { issuer: string; audience: string; ttlSeconds: number; identifiedBy: string },
  claims: Partial<Claims>,
): string {
  const now = Math.floor(Date.now() / 1000);
  const jti = createHash('md5').update(base.identifiedBy).digest('hex');
  const header = { typ: 'JWT', alg: 'HS256', jti };
  const payload: Claims = {
    iss: base.issuer,
    aud: [base.audience],
    jti,
    iat: now,
    nbf: now - 300,
    exp: now + base.ttlSeconds,
    ...claims,
    unique_id: randomString(16),
  };
  const body = `${b64url(JSON.stringify(header))}.${b64url(JSON.stringify(payload))}`;
  return `${body}.${b64url(createHmac('sha256', secret).update(body).digest())}`;
}

export type JwtCheck = { ok: true; claims: Claims } | { ok: false; error: string };

/** Verify as Wings' tokens.ParseToken does: signature, then `exp`; the error texts are gbrlsnchs/jwt's. */
export function verifyJwt(secret: string, token: string): JwtCheck {
  const parts = token.trim().split('.');
  if (parts.length !== 3) return { ok: false, error: 'jwt: malformed token' };
  const [h = '', p = '', s = ''] = parts;
  const expected = createHmac('sha256', secret).update(`${h}.${p}`).digest();
  let given: Buffer;
  try {
    given = Buffer.from(s, 'base64url');
  } catch {
    return { ok: false, error: 'jwt: HMAC verification failed' };
  }
  if (given.length !== expected.length || !timingSafeEqual(given, expected)) {
    return { ok: false, error: 'jwt: HMAC verification failed' };
  }
  let claims: Claims;
  try {
    claims = JSON.parse(Buffer.from(p, 'base64url').toString('utf8')) as Claims;
  } catch {
    return { ok: false, error: 'jwt: malformed token' };
  }
  if (typeof claims.exp !== 'number' || Math.floor(Date.now() / 1000) > claims.exp) {
    return { ok: false, error: 'jwt: exp claim is invalid' };
  }
  return { ok: true, claims };
}

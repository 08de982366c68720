// The login details a product provisions with: generated once, sealed into the service row
// (core/services/credentials.ts) before any node sees them, and found again by a later attempt,
// so a retried job never changes a password an earlier attempt already set.

import { randomInt } from 'node:crypto';
import type { Service } from '../../db/tables.ts';
import { type Credentials, openCredentials, sealCredentials } from '../services/credentials.ts';
import * as services from '../services/service.repository.ts';
import type { ProductEnv } from './env.ts';

/** 20 characters from an unambiguous alphabet (~110 bits), with a digit and a symbol guaranteed. */
export function generatePassword(): string {
  const alphabet = 'ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz23456789';
  let out = '';
  for (let i = 0; i < 18; i++) out += alphabet[randomInt(alphabet.length)];
  return `${out.slice(0, 9)}-${out.slice(9)}${randomInt(10)}`;
}

/**
 * The service's stored login (`username` with a generated password the first time), sealed
 * before it is returned; `fresh`: a new password even when one is stored (a reinstall).
 */
export async function sealedCredentials(
  env: Pick<ProductEnv, 'db' | 'secretKey'>,
  service: Pick<Service, 'id' | 'credentials_sealed'>,
  username: string,
  fresh = false,
): Promise<Credentials> {
  const existing = fresh ? null : openCredentials(env.secretKey, service);
  if (existing) return existing;
  const credentials = { username, password: generatePassword() };
  await services.setCredentials(env.db, service.id, sealCredentials(env.secretKey, service.id, credentials));
  return credentials;
}

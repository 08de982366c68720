// A service's login details at rest: sealed with the installation's secret key, bound to the
// service's id (a sealed value copied onto another service does not open). Products seal what
// they provision (core/product-kit/credentials.ts); the service views open them for the owner.

import type { Service } from '../../db/tables.ts';
import { decryptSecret, encryptSecret } from '../crypto/secrets.ts';

const CREDENTIALS_AAD = 'service-credentials:';

export interface Credentials {
  username: string;
  password: string;
}

export function sealCredentials(secretKey: Buffer, serviceId: number, credentials: Credentials): string {
  return encryptSecret(secretKey, JSON.stringify(credentials), `${CREDENTIALS_AAD}${serviceId}`);
}

function isCredentials(value: unknown): value is Credentials {
  if (typeof value !== 'object' || value === null) return false;
  const { username, password } = value as Record<string, unknown>;
  return typeof username === 'string' && typeof password === 'string';
}

/** The service's login details; null when it has none. Throws when they do not open (wrong key, tampered). */
export function openCredentials(
  secretKey: Buffer,
  service: Pick<Service, 'id' | 'credentials_sealed'>,
): Credentials | null {
  if (service.credentials_sealed === null) return null;
  const opened: unknown = JSON.parse(
    decryptSecret(secretKey, service.credentials_sealed, `${CREDENTIALS_AAD}${service.id}`),
  );
  if (!isCredentials(opened))
    throw new Error(`the credentials of service ${service.id} are not a username and password`);
  return { username: opened.username, password: opened.password };
}

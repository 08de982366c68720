// A virtual server's cloud-init user data at rest (CONTRACT §13): sealed with the installation's
// secret key, bound to the service's id, from the ordering transaction until provisioning has
// used it (services.markActive, markFailed and markTerminated clear it). It may hold secrets
// (passwords, tokens in a script): never in a log, a view, an order's config or an export.

import type { Service } from '../../db/tables.ts';
import { decryptSecret, encryptSecret } from '../crypto/secrets.ts';

const USER_DATA_AAD = 'service-user-data:';

export function sealUserData(secretKey: Buffer, serviceId: number, userData: string): string {
  return encryptSecret(secretKey, userData, `${USER_DATA_AAD}${serviceId}`);
}

/** The service's user data; null when it has none (or provisioning has used it). Throws when it does not open. */
export function openUserData(secretKey: Buffer, service: Pick<Service, 'id' | 'user_data_sealed'>): string | null {
  if (service.user_data_sealed === null || service.user_data_sealed === undefined) return null;
  return decryptSecret(secretKey, service.user_data_sealed, `${USER_DATA_AAD}${service.id}`);
}

/** An order's config as it is stored (orders.config): without the user data. */
export function withoutUserData(config: Record<string, unknown>): Record<string, unknown> {
  const { user_data: _secret, ...rest } = config;
  return rest;
}

// The webhooks page's calls to the session surface (GET|POST /api/v1/client/webhooks/).

import type { paths } from '@hostplane/sdk/schema';
import { api, unwrap } from '../../lib/api.ts';

export const HOOKS_KEY = ['webhooks'] as const;

export async function fetchEndpoints() {
  const data = await unwrap(api.GET('/api/v1/client/webhooks/'));
  if (!('endpoints' in data)) throw new Error('The server answered with one endpoint where a list was expected.');
  return data;
}

export type Overview = Awaited<ReturnType<typeof fetchEndpoints>>;
export type Endpoint = Overview['endpoints'][number];

export async function fetchDeliveries(id: number) {
  const data = await unwrap(api.GET('/api/v1/client/webhooks/', { params: { query: { id, action: 'deliveries' } } }));
  return 'deliveries' in data ? data.deliveries : [];
}

export type Delivery = Awaited<ReturnType<typeof fetchDeliveries>>[number];

type Change = NonNullable<paths['/api/v1/client/webhooks/']['post']['requestBody']>['content']['application/json'];

export function change(body: Change) {
  return unwrap(api.POST('/api/v1/client/webhooks/', { body }));
}

/** What each event means, in the order the server lists them. */
export const EVENT_HINTS: Record<string, string> = {
  'order.created': 'An order was placed: a new service, or a renewal billed.',
  'order.paid': 'An order was paid from the wallet.',
  'invoice.issued': 'A tax invoice was issued for a payment.',
  'service.active': 'A service finished setting up and runs.',
  'service.suspended': 'A service was suspended.',
  'service.unsuspended': 'A suspension was lifted.',
  'service.terminated': 'A service was deleted.',
  'job.failed': 'A job (setting up, power, reinstall, …) gave up.',
  'deposit.approved': 'A deposit was approved and credited.',
  'deposit.rejected': 'A deposit was not approved.',
  'wallet.low_balance': 'The wallet fell below your threshold (set below).',
};

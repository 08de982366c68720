// The web hosting route (spec 4.10, CONTRACT §6): `GET|POST /api/v1/client/web/?service=&action=`.
// The OpenAPI document types every answer as `{success, message} & {[key]: unknown}`, so the
// shapes the server's action registry (server/src/core/products/web/actions.ts) answers with
// are written out here, once, and every section reads and changes through these hooks.

import { type QueryKey, useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { ApiError, api, unwrap } from '../../../lib/api.ts';

export interface WebAccount {
  domain: string;
  username: string;
  package: string;
  ip: string | null;
  suspended: boolean;
  disk: { used_mb: number; limit_mb: number | null };
}

export interface UsageItem {
  id: string;
  description: string;
  usage: number;
  maximum: number | null;
  unit: string | null;
}

export interface WebEvent {
  id: number;
  kind: string;
  message: string;
  created_at: string;
}

export interface DnsRecord {
  line: number;
  name: string;
  ttl: number;
  type: string;
  data: string[];
}

export interface WebDatabase {
  name: string;
  users: string[];
  disk_bytes: number;
}

export interface WebDbUser {
  name: string;
  databases: string[];
}

export interface Mailbox {
  email: string;
  disk_used_bytes: number;
  quota_bytes: number | null;
  login_suspended: boolean;
}

export interface HttpsState {
  certificate: {
    issuer: string;
    not_after: string;
    domains: string[];
    self_signed: boolean;
  } | null;
  autossl_in_progress: boolean;
  problems: string[];
  forced: boolean;
}

/** What each read action answers (next to success and message). */
export interface WebReads {
  overview: { account: WebAccount };
  usage: { usage: UsageItem[] };
  events: { events: WebEvent[] };
  nameservers: { domain: string; nameservers: string[] };
  dns: { zone: string; records: DnsRecord[] };
  databases: { prefix: string | null; databases: WebDatabase[]; users: WebDbUser[]; limit: number };
  mailboxes: { mailboxes: Mailbox[]; limit: number };
  php: { php: { version: string; installed: string[] } };
  https_status: { https: HttpsState };
}

/** The parameters of each action that changes something. */
export interface WebMutations {
  db_create: { name: string };
  db_delete: { name: string };
  db_user_create: { name: string; password: string };
  db_user_delete: { name: string };
  db_assign: { user: string; database: string; privileges?: string[] };
  mailbox_create: { email: string; password: string; quota_mb?: number };
  mailbox_delete: { email: string };
  mailbox_password: { email: string; password: string };
  mailbox_quota: { email: string; quota_mb: number };
  php_set: { version: string };
  password_change: { password: string };
  https_force: Record<string, never>;
  https_unforce: Record<string, never>;
}

export type WebRead = keyof WebReads;
export type WebMutation = keyof WebMutations;

export const webKey = (serviceId: number, action?: WebRead): QueryKey =>
  action ? ['web', serviceId, action] : ['web', serviceId];

export async function webRead<A extends WebRead>(service: number, action: A): Promise<WebReads[A]> {
  const data = await unwrap(api.GET('/api/v1/client/web/', { params: { query: { service, action } } }));
  return data as unknown as WebReads[A];
}

export function useWeb<A extends WebRead>(
  serviceId: number,
  action: A,
  options: {
    enabled?: boolean;
    refetchInterval?: number | false | ((data: WebReads[A] | undefined, error: unknown) => number | false);
  } = {},
) {
  const { refetchInterval, enabled } = options;
  return useQuery({
    queryKey: webKey(serviceId, action),
    queryFn: () => webRead(serviceId, action),
    enabled: enabled ?? true,
    refetchInterval:
      typeof refetchInterval === 'function'
        ? (query) => refetchInterval(query.state.data, query.state.error)
        : refetchInterval,
  });
}

/**
 * An action that changes something; on success the reads named in `refresh` are loaded again.
 * Mutations are dropped from the cache as soon as nothing shows them (`gcTime: 0`): several of
 * them carry passwords.
 */
export function useWebMutation<A extends WebMutation>(serviceId: number, action: A, refresh: WebRead[]) {
  const client = useQueryClient();
  return useMutation({
    gcTime: 0,
    mutationFn: async (body: WebMutations[A]) => {
      const data = await unwrap(
        api.POST('/api/v1/client/web/', {
          params: { query: { service: serviceId, action } },
          body: body as Record<string, unknown>,
        }),
      );
      return data as { message: string } & Record<string, unknown>;
    },
    onSuccess: () =>
      Promise.all(refresh.map((read) => client.invalidateQueries({ queryKey: webKey(serviceId, read) }))),
  });
}

/** The plan limit of a 409 limit_reached refusal, or null for any other error. */
export function limitOf(error: unknown): number | null {
  if (!(error instanceof ApiError) || error.code !== 'limit_reached') return null;
  const limit = Number(error.details.limit);
  return Number.isFinite(limit) ? limit : null;
}

/** The states in which the hosting account cannot be managed (CONTRACT §6 state checks). */
export const BLOCKING_CODES = ['suspended', 'no_panel_user', 'no_server', 'server_installing'];

/** "ea-php82" → "PHP 8.2"; "inherit" → "Server default". */
export function phpLabel(version: string): string {
  if (version === 'inherit') return 'Server default';
  const match = /php(\d)(\d+)$/.exec(version);
  return match ? `PHP ${match[1]}.${match[2]}` : version;
}

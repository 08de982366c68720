// The game server's management route (spec 4.9, CONTRACT §6): one path,
// `GET|POST /api/v1/client/game/?service=<id>&action=<name>`. Reads are GETs with their
// parameters in the query; everything else is a POST with a JSON body (the CSRF header is added
// by lib/api.ts). The answers are untyped in the schema, so their shapes are written here from
// the server's views (server/src/core/products/game/views.ts).

import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { api, unwrap } from '../../../lib/api.ts';

type Query = Record<string, string | number | undefined>;

export interface Answer {
  success: true;
  message: string;
}

export function gameRead<T>(service: number, action: string, params: Query = {}): Promise<T & Answer> {
  // The schema names only service and action; the action's own parameters go alongside them.
  const query = { service, action, ...params } as { service: number; action: string };
  return unwrap(api.GET('/api/v1/client/game/', { params: { query } })) as Promise<T & Answer>;
}

export function gamePost<T>(service: number, action: string, body: object = {}): Promise<T & Answer> {
  return unwrap(
    api.POST('/api/v1/client/game/', {
      params: { query: { service, action } },
      body: body as Record<string, unknown>,
    }),
  ) as Promise<T & Answer>;
}

/** The upload URL of file_upload (multipart: `directory` first, then `file`). */
export function uploadPath(service: number): string {
  return `/api/v1/client/game/?service=${service}&action=file_upload`;
}

export const gameKey = (service: number, action: string, params?: Query) =>
  params ? (['game', service, action, params] as const) : (['game', service, action] as const);

export function useGame<T>(
  service: number,
  action: string,
  params?: Query,
  options: { refetchInterval?: (data: (T & Answer) | undefined) => number | false } = {},
) {
  const { refetchInterval } = options;
  return useQuery<T & Answer, Error>({
    queryKey: gameKey(service, action, params ?? {}),
    queryFn: () => gameRead<T>(service, action, params),
    // Reads count against the account's panel allowance (120 a minute): do not ask on every focus.
    refetchOnWindowFocus: false,
    staleTime: 10_000,
    refetchInterval: refetchInterval ? (query) => refetchInterval(query.state.data) : false,
  });
}

/** A POST action; on success the listed read actions are asked again. */
export function useGameAction<T = Record<string, unknown>, V extends object = Record<string, unknown>>(
  service: number,
  action: string,
  refresh: string[] = [],
) {
  const client = useQueryClient();
  return useMutation({
    mutationFn: (body: V) => gamePost<T>(service, action, body),
    onSuccess: async () => {
      await Promise.all(refresh.map((read) => client.invalidateQueries({ queryKey: gameKey(service, read) })));
    },
  });
}

// ---- the answers' shapes ----

export interface GameServer {
  identifier: string;
  name: string;
  description: string | null;
  node: string;
  status: string;
  power: string;
  address: string | null;
  sftp: { host: string; port: number };
  limits: {
    memory_mb: number;
    cpu_percent: number;
    disk_mb: number;
    databases: number;
    backups: number;
  };
  docker_image: string;
  startup: string;
}

export interface GameFile {
  name: string;
  path: string;
  is_file: boolean;
  is_symlink: boolean;
  size: number;
  mode: string;
  mimetype: string;
  created_at: string;
  modified_at: string;
}

export interface GameBackup {
  uuid: string;
  name: string;
  status: 'in_progress' | 'completed' | 'failed';
  locked: boolean;
  ignored: string[];
  checksum: string | null;
  bytes: number;
  created_at: string;
  completed_at: string | null;
}

export interface GameDatabase {
  id: string;
  name: string;
  username: string;
  host: string;
  connections_from: string;
  max_connections: number;
  password?: string;
}

export interface GameTask {
  id?: number;
  sequence?: number;
  action: 'command' | 'power' | 'backup';
  payload: string;
  time_offset: number;
  continue_on_failure?: boolean;
  queued?: boolean;
}

export interface GameSchedule {
  id: number;
  name: string;
  cron: { minute: string; hour: string; day_of_month: string; month: string; day_of_week: string };
  is_active: boolean;
  is_processing: boolean;
  only_when_online: boolean;
  last_run_at: string | null;
  next_run_at: string | null;
  tasks: GameTask[];
}

export interface GameVariable {
  key: string;
  name: string;
  description: string;
  value: string | null;
  default: string | null;
  editable: boolean;
  rules: string;
}

export interface GameSubuser {
  uuid: string;
  email: string;
  permissions: string[];
}

/** Bytes as people read them: 1.5 MB, 980 KB. */
export function bytes(n: number | null | undefined): string {
  if (n === null || n === undefined || !Number.isFinite(n)) return '—';
  if (n < 1024) return `${n} B`;
  const units = ['KB', 'MB', 'GB', 'TB'];
  let value = n / 1024;
  let unit = 0;
  while (value >= 1024 && unit < units.length - 1) {
    value /= 1024;
    unit++;
  }
  return `${value >= 10 ? Math.round(value) : value.toFixed(1)} ${units[unit]}`;
}

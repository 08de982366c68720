// What the services pages share: the service and job types (from the API schema), the queries,
// and the rules for which power control applies in which state.

import type { paths } from '@hostplane/sdk/schema';
import { useQuery } from '@tanstack/react-query';
import { api, unwrap } from '../../lib/api.ts';

type ServicesAnswer = paths['/api/v1/client/services/']['get']['responses'][200]['content']['application/json'];
export type ListAnswer = Extract<ServicesAnswer, { services: unknown }>;
export type Service = Extract<ServicesAnswer, { service: unknown }>['service'];
export type ListedService = ListAnswer['services'][number];
export type Job = NonNullable<Service['last_job']>;
export type Credentials = Extract<ServicesAnswer, { credentials: unknown }>['credentials'];
export type ServiceEvent = Extract<ServicesAnswer, { events: unknown }>['events'][number];
export type SignOn = Extract<ServicesAnswer, { sso: unknown }>['sso'];

export const TYPE_NAMES: Record<string, string> = {
  vps: 'Virtual server',
  game: 'Game server',
  web: 'Web hosting',
  baremetal: 'Bare metal',
};

export const STATUSES = ['pending', 'provisioning', 'active', 'suspended', 'failed', 'terminated'] as const;

export function typeName(type: string): string {
  return TYPE_NAMES[type] ?? type;
}

export const serviceKey = (id: number) => ['service', id] as const;

export function jobRunning(job: Job | null | undefined): boolean {
  return !!job && (job.status === 'queued' || job.status === 'running');
}

/** The service, polled every 2 s while a job runs on it (progress and step), else every 30 s. */
export function useService(id: number) {
  return useQuery({
    queryKey: serviceKey(id),
    queryFn: async () => {
      const data = await unwrap(api.GET('/api/v1/client/services/', { params: { query: { id } } }));
      if (!('service' in data)) throw new Error('The server answered without the service.');
      return data.service;
    },
    enabled: Number.isInteger(id) && id > 0,
    refetchInterval: (query) => {
      const service = query.state.data;
      if (!service) return false;
      if (jobRunning(service.last_job) || service.status === 'pending' || service.status === 'provisioning')
        return 2000;
      return 30_000;
    },
  });
}

/** Types that have power (web hosting has none). */
export function hasPower(type: string): boolean {
  return type === 'vps' || type === 'game' || type === 'baremetal';
}

export type Signal = 'start' | 'stop' | 'restart' | 'kill';

/** Which power controls apply: Start only when stopped; Stop and Restart only when running; Kill unless off. */
export function signalAllowed(signal: Signal, power: string | null | undefined): boolean {
  const p = power ?? 'unknown';
  switch (signal) {
    case 'start':
      return p === 'stopped' || p === 'offline';
    case 'stop':
    case 'restart':
      return p === 'running';
    case 'kill':
      return p === 'running' || p === 'starting' || p === 'stopping';
  }
}

/** Words for a job step ("create_vm" → "create vm"). */
export function stepWords(step: string | null | undefined): string {
  return step ? step.replace(/[_-]+/g, ' ') : '';
}

export const JOB_NAMES: Record<Job['type'], string> = {
  provision: 'Setting up',
  power: 'Power change',
  reinstall: 'Reinstall',
  suspend: 'Suspension',
  unsuspend: 'Unsuspension',
  terminate: 'Termination',
  snapshot: 'Snapshot',
  resize: 'Resize',
};

// Actions several products declare alike, written once: a power signal queued as a job, and the
// platform's own event feed of a service. A product lists them in its table like its own.

import { Type } from 'typebox';
import { listEvents } from '../services/events.ts';
import { isoWithOffset } from '../time.ts';
import type { ProductAction } from './actions.ts';
import { answer, EVERY_STATE, panelAction } from './panel-action.ts';

/** No parameters at all (a body with any key is refused). */
export const NO_PARAMS = Type.Object({}, { additionalProperties: false });

/**
 * A power signal on the shared routes (session POST /services/action/, token POST
 * /instances/{id}/{signal}): the service must be active and have something live to signal, then
 * the signal is a `power` job (one job at a time per service); the product's jobs table runs it.
 */
export function powerAction(name: string, description: string): ProductAction {
  return {
    name,
    method: 'mutate',
    params: NO_PARAMS,
    states: ['active'],
    description,
    surfaces: { session: 'action', token: 'action' },
    async handler(ctx) {
      await ctx.live();
      const job = await ctx.startJob('power', { signal: name });
      return { kind: 'job', job, message: `${name} sent.` };
    },
  };
}

/** The platform's events of the service, newest first, on the product's management route (every state). */
export function eventsAction(description: string): ProductAction {
  return panelAction({
    name: 'events',
    group: 'info',
    method: 'read',
    description,
    params: {},
    states: EVERY_STATE,
    handler: async (ctx) => {
      const events = await listEvents(ctx.db, ctx.service.id);
      return answer('Events loaded.', {
        events: events.map((e) => ({
          id: e.id,
          kind: e.kind,
          message: e.message,
          data: e.data,
          created_at: isoWithOffset(e.created_at),
        })),
      });
    },
  });
}

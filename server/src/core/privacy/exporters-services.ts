// The sections of a data export about services: each service with its plan, place, state, dates,
// the settings it was ordered with and the addresses it holds, its history, and the suspension and
// termination requests made for it. Never a credential: root passwords, panel passwords and console
// secrets are sealed in the database and left out, as are the upstream panels' internal ids.

import { formatPaise } from '../money.ts';
import { type Exporter, iso } from './export-kit.ts';

const services: Exporter = {
  section: 'services',
  description:
    'Your services: plan, location, state, dates, price, the settings you ordered with, addresses and history (never their passwords).',
  async collect({ db, accountId }) {
    const rows = await db
      .selectFrom('services')
      .innerJoin('plans', 'plans.id', 'services.plan_id')
      .innerJoin('locations', 'locations.id', 'services.location_id')
      .select([
        'services.id',
        'services.label',
        'services.type',
        'services.status',
        'services.price_paise',
        'services.config',
        'services.period_end',
        'services.suspend_reason',
        'services.ptr',
        'services.created_at',
        'services.activated_at',
        'services.suspended_at',
        'services.terminated_at',
        'plans.label as plan',
        'plans.name as plan_name',
        'locations.code as location',
      ])
      .where('services.account_id', '=', accountId)
      .orderBy('services.id')
      .execute();
    const ids = rows.map((s) => s.id);
    const addresses =
      ids.length === 0
        ? []
        : await db
            .selectFrom('ipv4_addresses')
            .select(['service_id', 'address'])
            .where('service_id', 'in', ids)
            .execute();
    const events =
      ids.length === 0
        ? []
        : await db
            .selectFrom('service_events')
            .select(['service_id', 'kind', 'message', 'created_at'])
            .where('service_id', 'in', ids)
            .orderBy('id')
            .execute();
    return rows.map(({ price_paise, period_end, created_at, activated_at, suspended_at, terminated_at, ...s }) => ({
      ...s,
      price: formatPaise(price_paise),
      paid_until: iso(period_end),
      created_at: iso(created_at),
      activated_at: iso(activated_at),
      suspended_at: iso(suspended_at),
      terminated_at: iso(terminated_at),
      ipv4: addresses.filter((a) => a.service_id === s.id).map((a) => a.address),
      events: events
        .filter((e) => e.service_id === s.id)
        .map((e) => ({ kind: e.kind, message: e.message, at: iso(e.created_at) })),
    }));
  },
};

const serviceRequests: Exporter = {
  section: 'service_requests',
  description: 'The suspensions and terminations you asked staff for, with your note and their decision.',
  async collect({ db, accountId }) {
    const rows = await db
      .selectFrom('service_requests')
      .select(['id', 'service_id', 'kind', 'status', 'note', 'reason', 'created_at', 'decided_at'])
      .where('account_id', '=', accountId)
      .orderBy('id')
      .execute();
    return rows.map((r) => ({ ...r, created_at: iso(r.created_at), decided_at: iso(r.decided_at) }));
  },
};

export const SERVICE_EXPORTERS: readonly Exporter[] = [services, serviceRequests];

// What a web product's stored JSON holds, read through these schemas (core/product-kit/data.ts)
// instead of cast: its plans' `specs` (checked when staff add a plan, core/catalog/specs.ts), a
// service's `config` (written by the order, core/orders/order.service.ts with ./order.ts
// serviceConfig, and by core in place, e.g. cleanup_pending) and its `external` (the hosting
// account provisioning claims and makes, ./provision.ts, read by ./account.ts). Config and
// external take keys they do not name: core adds its own to config, and a row written by an
// earlier version of provisioning must still read.

import { type Static, Type } from 'typebox';
import type { Plan, Service } from '../../../db/tables.ts';
import { intSpec, orderedConfig, readStored, StoredDataError } from '../../product-kit/data.ts';

export const webSpecs = Type.Object(
  {
    sites: intSpec(1, 1000),
    disk_gb: intSpec(1, 1024),
    mailboxes: intSpec(0, 10_000),
    databases: intSpec(0, 1000),
  },
  { additionalProperties: false },
);
export type WebSpecs = Static<typeof webSpecs>;

/**
 * A web service's config. The order requires the domain (./order.ts), so every ordered service
 * has one; the view still reads a row without it. `hostname` and `os` are null for web hosting
 * (./order.ts serviceConfig), `specs` is the plan's specs when ordered (the plan's own are read).
 */
export const webConfig = Type.Object(orderedConfig);
export type WebConfig = Static<typeof webConfig>;

/**
 * A web service's external: null before provisioning claimed anything; `{claim, marker}` once it
 * chose the username and marker, before the account is created; `{username, domain, marker}` once
 * it is; `{username, domain}` for a service provisioned before markers were recorded.
 */
export const webExternal = Type.Union([
  Type.Null(),
  Type.Object({
    claim: Type.Optional(Type.String()),
    marker: Type.Optional(Type.String()),
    username: Type.Optional(Type.String()),
    domain: Type.Optional(Type.String()),
  }),
]);
export type WebExternal = Static<typeof webExternal>;

/** The specs of a web plan. */
export const webSpecsOf = (plan: Pick<Plan, 'id' | 'specs'>): WebSpecs =>
  readStored(webSpecs, plan.specs, `web plan ${plan.id} specs`);

/** The config of a web service. */
export const webConfigOf = (service: Pick<Service, 'id' | 'config'>): WebConfig =>
  readStored(webConfig, service.config, `web service ${service.id} config`);

/** The external of a web service (null: nothing recorded yet). */
export const webExternalOf = (service: Pick<Service, 'id' | 'external'>): WebExternal =>
  readStored(webExternal, service.external, `web service ${service.id} external`);

/** The domain a web service hosts: every ordered one has it (./order.ts). */
export function webDomainOf(service: Pick<Service, 'id' | 'config'>): string {
  const { domain } = webConfigOf(service);
  if (typeof domain !== 'string') throw new StoredDataError(`web service ${service.id} config has no domain`);
  return domain;
}

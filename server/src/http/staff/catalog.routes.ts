// The staff console's inventory (CONTRACT §14; admin): locations with their stock, OS templates,
// and the IPv4 pool by range — read, and added to, through the catalog core the admin CLI uses
// (`locations list|add|close|open`, `os list|add|image|retire|unretire`, `ips list|add`:
// core/catalog/catalog-edits.ts, catalog-retire.ts, ipv4.ts), each change audited in its
// transaction (location.add|close|open, os.add|image|retire|unretire, ipv4.add_range) with the
// member's reason.

import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyInstance } from 'fastify';
import { Type } from 'typebox';
import { addRange, ipRanges } from '../../core/catalog/ipv4.ts';
import type { Deps } from '../../core/deps.ts';
import { AppError } from '../../core/errors.ts';
import { isoWithOffset } from '../../core/time.ts';
import type { OsTemplate } from '../../db/tables.ts';
import { mutationBody, okSchema } from '../client/envelopes.ts';
import { sessionErrors } from '../schemas.ts';
import { whoOfStaff } from './context.ts';
import { Reason } from './views.ts';

const tags = ['staff: catalog'];
const reasonOf = (reason: string | undefined) => reason?.trim() || null;

const LocationSchema = Type.Object(
  {
    id: Type.Integer(),
    code: Type.String(),
    name: Type.String(),
    city: Type.String(),
    country: Type.String(),
    active: Type.Boolean(),
    ipv4_free: Type.Integer({ description: 'free IPv4 addresses in its pool' }),
    slots: Type.Record(Type.String(), Type.Integer(), {
      description: 'free service slots on its usable nodes, by node kind',
    }),
    created_at: Type.String({ format: 'date-time' }),
  },
  { additionalProperties: false },
);

const OsSchema = Type.Object(
  {
    id: Type.Integer(),
    slug: Type.String(),
    name: Type.String(),
    family: Type.String(),
    version: Type.String(),
    template_vmid: Type.Integer({ description: "the hypervisor's template VM" }),
    min_disk_gb: Type.Integer(),
    image_url: Type.Union([Type.String(), Type.Null()], {
      description: 'the install image bare-metal servers boot; null: virtual servers only',
    }),
    active: Type.Boolean(),
  },
  { additionalProperties: false },
);

const osView = (o: OsTemplate) => ({
  id: o.id,
  slug: o.slug,
  name: o.name,
  family: o.family,
  version: o.version,
  template_vmid: o.template_vmid,
  min_disk_gb: o.min_disk_gb,
  image_url: o.image_url,
  active: o.active,
});

const RangeSchema = Type.Object(
  {
    location: Type.String({ description: 'location code' }),
    cidr: Type.String(),
    gateway: Type.String(),
    free: Type.Integer(),
    allocated: Type.Integer(),
    reserved: Type.Integer(),
  },
  { additionalProperties: false },
);

export async function staffCatalogRoutes(root: FastifyInstance, { deps }: { deps: Deps }): Promise<void> {
  const app = root.withTypeProvider<TypeBoxTypeProvider>();

  async function locations() {
    const [rows, stock] = await Promise.all([deps.catalog.listLocations(), deps.catalog.stock()]);
    return rows.map((l) => ({
      id: l.id,
      code: l.code,
      name: l.name,
      city: l.city,
      country: l.country,
      active: l.active,
      ipv4_free: stock.get(l.id)?.ipv4Free ?? 0,
      slots: { ...(stock.get(l.id)?.slots ?? {}) } as Record<string, number>,
      created_at: isoWithOffset(l.created_at),
    }));
  }

  app.get(
    '/locations',
    {
      schema: {
        operationId: 'staffLocations',
        tags,
        summary: 'Every location with its free IPv4 addresses and free service slots',
        response: { 200: okSchema({ locations: Type.Array(LocationSchema) }) },
      },
    },
    async () => ({ success: true as const, message: 'Locations.', locations: await locations() }),
  );

  app.post(
    '/locations',
    {
      schema: {
        operationId: 'staffLocationAction',
        tags,
        summary: 'Add a location (zone), or close or reopen one for new orders',
        description:
          'add: code, name, city, country; 422 with every field problem (a code already used among them); ' +
          'audited location.add. close: no new orders there (its services keep running; the catalog shows ' +
          'its regions region_closed); open: orders again; audited location.close / location.open (nothing ' +
          'when it already was). 404 for an unknown code.',
        body: mutationBody({
          action: Type.Union([Type.Literal('add'), Type.Literal('close'), Type.Literal('open')]),
          code: Type.String({ maxLength: 32, description: '2–32 of a–z, 0–9 and "-", e.g. mum2' }),
          name: Type.Optional(Type.String({ maxLength: 100, description: 'add: required' })),
          city: Type.Optional(Type.String({ maxLength: 100, description: 'add: required' })),
          country: Type.Optional(Type.String({ maxLength: 2, description: 'ISO 3166 code (default IN)' })),
          reason: Reason,
        }),
        response: { 200: okSchema({ location: LocationSchema }), ...sessionErrors(404, 422) },
      },
    },
    async (request) => {
      const { action, code, name, city, country } = request.body;
      const who = whoOfStaff(request);
      const reason = reasonOf(request.body.reason);
      const changed =
        action === 'add'
          ? await deps.catalog.addLocation(
              { code, name: name ?? '', city: city ?? '', ...(country ? { country } : {}) },
              who,
              reason,
            )
          : await deps.catalog.setLocationActive(code, action === 'open', who, reason);
      const location = (await locations()).find((l) => l.id === changed.id);
      if (!location) throw new AppError('not_found');
      const message = {
        add: `Location ${changed.code} added.`,
        close: `${changed.code} is closed: no new orders there.`,
        open: `${changed.code} takes orders again.`,
      }[action];
      return { success: true as const, message, location };
    },
  );

  app.get(
    '/os',
    {
      schema: {
        operationId: 'staffOsTemplates',
        tags,
        summary: 'Every OS template, with its install image for bare metal',
        response: { 200: okSchema({ os: Type.Array(OsSchema) }) },
      },
    },
    async () => ({ success: true as const, message: 'OS templates.', os: (await deps.catalog.listOs()).map(osView) }),
  );

  app.post(
    '/os',
    {
      schema: {
        operationId: 'staffOsAction',
        tags,
        summary: 'Add an OS template, set (or clear) its bare-metal install image, or retire or unretire it',
        description:
          'add: slug, name, family, version, template_vmid (the hypervisor template VM), min_disk_gb (default 10), ' +
          'image_url (optional); audited os.add. image: slug and image_url, or null to clear it (the template is ' +
          'then for virtual servers only); audited os.image with before and after. retire: new orders and ' +
          'reinstalls can no longer pick it (servers installed from it keep running), refused 409 for the last ' +
          'template offered; unretire: offered again; audited os.retire / os.unretire (nothing when it already ' +
          'was). 404 for an unknown slug.',
        body: mutationBody({
          action: Type.Union([
            Type.Literal('add'),
            Type.Literal('image'),
            Type.Literal('retire'),
            Type.Literal('unretire'),
          ]),
          slug: Type.String({ maxLength: 48 }),
          name: Type.Optional(Type.String({ maxLength: 100 })),
          family: Type.Optional(Type.String({ maxLength: 32 })),
          version: Type.Optional(Type.String({ maxLength: 32 })),
          template_vmid: Type.Optional(Type.Integer({ minimum: 0, maximum: 999_999_999 })),
          min_disk_gb: Type.Optional(Type.Integer({ minimum: 0, maximum: 100_000 })),
          image_url: Type.Optional(Type.Union([Type.String({ maxLength: 2048 }), Type.Null()])),
          reason: Reason,
        }),
        response: { 200: okSchema({ os: OsSchema }), ...sessionErrors(404, 409, 422) },
      },
    },
    async (request) => {
      const b = request.body;
      const who = whoOfStaff(request);
      const reason = reasonOf(b.reason);
      if (b.action === 'retire' || b.action === 'unretire') {
        const os = await deps.catalog.setOsActive(b.slug, b.action === 'unretire', who, reason);
        return {
          success: true as const,
          message: os.active
            ? `${os.slug} is offered again.`
            : `${os.slug} is retired: new orders and reinstalls can no longer pick it.`,
          os: osView(os),
        };
      }
      if (b.action === 'image') {
        const url = b.image_url === null ? null : b.image_url?.trim();
        if (url === undefined || url === '') throw AppError.fields({ image_url: 'give the URL, or null to clear it' });
        const os = await deps.catalog.setOsImage(b.slug, url, who, reason);
        return {
          success: true as const,
          message: os.image_url ? `${os.slug} installs from ${os.image_url}.` : `${os.slug} has no install image now.`,
          os: osView(os),
        };
      }
      // Every field problem at once: what is missing is refused by the core's own checks.
      const os = await deps.catalog.addOs(
        {
          slug: b.slug,
          name: b.name ?? '',
          family: b.family ?? '',
          version: b.version ?? '',
          templateVmid: b.template_vmid ?? Number.NaN,
          ...(b.min_disk_gb === undefined ? {} : { minDiskGb: b.min_disk_gb }),
          ...(b.image_url ? { imageUrl: b.image_url.trim() } : {}),
        },
        who,
        reason,
      );
      return { success: true as const, message: `OS template ${os.slug} added.`, os: osView(os) };
    },
  );

  app.get(
    '/ip-ranges',
    {
      schema: {
        operationId: 'staffIpRanges',
        tags,
        summary: "The IPv4 pool by range (a location's addresses of one gateway and prefix), with counts by state",
        response: { 200: okSchema({ ranges: Type.Array(RangeSchema) }) },
      },
    },
    async () => ({ success: true as const, message: 'IPv4 ranges.', ranges: await ipRanges(deps.database.db) }),
  );

  app.post(
    '/ip-ranges',
    {
      schema: {
        operationId: 'staffIpRangeAction',
        tags,
        summary: "Add an IPv4 range to a location's pool (network, broadcast and gateway excluded)",
        description:
          'As `npm run admin -- ips add`: a /20 to /30; the gateway is the first host unless given. Addresses ' +
          'already in this location are skipped; a range overlapping another location is 409 and adds nothing. ' +
          'Audited ipv4.add_range (the location).',
        body: mutationBody({
          action: Type.Literal('add'),
          location: Type.String({ maxLength: 32, description: 'location code' }),
          cidr: Type.String({ maxLength: 43, description: 'e.g. 203.0.113.0/26' }),
          gateway: Type.Optional(Type.String({ maxLength: 39 })),
          reason: Reason,
        }),
        response: {
          200: okSchema({
            range: Type.Object(
              {
                location: Type.String(),
                cidr: Type.String(),
                gateway: Type.String(),
                added: Type.Integer(),
                skipped: Type.Integer(),
              },
              { additionalProperties: false },
            ),
          }),
          ...sessionErrors(404, 409, 422),
        },
      },
    },
    async (request) => {
      const { cidr, gateway } = request.body;
      const location = await deps.catalog.location(request.body.location.trim());
      const added = await addRange(deps.database.db, location.id, cidr.trim(), gateway?.trim() || undefined, {
        who: whoOfStaff(request),
        reason: reasonOf(request.body.reason),
      });
      return {
        success: true as const,
        message: `${location.code} ${added.cidr} (gateway ${added.gateway}): ${added.added} added, ${added.skipped} already present.`,
        range: { location: location.code, ...added },
      };
    },
  );
}

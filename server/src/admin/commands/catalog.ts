// plans list|add|disable|enable, locations list|add|close|open, os list|add|image|retire|unretire,
// ips add|list (CONTRACT §1).

import { byOperator } from '../../core/audit/audit.ts';
import { addRange, poolSummary } from '../../core/catalog/ipv4.ts';
import { AppError } from '../../core/errors.ts';
import { formatPaise } from '../../core/money.ts';
import { PLAN_TYPES, type PlanType } from '../../db/tables.ts';
import { type Command, jsonOption, requiredOption, table, UsageError } from '../command.ts';

/** The os_templates.image_url check (migration 0013), word for word: http(s)://, no whitespace, ≤ 2048. */
const IMAGE_URL = /^https?:\/\/[^\s]+$/;

/**
 * An install image URL as the column will take it, refused here (exit 1, like the catalog's own
 * checks) rather than by the database: the catalog reads URLs leniently (`HTTP://…`, `http:host/…`).
 */
function imageUrlOf(value: string): string {
  if (!IMAGE_URL.test(value) || value.length > 2048) {
    throw AppError.fields({
      image_url: 'must start with http:// or https:// (lower case), without spaces, at most 2048 characters',
    });
  }
  return value;
}

export const catalogCommands: Command[] = [
  {
    noun: 'plans',
    verb: 'list',
    summary: 'Every plan, active or not, with its regions and availability',
    async run(deps) {
      const rows = (await deps.catalog.listPlans()).map(({ plan, regions, available }) => ({
        id: plan.id,
        label: plan.label,
        type: plan.type,
        name: plan.name,
        price: formatPaise(plan.price_paise),
        active: plan.active,
        available,
        regions: regions.map((r) => (r.available ? r.location.code : `${r.location.code}(${r.reason})`)).join(' '),
        specs: plan.specs,
      }));
      return { json: rows, text: table(rows, ['id', 'label', 'type', 'price', 'active', 'available', 'regions']) };
    },
  },
  {
    noun: 'plans',
    verb: 'add',
    summary: "Add a plan; --specs holds its type's keys (a missing or unknown one is named in the answer)",
    args: ['LABEL'],
    options: {
      name: { type: 'string', required: true, description: 'display name' },
      type: { type: 'string', required: true, description: PLAN_TYPES.join(', ') },
      price: { type: 'string', required: true, description: 'monthly price in rupees, e.g. 799 or 799.00' },
      specs: {
        type: 'string',
        required: true,
        description: 'JSON object, e.g. {"vcpu":2,"ram_mb":4096,"disk_gb":80,"bandwidth_tb":3}',
      },
      regions: { type: 'string', required: true, description: 'comma-separated location codes' },
    },
    async run(deps, { args, options }) {
      const plan = await deps.catalog.addPlan(
        {
          label: args[0] as string,
          name: requiredOption(options, 'name'),
          type: requiredOption(options, 'type') as PlanType,
          price: requiredOption(options, 'price'),
          specs: jsonOption(requiredOption(options, 'specs'), 'specs'),
          regions: requiredOption(options, 'regions')
            .split(',')
            .map((r) => r.trim())
            .filter(Boolean),
        },
        byOperator(),
      );
      return {
        json: { id: plan.id, label: plan.label, price: formatPaise(plan.price_paise) },
        text: `added plan ${plan.id} ${plan.label} at ₹${formatPaise(plan.price_paise)}/month`,
      };
    },
  },
  {
    noun: 'plans',
    verb: 'disable',
    summary: 'Stop listing and selling a plan (its services keep running)',
    args: ['PLAN'],
    async run(deps, { args }) {
      const plan = await deps.catalog.setPlanActive(args[0] as string, false, byOperator());
      return { json: { id: plan.id, label: plan.label, active: plan.active }, text: `disabled ${plan.label}` };
    },
  },
  {
    noun: 'plans',
    verb: 'enable',
    summary: 'List and sell a disabled plan again',
    args: ['PLAN'],
    async run(deps, { args }) {
      const plan = await deps.catalog.setPlanActive(args[0] as string, true, byOperator());
      return { json: { id: plan.id, label: plan.label, active: plan.active }, text: `enabled ${plan.label}` };
    },
  },
  {
    noun: 'locations',
    verb: 'list',
    summary: 'Locations with their IPv4 and node stock',
    async run(deps) {
      const [locations, stock] = await Promise.all([deps.catalog.listLocations(), deps.catalog.stock()]);
      const rows = locations.map((l) => {
        const s = stock.get(l.id);
        return {
          id: l.id,
          code: l.code,
          name: l.name,
          city: l.city,
          active: l.active,
          ipv4_free: s?.ipv4Free ?? 0,
          slots: s?.slots ?? {},
        };
      });
      return { json: rows, text: table(rows, ['id', 'code', 'name', 'city', 'active', 'ipv4_free', 'slots']) };
    },
  },
  {
    noun: 'locations',
    verb: 'add',
    summary: 'Add a location (zone)',
    args: ['CODE'],
    options: {
      name: { type: 'string', required: true, description: 'display name, e.g. "Mumbai 2"' },
      city: { type: 'string', required: true, description: 'city' },
      country: { type: 'string', description: 'ISO country code (default IN)' },
    },
    async run(deps, { args, options }) {
      const location = await deps.catalog.addLocation(
        {
          code: args[0] as string,
          name: requiredOption(options, 'name'),
          city: requiredOption(options, 'city'),
          ...(typeof options.country === 'string' ? { country: options.country } : {}),
        },
        byOperator(),
      );
      return { json: location, text: `added location ${location.code}` };
    },
  },
  {
    noun: 'locations',
    verb: 'close',
    summary: 'Stop taking orders in a location (its services keep running; the catalog shows it closed)',
    args: ['CODE'],
    async run(deps, { args }) {
      const location = await deps.catalog.setLocationActive(args[0] as string, false, byOperator());
      return { json: location, text: `closed ${location.code}: no new orders there` };
    },
  },
  {
    noun: 'locations',
    verb: 'open',
    summary: 'Take orders in a closed location again',
    args: ['CODE'],
    async run(deps, { args }) {
      const location = await deps.catalog.setLocationActive(args[0] as string, true, byOperator());
      return { json: location, text: `opened ${location.code}` };
    },
  },
  {
    noun: 'os',
    verb: 'list',
    summary: 'OS templates',
    async run(deps) {
      const rows = await deps.catalog.listOs();
      return { json: rows, text: table(rows, ['id', 'slug', 'name', 'template_vmid', 'active', 'image_url']) };
    },
  },
  {
    noun: 'os',
    verb: 'add',
    summary: "Add an OS template (the id of the hypervisor's template VM; --image-url: bare metal installs it)",
    args: ['SLUG'],
    options: {
      name: { type: 'string', required: true, description: 'display name' },
      family: { type: 'string', required: true, description: 'e.g. ubuntu' },
      version: { type: 'string', required: true, description: 'e.g. 24.04' },
      'template-vmid': { type: 'string', required: true, description: "the hypervisor's template VM id" },
      'min-disk': { type: 'string', description: 'minimum disk in GB (default 10)' },
      'image-url': {
        type: 'string',
        description: 'http(s) URL of the install image a bare-metal server boots (none: virtual servers only)',
      },
    },
    async run(deps, { args, options }) {
      const os = await deps.catalog.addOs(
        {
          slug: args[0] as string,
          name: requiredOption(options, 'name'),
          family: requiredOption(options, 'family'),
          version: requiredOption(options, 'version'),
          templateVmid: Number(requiredOption(options, 'template-vmid')),
          ...(options['min-disk'] !== undefined ? { minDiskGb: Number(options['min-disk']) } : {}),
          ...(typeof options['image-url'] === 'string' ? { imageUrl: imageUrlOf(options['image-url']) } : {}),
        },
        byOperator(),
      );
      return { json: os, text: `added OS ${os.slug}${os.image_url ? ` (install image ${os.image_url})` : ''}` };
    },
  },
  {
    noun: 'os',
    verb: 'image',
    summary: 'Set the install image of an OS template (what bare-metal servers boot), or remove it with --clear',
    args: ['SLUG'],
    optionalArgs: ['URL'],
    options: {
      clear: { type: 'boolean', description: 'remove the image: the template is then for virtual servers only' },
    },
    async run(deps, { args, options }) {
      const [slug, url] = args as [string, string | undefined];
      if ((url === undefined) === (options.clear !== true)) throw new UsageError('give either a URL or --clear');
      const os = await deps.catalog.setOsImage(slug, url === undefined ? null : imageUrlOf(url), byOperator());
      return {
        json: os,
        text: os.image_url ? `${os.slug} installs from ${os.image_url}` : `${os.slug} has no install image now`,
      };
    },
  },
  {
    noun: 'os',
    verb: 'retire',
    summary: 'Stop offering an OS template to new orders and reinstalls (installed servers keep running)',
    args: ['SLUG'],
    async run(deps, { args }) {
      const os = await deps.catalog.setOsActive(args[0] as string, false, byOperator());
      return { json: os, text: `retired ${os.slug}: new orders and reinstalls can no longer pick it` };
    },
  },
  {
    noun: 'os',
    verb: 'unretire',
    summary: 'Offer a retired OS template again',
    args: ['SLUG'],
    async run(deps, { args }) {
      const os = await deps.catalog.setOsActive(args[0] as string, true, byOperator());
      return { json: os, text: `offering ${os.slug} again` };
    },
  },
  {
    noun: 'ips',
    verb: 'add',
    summary: "Add an IPv4 range to a location's pool (network, broadcast and gateway excluded)",
    args: ['LOCATION', 'CIDR'],
    options: { gateway: { type: 'string', description: 'gateway address (default: the first host)' } },
    async run(deps, { args, options }) {
      const location = await deps.catalog.location(args[0] as string);
      const result = await addRange(
        deps.database.db,
        location.id,
        args[1] as string,
        options.gateway as string | undefined,
        { who: byOperator() },
      );
      return {
        json: { location: location.code, ...result },
        text: `${location.code} ${result.cidr} (gateway ${result.gateway}): ${result.added} added, ${result.skipped} already present`,
      };
    },
  },
  {
    noun: 'ips',
    verb: 'list',
    summary: 'IPv4 stock per location and state',
    async run(deps) {
      const rows = (await poolSummary(deps.database.db)).map((r) => ({ ...r, count: Number(r.count) }));
      return { json: rows, text: table(rows, ['location', 'status', 'count']) };
    },
  },
];

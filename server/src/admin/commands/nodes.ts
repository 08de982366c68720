// nodes list|add (CONTRACT §1). Credentials go in as JSON, from a file or standard input (never
// the command line, where other local users can read them), and are stored encrypted; no
// command prints them back.

import type { ProductRegistry } from '../../core/product-kit/registry.ts';
import { isoWithOffset } from '../../core/time.ts';
import type { NodeKind } from '../../db/tables.ts';
import { DRIVERS, nodeKinds } from '../../upstreams/registry.ts';
import type { InputReader } from '../command.ts';
import { type Command, type CommandInput, jsonOption, requiredOption, table, UsageError } from '../command.ts';

const CREDENTIALS_USAGE =
  'give the credentials JSON with --credentials-file PATH (a file only you can read) or --credentials - (standard input)';

/** The credentials JSON text, from the file or standard input; refused on the command line itself. */
function readCredentials(options: CommandInput['options'], inputs: InputReader): Promise<string> {
  const inline = options.credentials;
  const file = options['credentials-file'];
  if (inline !== undefined && file !== undefined)
    throw new UsageError(`--credentials and --credentials-file exclude each other; ${CREDENTIALS_USAGE}`);
  if (typeof file === 'string' && file !== '') return inputs.secretFile(file);
  if (inline === '-') return inputs.stdin();
  if (inline === undefined) throw new UsageError(`credentials are required: ${CREDENTIALS_USAGE}`);
  throw new UsageError(
    `--credentials takes only "-" (read standard input): a secret on the command line is readable by other users and kept in shell history; ${CREDENTIALS_USAGE}`,
  );
}

function credentialsJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    throw new UsageError('the credentials must be a JSON object, e.g. {"token_id":"…","token_secret":"…"}');
  }
}

/**
 * A node a service holds whole (its product's `exclusiveNode`: a redfish node is one machine) has
 * capacity 1 unless given as 0 (out of stock); other kinds must say.
 */
function capacityOf(products: ProductRegistry, options: CommandInput['options']): number {
  const kind = requiredOption(options, 'kind');
  const given = options.capacity;
  if (products.all.some((p) => p.nodeKind === kind && p.exclusiveNode)) {
    if (given === undefined) return 1;
    if (given !== '0' && given !== '1')
      throw new UsageError(`a ${kind} node is one machine: --capacity is 1 (the default) or 0 (out of stock)`);
    return Number(given);
  }
  return Number(requiredOption(options, 'capacity'));
}

export const nodeCommands: Command[] = [
  {
    noun: 'nodes',
    verb: 'list',
    summary: 'Upstream nodes with their health (credentials are never shown)',
    async run(deps) {
      const [nodes, locations] = await Promise.all([deps.nodes.list(), deps.catalog.listLocations()]);
      const rows = nodes.map((n) => ({
        id: n.id,
        name: n.name,
        kind: n.kind,
        location: locations.find((l) => l.id === n.location_id)?.code,
        endpoint: n.endpoint,
        capacity: n.capacity,
        active: n.active,
        health: n.health,
        checked_at: n.checked_at ? isoWithOffset(n.checked_at) : null,
        detail: n.health_detail,
      }));
      return {
        json: rows,
        text: table(rows, ['id', 'name', 'kind', 'location', 'endpoint', 'capacity', 'health', 'checked_at']),
      };
    },
  },
  {
    noun: 'nodes',
    verb: 'add',
    summary: `Add a node: ${nodeKinds()
      .map((kind) => `${kind} {${DRIVERS[kind].credentials.join(',')}}`)
      .join(', ')}`,
    args: ['NAME'],
    options: {
      kind: { type: 'string', required: true, description: nodeKinds().join(', ') },
      location: { type: 'string', required: true, description: 'location code' },
      endpoint: {
        type: 'string',
        required: true,
        description: 'API base URL, e.g. https://pve1.example.in:8006 (redfish: the BMC, https://bmc-r12.example.in)',
      },
      'credentials-file': {
        type: 'string',
        description: 'file holding the credentials JSON object (mode 0600; stored encrypted)',
      },
      credentials: { type: 'string', description: '"-": read the credentials JSON object from standard input' },
      settings: { type: 'string', description: 'JSON object, e.g. {"node":"pve1","storage":"local-lvm"}' },
      capacity: {
        type: 'string',
        description:
          'how many services it may carry (required; redfish: one machine, 1 by default, 0 keeps it out of stock)',
      },
    },
    async readInputs(options, inputs) {
      await readCredentials(options, inputs);
    },
    async run(deps, { args, options, inputs }) {
      const credentials = await readCredentials(options, inputs);
      const node = await deps.nodes.add({
        name: args[0] as string,
        kind: requiredOption(options, 'kind') as NodeKind,
        locationCode: requiredOption(options, 'location'),
        endpoint: requiredOption(options, 'endpoint'),
        credentials: credentialsJson(credentials),
        settings: jsonOption(options.settings, 'settings') ?? {},
        capacity: capacityOf(deps.products, options),
      });
      return {
        json: { id: node.id, name: node.name, kind: node.kind, endpoint: node.endpoint },
        text: `added ${node.kind} node ${node.name} (${node.id})`,
      };
    },
  },
  {
    noun: 'nodes',
    verb: 'check',
    summary: 'Probe every node (or one) and record its health',
    optionalArgs: ['NODE'],
    async run(deps, { args }) {
      const rows = await deps.serviceStaff.checkNodes(args[0]);
      return { json: rows, text: table(rows, ['name', 'kind', 'health', 'detail']) };
    },
  },
];

// nodes list|add (CONTRACT §1). Credentials go in as JSON and are stored encrypted; no command
// prints them back.

import { isoWithOffset } from '../../core/time.ts';
import type { NodeKind } from '../../db/tables.ts';
import { type Command, jsonOption, requiredOption, table } from '../command.ts';

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
    summary: 'Add a node: proxmox {token_id,token_secret}, pterodactyl {api_key}, cpanel {username,api_token}',
    args: ['NAME'],
    options: {
      kind: { type: 'string', required: true, description: 'proxmox, pterodactyl or cpanel' },
      location: { type: 'string', required: true, description: 'location code' },
      endpoint: { type: 'string', required: true, description: 'API base URL, e.g. https://pve1.example.in:8006' },
      credentials: { type: 'string', required: true, description: 'JSON object (stored encrypted)' },
      settings: { type: 'string', description: 'JSON object, e.g. {"node":"pve1","storage":"local-lvm"}' },
      capacity: { type: 'string', required: true, description: 'how many services it may carry' },
    },
    async run(deps, { args, options }) {
      const node = await deps.nodes.add({
        name: args[0] as string,
        kind: requiredOption(options, 'kind') as NodeKind,
        locationCode: requiredOption(options, 'location'),
        endpoint: requiredOption(options, 'endpoint'),
        credentials: jsonOption(requiredOption(options, 'credentials'), 'credentials'),
        settings: jsonOption(options.settings, 'settings') ?? {},
        capacity: Number(requiredOption(options, 'capacity')),
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

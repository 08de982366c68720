// Upstream nodes: the hypervisors and panels services run on, of the kinds upstreams/registry.ts
// lists (with the credentials each kind needs). Their API credentials are sealed with SECRET_KEY
// (bound to the node's name) and opened only to build a driver; nothing that lists nodes ever
// shows them.

import type { Kysely } from 'kysely';
import type { DB, NodeKind, NodeRow } from '../../db/tables.ts';
import { kindEntry, nodeKinds } from '../../upstreams/registry.ts';
import type { Who } from '../activity/activity.ts';
import { auditAs } from '../audit/audit.ts';
import { decryptSecret, encryptSecret } from '../crypto/secrets.ts';
import { AppError } from '../errors.ts';
import * as nodes from './node.repository.ts';

export interface NewNode {
  name: string;
  kind: NodeKind;
  locationCode: string;
  endpoint: string;
  credentials: unknown;
  settings?: unknown;
  capacity: number;
}

/** A node as demo mode puts it (core/nodes/node.service.ts `put`): already checked by its caller. */
export interface PutNode {
  name: string;
  kind: NodeKind;
  locationId: number;
  endpoint: string;
  credentials: object;
  settings: object;
  capacity: number;
}

const KINDS = nodeKinds();
/** "a, b or c" */
const KIND_LIST = `${KINDS.slice(0, -1).join(', ')} or ${KINDS.at(-1)}`;

function aad(name: string): string {
  return `node-credentials:${name}`;
}

export function createNodeService({ db, secretKey }: { db: Kysely<DB>; secretKey: Buffer }) {
  return {
    async add(input: NewNode): Promise<NodeRow> {
      const fields: Record<string, string> = {};
      if (!/^[a-z0-9][a-z0-9.-]{1,62}$/.test(input.name)) fields.name = 'must be 2–63 of a–z, 0–9, "." and "-"';
      if (!KINDS.includes(input.kind)) fields.kind = `must be ${KIND_LIST}`;
      try {
        const url = new URL(input.endpoint);
        if (url.protocol !== 'https:' && url.protocol !== 'http:') fields.endpoint = 'must be an http(s) URL';
      } catch {
        fields.endpoint = 'must be an http(s) URL';
      }
      if (!Number.isInteger(input.capacity) || input.capacity < 0) fields.capacity = 'must be a whole number';
      const credentials = input.credentials as Record<string, unknown> | null;
      if (credentials === null || typeof credentials !== 'object' || Array.isArray(credentials)) {
        fields.credentials = 'must be a JSON object';
      } else if (fields.kind === undefined) {
        const missing = kindEntry(input.kind).credentials.filter(
          (k) => typeof credentials[k] !== 'string' || credentials[k] === '',
        );
        if (missing.length > 0) fields.credentials = `needs ${missing.join(', ')}`;
      }
      const settings = input.settings ?? {};
      if (settings === null || typeof settings !== 'object' || Array.isArray(settings))
        fields.settings = 'must be a JSON object';
      const location = await db
        .selectFrom('locations')
        .select('id')
        .where('code', '=', input.locationCode)
        .executeTakeFirst();
      if (!location) fields.location = `no location "${input.locationCode}"`;
      if (Object.keys(fields).length > 0) throw AppError.fields(fields);
      try {
        return await nodes.insert(db, {
          name: input.name,
          kind: input.kind,
          location_id: (location as { id: number }).id,
          endpoint: input.endpoint.replace(/\/+$/, ''),
          credentials_sealed: encryptSecret(secretKey, JSON.stringify(credentials), aad(input.name)),
          settings: JSON.stringify(settings),
          capacity: input.capacity,
        });
      } catch (error) {
        if ((error as { code?: string }).code === '23505') throw AppError.fields({ name: 'is already used' });
        throw error;
      }
    },

    /**
     * Add the node or refresh the one of that name, its credentials sealed as `add` seals them,
     * unchecked: for demo mode's own nodes (staff add nodes with `add`).
     */
    async put(input: PutNode): Promise<void> {
      await nodes.upsert(db, {
        name: input.name,
        kind: input.kind,
        location_id: input.locationId,
        endpoint: input.endpoint,
        credentials_sealed: encryptSecret(secretKey, JSON.stringify(input.credentials), aad(input.name)),
        settings: JSON.stringify(input.settings),
        capacity: input.capacity,
      });
    },

    list: () => nodes.list(db),

    async get(id: number): Promise<NodeRow> {
      const node = await nodes.findById(db, id);
      if (!node) throw new AppError('not_found', { message: `No node ${id}.` });
      return node;
    },

    /** The decrypted credentials of a node, to build its driver. Never log or return them. */
    credentials(node: Pick<NodeRow, 'name' | 'credentials_sealed'>): Record<string, string> {
      return JSON.parse(decryptSecret(secretKey, node.credentials_sealed, aad(node.name))) as Record<string, string>;
    },

    /**
     * Drain (`active` false: no new service is placed on it; those on it keep running) or undrain
     * a node. Audited with a staff `who`; 409 when it already is so.
     */
    async setActive(id: number, active: boolean, reason: string | null, who?: Who): Promise<NodeRow> {
      return db.transaction().execute(async (trx) => {
        const node = await trx.selectFrom('nodes').selectAll().where('id', '=', id).forUpdate().executeTakeFirst();
        if (!node) throw new AppError('not_found', { message: `No node ${id}.` });
        if (node.active === active)
          throw new AppError('conflict', { message: `Node ${node.name} is already ${active ? 'active' : 'drained'}.` });
        const updated = await trx
          .updateTable('nodes')
          .set({ active })
          .where('id', '=', id)
          .returningAll()
          .executeTakeFirstOrThrow();
        await auditAs(trx, who, {
          action: active ? 'node.undrain' : 'node.drain',
          targetType: 'node',
          targetId: id,
          before: { active: node.active },
          after: { active },
          reason,
          at: new Date(),
        });
        return updated;
      });
    },

    async setHealth(id: number, health: 'up' | 'down', detail: string | null): Promise<void> {
      await nodes.setHealth(db, id, health, detail, new Date());
    },
  };
}

export type NodeService = ReturnType<typeof createNodeService>;

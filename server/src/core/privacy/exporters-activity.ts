// The sections of a data export that the activity log and passkeys add (CONTRACT §11): every event
// the account's activity log still holds (a year of them), and the passkeys by name — never a
// credential's public key or id, which are of no use outside Hostplane.

import type { Exporter } from './export-kit.ts';
import { iso } from './export-kit.ts';

const activity: Exporter = {
  section: 'activity',
  description:
    'Your activity log: sign-ins, security changes, orders, payments, deposits and staff actions on your account, with time, address and who (kept a year).',
  async collect({ db, accountId }) {
    const rows = await db
      .selectFrom('account_activity')
      .select(['id', 'type', 'at', 'ip', 'actor', 'staff_name', 'summary', 'details'])
      .where('account_id', '=', accountId)
      .orderBy('id')
      .execute();
    return rows.map((r) => ({
      id: Number(r.id),
      type: r.type,
      at: iso(r.at),
      ip: r.ip,
      actor: r.actor,
      staff_name: r.staff_name,
      summary: r.summary,
      details: r.details,
    }));
  },
};

const passkeys: Exporter = {
  section: 'passkeys',
  description: 'Your passkeys: name, when added and last used (never the credential or its public key).',
  async collect({ db, accountId }) {
    const rows = await db
      .selectFrom('passkeys')
      .select(['id', 'name', 'created_at', 'last_used_at'])
      .where('account_id', '=', accountId)
      .orderBy('id')
      .execute();
    return rows.map((p) => ({
      id: p.id,
      name: p.name,
      created_at: iso(p.created_at),
      last_used_at: iso(p.last_used_at),
    }));
  },
};

export const ACTIVITY_EXPORTERS: readonly Exporter[] = [passkeys, activity];

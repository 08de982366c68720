// Ending sessions from the sessions list (CONTRACT §11): one by its public id, or every other one,
// each logged as one `session_revoked` event in the same transaction. (A password change, a reset,
// a suspension or a 2FA reset end sessions too: their own events say so.)

import type { Kysely } from 'kysely';
import type { DB } from '../../db/tables.ts';
import { recordActivity, type Who } from '../activity/activity.ts';
import type { Clock } from '../time.ts';
import { deviceOf } from './device.ts';

export interface RevokeOptions {
  db: Kysely<DB>;
  clock: Clock;
}

/** End one session of an account, named by its public id; false (nothing logged) when it has none such. */
export async function revokeOneSession(
  options: RevokeOptions,
  accountId: number,
  publicId: number,
  current: boolean,
  who: Who,
): Promise<boolean> {
  return options.db.transaction().execute(async (trx) => {
    const ended = await trx
      .deleteFrom('sessions')
      .where('account_id', '=', accountId)
      .where('public_id', '=', publicId)
      .returning(['user_agent', 'ip'])
      .executeTakeFirst();
    if (!ended) return false;
    const device = deviceOf(ended.user_agent);
    await recordActivity(trx, {
      accountId,
      type: 'session_revoked',
      who,
      summary: current
        ? `Signed this session out from the sessions list (${device})`
        : `Signed out a session (${device}${ended.ip ? `, from ${ended.ip}` : ''})`,
      details: { session: publicId, device, session_ip: ended.ip, current },
      at: options.clock(),
    });
    return true;
  });
}

/** End every session of the account but `keepIdHash`'s; one event when any ended. */
export async function revokeOtherSessions(
  options: RevokeOptions,
  accountId: number,
  keepIdHash: string,
  who: Who,
): Promise<number> {
  return options.db.transaction().execute(async (trx) => {
    const ended = await trx
      .deleteFrom('sessions')
      .where('account_id', '=', accountId)
      .where('id_hash', '<>', keepIdHash)
      .returning('public_id')
      .execute();
    if (ended.length > 0) {
      await recordActivity(trx, {
        accountId,
        type: 'session_revoked',
        who,
        summary: `Signed out every other session (${ended.length})`,
        details: { sessions_ended: ended.length, sessions: ended.map((s) => s.public_id) },
        at: options.clock(),
      });
    }
    return ended.length;
  });
}

// Staff turning a customer's two-factor sign-in off (`npm run admin -- accounts 2fa-reset`,
// CONTRACT §11): the factor and recovery codes go, every session ends, the customer is mailed and
// the activity log says who did it — one transaction.

import type { Kysely } from 'kysely';
import type { DB } from '../../db/tables.ts';
import { recordActivity, type Who } from '../activity/activity.ts';
import { auditAs } from '../audit/audit.ts';
import type { Bus } from '../bus.ts';
import type { Mailer } from '../mail/mailer.ts';
import type { Clock } from '../time.ts';
import { counted } from '../words.ts';
import { destroyAccountSessions } from './sessions.ts';

/**
 * Staff: turn two-factor sign-in off, delete the recovery codes, end every session (consoles
 * close) and mail the customer, in one transaction.
 */
export async function staffResetTwoFactor(
  options: { db: Kysely<DB>; bus: Bus; mailer: Mailer; clock: Clock },
  account: { id: number; email: string; name: string },
  who: Who,
): Promise<{ wasOn: boolean; endedSessions: number }> {
  return options.db.transaction().execute(async (trx) => {
    const removed = await trx
      .deleteFrom('two_factor')
      .where('account_id', '=', account.id)
      .returning('enabled_at')
      .execute();
    await trx.deleteFrom('recovery_codes').where('account_id', '=', account.id).execute();
    const endedSessions = await destroyAccountSessions(trx, account.id);
    await options.bus.publish(trx, { topic: 'access_revoked', id: account.id });
    await options.mailer.queue(trx, account.email, { template: 'two_factor_reset', name: account.name }, account.id);
    const wasOn = removed.some((r) => r.enabled_at !== null);
    await recordActivity(trx, {
      accountId: account.id,
      type: 'two_factor_reset',
      who,
      summary: wasOn
        ? `Hostplane staff turned two-factor sign-in off; ${counted(endedSessions, 'session')} signed out`
        : `Hostplane staff reset two-factor sign-in (it was not on); ${counted(endedSessions, 'session')} signed out`,
      details: { was_on: wasOn, sessions_ended: endedSessions },
      at: options.clock(),
    });
    await auditAs(trx, who, {
      action: 'account.two_factor_reset',
      targetType: 'account',
      targetId: account.id,
      before: { two_factor: wasOn },
      after: { two_factor: false, sessions_ended: endedSessions },
      at: options.clock(),
    });
    return { wasOn, endedSessions };
  });
}

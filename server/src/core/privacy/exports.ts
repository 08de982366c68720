// Data exports (CONTRACT §11): a customer asks for an archive of their account, at most one an hour;
// the `account.export` job builds it (./exporters.ts), seals it (./archive-seal.ts) and mails a link
// to the panel's privacy page; the archive is downloadable by a session of that account for 24 hours
// after it was built, and the maintenance sweep then deletes it.

import { join } from 'node:path';
import { sql } from 'kysely';
import type { AccountExport, ExportStatus } from '../../db/tables.ts';
import { byClient, recordActivity, SYSTEM, type Who } from '../activity/activity.ts';
import { uploadDirs } from '../deposits/uploads.ts';
import { AppError } from '../errors.ts';
import type { JobContext } from '../jobs/queue.ts';
import { counted } from '../words.ts';
import { openArchive, sealArchive } from './archive-seal.ts';
import { buildArchive, EXPORTERS } from './exporters.ts';
import { exportReadyMail } from './mails.ts';
import { DAY_MS, HOUR_MS, type PrivacyOptions } from './options.ts';

/** How long an archive can be downloaded once built. */
export const EXPORT_TTL_MS = DAY_MS;
/** One export an hour per account (failed ones do not count). */
export const EXPORT_INTERVAL_MS = HOUR_MS;

/** An export as the customer sees it: never the archive's bytes. */
export type ExportRow = Omit<AccountExport, 'archive'>;
export type ExportState = ExportStatus | 'expired';

const LISTED = [
  'id',
  'account_id',
  'status',
  'include_proofs',
  'bytes',
  'created_at',
  'finished_at',
  'expires_at',
] as const;

export function exportState(row: ExportRow, now: Date): ExportState {
  return row.status === 'ready' && row.expires_at !== null && row.expires_at <= now ? 'expired' : row.status;
}

/** Queue a new export, or 429 with when the next one may be asked for. */
async function request(
  options: PrivacyOptions,
  accountId: number,
  includeProofs: boolean,
  who: Who,
): Promise<ExportRow> {
  const { db, clock } = options;
  return db.transaction().execute(async (trx) => {
    // The account's row serialises two requests of the same account: only one passes the check.
    await sql`select id from accounts where id = ${accountId} for update`.execute(trx);
    const now = clock();
    const last = await trx
      .selectFrom('account_exports')
      .select('created_at')
      .where('account_id', '=', accountId)
      .where('status', '<>', 'failed')
      .orderBy('created_at', 'desc')
      .limit(1)
      .executeTakeFirst();
    const wait = last ? last.created_at.getTime() + EXPORT_INTERVAL_MS - now.getTime() : 0;
    if (wait > 0) {
      const seconds = Math.ceil(wait / 1000);
      throw new AppError('rate_limited', {
        message: `You can ask for one export an hour; try again in ${counted(Math.ceil(seconds / 60), 'minute')}.`,
        retryAfter: seconds,
        details: { retry_after: seconds },
      });
    }
    const row = await trx
      .insertInto('account_exports')
      .values({ account_id: accountId, include_proofs: includeProofs, created_at: now })
      .returning(LISTED)
      .executeTakeFirstOrThrow();
    await options.jobs.enqueue(trx, 'account.export', { exportId: row.id });
    await recordActivity(trx, {
      accountId,
      type: 'export_requested',
      who,
      summary: includeProofs ? 'Data export requested (with deposit proofs)' : 'Data export requested',
      details: { export_id: row.id, include_proofs: includeProofs },
      at: now,
    });
    return row;
  });
}

/** The `account.export` job: build, seal and store the archive, and mail the customer. */
async function build(
  options: PrivacyOptions,
  exportId: number,
  context: Pick<JobContext, 'lastAttempt' | 'logger'>,
): Promise<void> {
  const { db, clock } = options;
  const row = await db.selectFrom('account_exports').select(LISTED).where('id', '=', exportId).executeTakeFirst();
  if (!row || row.status === 'ready' || row.status === 'failed') return;
  const account = await db
    .selectFrom('accounts')
    .select(['id', 'name', 'email', 'deleted_at'])
    .where('id', '=', row.account_id)
    .executeTakeFirstOrThrow();
  if (account.deleted_at !== null) {
    await db
      .updateTable('account_exports')
      .set({ status: 'failed', finished_at: clock() })
      .where('id', '=', exportId)
      .execute();
    return;
  }
  await db.updateTable('account_exports').set({ status: 'building' }).where('id', '=', exportId).execute();
  try {
    const deposits = uploadDirs(options.dataDir).deposits;
    const archive = await buildArchive(
      {
        db,
        accountId: row.account_id,
        includeProofs: row.include_proofs,
        proofPath: (file) => join(deposits, file),
        now: clock(),
      },
      EXPORTERS,
    );
    const json = `${JSON.stringify(archive, null, 2)}\n`;
    const sealed = sealArchive(options.secretKey, exportId, json);
    const finished = clock();
    const expires = new Date(finished.getTime() + EXPORT_TTL_MS);
    await db.transaction().execute(async (trx) => {
      const done = await trx
        .updateTable('account_exports')
        .set({
          status: 'ready',
          archive: sealed,
          bytes: Buffer.byteLength(json),
          finished_at: finished,
          expires_at: expires,
        })
        .where('id', '=', exportId)
        .where('status', 'in', ['queued', 'building'])
        .executeTakeFirst();
      if (Number(done.numUpdatedRows) === 1) {
        await exportReadyMail(options.mailer, trx, options.publicUrl, account, expires);
        await recordActivity(trx, {
          accountId: row.account_id,
          type: 'export_ready',
          who: SYSTEM,
          summary: 'Data export ready to download for 24 hours',
          details: { export_id: exportId, bytes: Buffer.byteLength(json) },
          at: finished,
        });
      }
    });
    context.logger.info({ export: exportId, bytes: Buffer.byteLength(json) }, 'account export built');
  } catch (error) {
    if (context.lastAttempt) {
      await db
        .updateTable('account_exports')
        .set({ status: 'failed', finished_at: clock() })
        .where('id', '=', exportId)
        .where('status', '<>', 'ready')
        .execute();
    }
    throw error;
  }
}

export function createExports(options: PrivacyOptions) {
  const { db, clock } = options;
  const own = async (accountId: number, id: number): Promise<ExportRow> => {
    const row = await db
      .selectFrom('account_exports')
      .select(LISTED)
      .where('id', '=', id)
      .where('account_id', '=', accountId)
      .executeTakeFirst();
    if (!row) throw new AppError('not_owner', { message: 'No such export.' });
    return row;
  };
  return {
    /** Queue a new export (at most one an hour): 429 rate_limited with details.retry_after otherwise. */
    request: (accountId: number, includeProofs: boolean, who: Who = byClient(null)) =>
      request(options, accountId, includeProofs, who),

    /** The account's exports, newest first (the sweep removes them a day after they expire). */
    list: (accountId: number): Promise<ExportRow[]> =>
      db
        .selectFrom('account_exports')
        .select(LISTED)
        .where('account_id', '=', accountId)
        .orderBy('created_at', 'desc')
        .orderBy('id', 'desc')
        .limit(10)
        .execute(),

    /** One export of the account (404 not_owner for another account's). */
    get: own,

    /** One export with its archive's JSON bytes when it can be downloaded (ready and not expired). */
    async download(
      accountId: number,
      id: number,
      who: Who = byClient(null),
    ): Promise<{ row: ExportRow; json: Buffer | null }> {
      const row = await own(accountId, id);
      if (exportState(row, clock()) !== 'ready') return { row, json: null };
      const sealed = await db.selectFrom('account_exports').select('archive').where('id', '=', id).executeTakeFirst();
      if (!sealed?.archive) return { row, json: null };
      const json = openArchive(options.secretKey, id, sealed.archive);
      await recordActivity(db, {
        accountId,
        type: 'export_downloaded',
        who,
        summary: 'Data export downloaded',
        details: { export_id: id },
        at: clock(),
      });
      return { row, json };
    },

    /** The `account.export` job. */
    build: (exportId: number, context: Pick<JobContext, 'lastAttempt' | 'logger'>) => build(options, exportId, context),
  };
}

export type Exports = ReturnType<typeof createExports>;

/** For the maintenance sweep: archives past their 24 hours, and failed exports a day old. */
export async function sweepExports(db: PrivacyOptions['db'], now: Date): Promise<number> {
  const result = await db
    .deleteFrom('account_exports')
    .where((eb) =>
      eb.or([
        eb('expires_at', '<=', now),
        eb.and([eb('status', '=', 'failed'), eb('created_at', '<=', new Date(now.getTime() - DAY_MS))]),
      ]),
    )
    .executeTakeFirst();
  return Number(result.numDeletedRows);
}

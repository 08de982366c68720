// Outgoing mail. `queue` writes the message to the outbox (body encrypted: it holds links and
// codes) and enqueues a `mail.send` job, both in the caller's transaction, so a mail exists iff
// the change that caused it committed. The job delivers over SMTP with retries and backoff; a
// mail server that is down delays mail but never fails the request or loses the message.
// Without SMTP_URL the job stores the mail. On the embedded engine (development) it also prints
// the text, marked as the development mail sink, so a developer can copy the link; on PostgreSQL
// (production) it logs only the outbox id and template, and a warning at start-up (review F9):
// the text holds reset links and sign-in codes. Every link must start with PUBLIC_URL.

import type { Kysely } from 'kysely';
import type nodemailer from 'nodemailer';
import type { Transporter } from 'nodemailer';
import type { Logger } from 'pino';
import type { DB, MailRow, MailStatus } from '../../db/tables.ts';
import { decryptSecret, encryptSecret } from '../crypto/secrets.ts';
import type { AppJobs } from '../jobs/catalog.ts';
import type { JobContext, JobQueue } from '../jobs/queue.ts';
import { onFirstUse } from '../on-first-use.ts';
import type { Clock } from '../time.ts';
import { type MailMessage, type RenderedMail, renderMail } from './templates.ts';

export interface MailerOptions {
  db: Kysely<DB>;
  jobs: JobQueue<AppJobs>;
  secretKey: Buffer;
  logger: Logger;
  clock: Clock;
  smtpUrl: string | null;
  from: string;
  /** The database engine: PostgreSQL means production, so mail text never goes to the log. */
  engine: 'pglite' | 'postgresql';
  /** Links in mail must start with it (CONTRACT §4: built from PUBLIC_URL). */
  publicUrl: string;
}

export interface Mailer {
  queue(trx: Kysely<DB>, to: string, message: MailMessage, accountId?: number | null): Promise<number>;
  /** The `mail.send` job: deliver (or store) one outbox row. Safe to run twice. */
  deliver(outboxId: number, context: Pick<JobContext, 'lastAttempt' | 'logger'>): Promise<void>;
  /** Decrypted content of a queued or stored mail (staff CLI), or null once delivered. */
  read(row: MailRow): RenderedMail | null;
  /** Queue delivery again for failed mail (staff CLI). */
  retry(outboxId: number): Promise<boolean>;
  /** The newest outbox rows, optionally of one status or recipient (staff CLI). */
  list(filter: { status?: MailStatus; to?: string; limit: number }): Promise<MailRow[]>;
  /** One outbox row, or undefined (staff CLI). */
  get(outboxId: number): Promise<MailRow | undefined>;
  close(): void;
}

const AAD = 'mail-outbox';
/** nodemailer, loaded at the first mail sent over SMTP (core/on-first-use.ts). */
const mailerLib = onFirstUse<typeof nodemailer>('nodemailer');

export function createMailer(options: MailerOptions): Mailer {
  const { db, jobs, secretKey, clock } = options;
  const devSink = announceSink(options);
  let transport: Transporter | null = null;
  const smtp = (): Transporter => {
    transport ??= mailerLib().createTransport({
      url: options.smtpUrl as string,
      connectionTimeout: 10_000,
      greetingTimeout: 10_000,
      socketTimeout: 20_000,
    });
    return transport;
  };

  const read = (row: MailRow): RenderedMail | null =>
    row.body_sealed === null
      ? null
      : (JSON.parse(decryptSecret(secretKey, row.body_sealed, `${AAD}:${row.id}`)) as RenderedMail);

  return {
    queue: (trx, to, message, accountId = null) => queueMail(options, trx, to, message, accountId),

    async deliver(outboxId, context) {
      const row = await db.selectFrom('mail_outbox').selectAll().where('id', '=', outboxId).executeTakeFirst();
      if (!row || row.status === 'sent' || row.status === 'stored') return;
      const content = read(row);
      if (content === null) return;
      if (options.smtpUrl === null) return storeUnsent(db, row, content, devSink, context.logger);
      try {
        await smtp().sendMail({
          from: options.from,
          to: row.to_address,
          subject: content.subject,
          text: content.text,
          html: content.html,
        });
      } catch (error) {
        const message = error instanceof Error ? error.message : String(error);
        await db
          .updateTable('mail_outbox')
          .set({
            attempts: row.attempts + 1,
            last_error: message.slice(0, 500),
            ...(context.lastAttempt ? { status: 'failed' } : {}),
          })
          .where('id', '=', row.id)
          .execute();
        throw error;
      }
      // Delivered: the body (links, codes) has no reason to stay, even encrypted.
      await db
        .updateTable('mail_outbox')
        .set({ status: 'sent', attempts: row.attempts + 1, sent_at: clock(), body_sealed: null, last_error: null })
        .where('id', '=', row.id)
        .execute();
      context.logger.info({ outbox: row.id, template: row.template }, 'mail sent');
    },

    read,

    list(filter) {
      let query = db.selectFrom('mail_outbox').selectAll().orderBy('id', 'desc').limit(filter.limit);
      if (filter.status) query = query.where('status', '=', filter.status);
      if (filter.to) query = query.where('to_address', '=', filter.to.toLowerCase());
      return query.execute();
    },

    get: (outboxId) => db.selectFrom('mail_outbox').selectAll().where('id', '=', outboxId).executeTakeFirst(),

    async retry(outboxId) {
      const row = await db
        .updateTable('mail_outbox')
        .set({ status: 'queued' })
        .where('id', '=', outboxId)
        .where('status', '=', 'failed')
        .where('body_sealed', 'is not', null)
        .returning('id')
        .executeTakeFirst();
      if (!row) return false;
      await jobs.enqueue(db, 'mail.send', { outboxId });
      return true;
    },

    close() {
      transport?.close();
    },
  };
}

/**
 * Say at start-up where mail goes without SMTP_URL: nowhere on PostgreSQL (a warning), the log on
 * the embedded engine. True when the log is the development mail sink.
 */
function announceSink(options: MailerOptions): boolean {
  const devSink = options.smtpUrl === null && options.engine === 'pglite';
  if (options.smtpUrl === null && options.engine === 'postgresql') {
    options.logger.warn(
      { mail: 'not delivered' },
      'SMTP_URL is not set: NO MAIL IS DELIVERED. Verification, reset and sign-in mail stays in the outbox ' +
        '(read it with `npm run admin -- mail show ID`); set SMTP_URL for production.',
    );
  } else if (devSink) {
    options.logger.info(
      { mail: 'development sink' },
      'SMTP_URL is not set: mail is stored in the outbox and its text printed to this log (development only)',
    );
  }
  return devSink;
}

/** Write the message to the outbox, sealed, and enqueue its delivery, in the caller's transaction. */
async function queueMail(
  options: MailerOptions,
  trx: Kysely<DB>,
  to: string,
  message: MailMessage,
  accountId: number | null,
): Promise<number> {
  if ('link' in message && !message.link.startsWith(`${options.publicUrl}/`))
    throw new Error(`mail ${message.template}: its link does not start with PUBLIC_URL`);
  const rendered = renderMail(message);
  const { id } = await trx
    .insertInto('mail_outbox')
    .values({
      account_id: accountId,
      to_address: to,
      template: message.template,
      subject: rendered.subject,
      body_sealed: null,
    })
    .returning('id')
    .executeTakeFirstOrThrow();
  // Sealed with the row id as associated data, so a body cannot be swapped onto another row.
  await trx
    .updateTable('mail_outbox')
    .set({ body_sealed: encryptSecret(options.secretKey, JSON.stringify(rendered), `${AAD}:${id}`) })
    .where('id', '=', id)
    .execute();
  await options.jobs.enqueue(trx, 'mail.send', { outboxId: id });
  return id;
}

/** Without SMTP_URL: the mail is stored; its text goes to the log only on the development sink. */
async function storeUnsent(
  db: Kysely<DB>,
  row: MailRow,
  content: RenderedMail,
  devSink: boolean,
  logger: JobContext['logger'],
): Promise<void> {
  await db
    .updateTable('mail_outbox')
    .set({ status: 'stored', attempts: row.attempts + 1 })
    .where('id', '=', row.id)
    .execute();
  if (!devSink) {
    // Production without SMTP: never the text (links, codes); staff read it with the CLI.
    logger.warn({ outbox: row.id, template: row.template }, 'mail stored, not delivered (no SMTP_URL)');
    return;
  }
  // Development without SMTP: the outbox is the mailbox. The text goes to the log on purpose
  // so the link or code can be copied; set SMTP_URL in any real deployment.
  logger.info(
    { outbox: row.id, to: row.to_address, subject: row.subject, mailSink: 'development' },
    `mail stored (no SMTP_URL), development mail sink:\n${content.text}`,
  );
}

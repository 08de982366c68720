// mail list|show|retry: the outbox. Without SMTP_URL it is where mail lands, so a developer can
// read a verification link or sign-in code here instead of in the log.

import { AppError } from '../../core/errors.ts';
import { isoWithOffset } from '../../core/time.ts';
import { counted } from '../../core/words.ts';
import type { MailStatus } from '../../db/tables.ts';
import { type Command, clean, table, UsageError } from '../command.ts';

const MAIL_STATUSES: MailStatus[] = ['queued', 'sent', 'stored', 'failed'];

export const mailCommands: Command[] = [
  {
    noun: 'mail',
    verb: 'list',
    summary: 'Recent outgoing mail with its delivery status',
    options: {
      status: { type: 'string', description: 'queued, sent, stored or failed' },
      to: { type: 'string', description: 'recipient address' },
      limit: { type: 'string', description: 'rows (default 20)' },
    },
    async run(deps, { options }) {
      const limit = Number(options.limit ?? 20);
      if (!Number.isInteger(limit) || limit < 1 || limit > 500) throw new UsageError('--limit is 1–500');
      const status = options.status === undefined ? undefined : String(options.status);
      if (status !== undefined && !MAIL_STATUSES.includes(status as MailStatus))
        throw new UsageError(`--status is one of ${MAIL_STATUSES.join(', ')}`);
      const found = await deps.mailer.list({
        limit,
        ...(status ? { status: status as MailStatus } : {}),
        ...(options.to ? { to: String(options.to) } : {}),
      });
      const rows = found.map((r) => ({
        id: r.id,
        to: r.to_address,
        template: r.template,
        subject: r.subject,
        status: r.status,
        attempts: r.attempts,
        last_error: r.last_error,
        created_at: isoWithOffset(r.created_at),
      }));
      return { json: rows, text: table(rows, ['id', 'to', 'template', 'status', 'attempts', 'created_at']) };
    },
  },
  {
    noun: 'mail',
    verb: 'show',
    summary: 'Show one mail, with its text while it is still held (before delivery)',
    args: ['ID'],
    async run(deps, { args }) {
      const id = Number(args[0]);
      if (!Number.isInteger(id)) throw new UsageError('ID is a number');
      const row = await deps.mailer.get(id);
      if (!row) throw new AppError('not_found', { message: `No mail ${id}.` });
      const content = deps.mailer.read(row);
      const json = {
        id: row.id,
        to: row.to_address,
        subject: row.subject,
        status: row.status,
        attempts: row.attempts,
        last_error: row.last_error,
        text: content?.text ?? null,
      };
      const text = [
        `to        ${clean(row.to_address)}`,
        `subject   ${clean(row.subject)}`,
        `status    ${row.status} (${counted(row.attempts, 'attempt')})${row.last_error ? `, last error: ${clean(row.last_error)}` : ''}`,
        '',
        content?.text ?? '(body discarded after delivery)',
      ].join('\n');
      return { json, text };
    },
  },
  {
    noun: 'mail',
    verb: 'retry',
    summary: 'Queue a failed mail for delivery again',
    args: ['ID'],
    async run(deps, { args }) {
      const id = Number(args[0]);
      if (!Number.isInteger(id)) throw new UsageError('ID is a number');
      if (!(await deps.mailer.retry(id)))
        throw new AppError('not_found', { message: `No failed mail ${id} to retry.` });
      return { json: { id, status: 'queued' }, text: `mail ${id} queued again` };
    },
  },
];

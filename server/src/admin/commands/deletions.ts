// accounts deletions run [--at ISO-TIME] [--dry-run] | list (CONTRACT §11): erase the accounts whose
// deletion is due, now or as if at a given time (drills, tests), as the hourly job does; or list the
// deletions scheduled.

import { AppError } from '../../core/errors.ts';
import { isoWithOffset } from '../../core/time.ts';
import { type Command, clean, table, UsageError } from '../command.ts';

function atOption(value: unknown): Date | undefined {
  if (typeof value !== 'string') return undefined;
  const at = new Date(value);
  if (!/^\d{4}-\d{2}-\d{2}/.test(value) || Number.isNaN(at.getTime())) {
    throw AppError.fields({ at: 'must be an ISO 8601 time such as 2027-01-15T00:00:00Z' });
  }
  return at;
}

export const deletionCommands: Command[] = [
  {
    noun: 'accounts',
    verb: 'deletions',
    summary: 'run: erase the accounts whose deletion is due (as the hourly job does); list: the deletions scheduled',
    args: ['run|list'],
    options: {
      at: { type: 'string', description: 'run: as if at this ISO 8601 time, e.g. 2027-01-15T00:00:00Z' },
      'dry-run': { type: 'boolean', description: 'run: say what would be done; change nothing' },
    },
    details:
      'An erased account keeps its row as a tombstone (deleted-<id>@invalid); its invoices, orders and ledger stay.\n' +
      'A deletion that something new stands in the way of (a service, money in the wallet) is called off and the\n' +
      'customer mailed why.',
    async run(deps, { args, options }) {
      const what = args[0];
      if (what === 'list') {
        const rows = (await deps.privacy.scheduled()).map((a) => ({
          id: a.id,
          email: a.email,
          username: a.username,
          requested_at: a.deletion_requested_at ? isoWithOffset(a.deletion_requested_at) : null,
          scheduled_for: a.deletion_scheduled_for ? isoWithOffset(a.deletion_scheduled_for) : null,
        }));
        return {
          json: rows,
          text: table(
            rows.map((r) => ({ ...r, email: clean(r.email), username: clean(r.username) })),
            ['id', 'email', 'username', 'requested_at', 'scheduled_for'],
          ),
        };
      }
      if (what !== 'run') throw new UsageError('accounts deletions takes run or list');
      const at = atOption(options.at);
      const dryRun = options['dry-run'] === true;
      const actions = await deps.privacy.runDeletions({ ...(at ? { at } : {}), dryRun });
      const when = (at ?? deps.clock()).toISOString();
      return {
        json: { at: when, dry_run: dryRun, actions },
        text:
          actions.length === 0
            ? `deletions ${dryRun ? '(dry run) ' : ''}at ${when}: nothing due`
            : `deletions ${dryRun ? '(dry run) ' : ''}at ${when}:\n\n${table(
                actions.map((a) => ({ ...a, detail: clean(a.detail) })),
                ['account', 'action', 'detail'],
              )}`,
      };
    },
  },
];

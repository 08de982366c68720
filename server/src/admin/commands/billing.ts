// billing run [--at ISO-TIME] [--dry-run] (CONTRACT §7): the billing cycle now, or as if at a
// given time (drills, tests), printing what it did (or would do) per service.

import { AppError } from '../../core/errors.ts';
import { type Command, clean, table } from '../command.ts';

export const billingCommands: Command[] = [
  {
    noun: 'billing',
    verb: 'run',
    summary: 'Run the billing cycle now: reminders, renewals, unpaid orders, overdue suspensions and terminations',
    options: {
      at: { type: 'string', description: 'run as if at this ISO 8601 time, e.g. 2027-01-15T00:00:00Z' },
      'dry-run': { type: 'boolean', description: 'say what would be done; change nothing' },
    },
    async run(deps, { options }) {
      let at: Date | undefined;
      if (typeof options.at === 'string') {
        at = new Date(options.at);
        if (!/^\d{4}-\d{2}-\d{2}/.test(options.at) || Number.isNaN(at.getTime())) {
          throw AppError.fields({ at: 'must be an ISO 8601 time such as 2027-01-15T00:00:00Z' });
        }
      }
      const dryRun = options['dry-run'] === true;
      const actions = await deps.billing.run({ ...(at ? { at } : {}), dryRun });
      const when = (at ?? deps.clock()).toISOString();
      const rows = actions.map((a) => ({ service: a.service, label: a.label, action: a.action, detail: a.detail }));
      return {
        json: { at: when, dry_run: dryRun, actions: rows },
        text:
          rows.length === 0
            ? `billing ${dryRun ? '(dry run) ' : ''}at ${when}: nothing to do`
            : `billing ${dryRun ? '(dry run) ' : ''}at ${when}:\n\n${table(
                rows.map((r) => ({ ...r, label: clean(r.label), detail: clean(r.detail) })),
                ['service', 'label', 'action', 'detail'],
              )}`,
      };
    },
  },
];

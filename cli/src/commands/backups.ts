// Scheduled backups of a KVM instance (CONTRACT §13, docs/backups.md): `hostplane backups
// schedule <instance> --frequency daily|weekly|off --hour H --keep N [--weekday D] [--dry-run]`,
// through PUT /api/v1/instances/{id}/backup-schedule (scope instances.write). A paid add-on:
// turning it on charges the rest of the current period pro rata (the answer says how much).
// The instance is named by its id or its label.

import type { Argv } from 'yargs';
import { CliError } from '../errors.ts';
import { fields, json, msg, note, rupees, write } from '../output.ts';
import { type GlobalArgs, session } from '../session.ts';

const WEEKDAYS = ['Sunday', 'Monday', 'Tuesday', 'Wednesday', 'Thursday', 'Friday', 'Saturday'];

/** A schedule as a service view's one line: "daily at 03:00 IST, keeping 7" (null when off). */
export function scheduleLine(
  s: { frequency: string; hour: number; keep: number; weekday: number } | null | undefined,
): string | null {
  if (!s || s.frequency === 'off') return null;
  const when = `${String(s.hour).padStart(2, '0')}:00 IST`;
  const day = s.frequency === 'weekly' ? `${WEEKDAYS[s.weekday] ?? s.weekday}s at ${when}` : `daily at ${when}`;
  return `${day}, keeping ${s.keep}`;
}

export function backupCommands(y: Argv<GlobalArgs>): Argv<GlobalArgs> {
  return y.command(['backups', 'backup'], 'Scheduled backups of KVM instances (a paid add-on)', (c) =>
    c
      .command(
        'schedule <instance>',
        'Set when automatic snapshots are taken (hour in IST) and how many are kept; off turns them off',
        (cc) =>
          cc
            .positional('instance', { type: 'string', demandOption: true, describe: 'instance id or label' })
            .option('frequency', {
              choices: ['daily', 'weekly', 'off'] as const,
              demandOption: true,
              describe: 'how often (off: no more backups, and no more charges from the next renewal)',
            })
            .option('hour', { type: 'number', describe: 'the hour it runs, 0-23, India Standard Time' })
            .option('keep', { type: 'number', describe: 'how many automatic snapshots to keep, 1-14' })
            .option('weekday', { type: 'number', describe: 'weekly: 0 (Sunday, the default) to 6 (Saturday)' })
            .option('dry-run', {
              type: 'boolean',
              default: false,
              describe: 'show the price and charge; change nothing',
            })
            .check((a) => {
              if (a.frequency !== 'off' && (a.hour === undefined || a.keep === undefined))
                throw new Error('--hour and --keep are required with daily and weekly');
              return true;
            }),
        async (argv) => {
          const { client } = session(argv);
          const ref = String(argv.instance).trim();
          let id = /^\d+$/.test(ref) ? Number(ref) : null;
          if (id === null) {
            for await (const i of client.instances()) if (i.label === ref) id = i.id;
            if (id === null) throw new CliError(msg`no instance called ${ref} (hostplane instances lists them)`.text);
          }
          const answer = await client.setBackupSchedule(id, {
            frequency: argv.frequency,
            ...(argv.hour === undefined ? {} : { hour: argv.hour }),
            ...(argv.keep === undefined ? {} : { keep: argv.keep }),
            ...(argv.weekday === undefined ? {} : { weekday: argv.weekday }),
            ...(argv.dryRun ? { dry_run: true } : {}),
          });
          if (argv.output === 'json') return json(answer);
          note(msg`${answer.message}`);
          const s = answer.backup_schedule;
          write(
            fields([
              ['frequency', s?.frequency ?? 'off'],
              ['hour (IST)', s ? `${String(s.hour).padStart(2, '0')}:00` : null],
              ['weekday', s && s.frequency === 'weekly' ? WEEKDAYS[s.weekday] : null],
              ['keep', s?.keep],
              ['next run', s?.next_run_at],
              ['last run', s?.last_run_at],
              ['last error', s?.last_error],
              [
                'price a month',
                answer.price_per_month === null ? 'not offered by this plan' : rupees(answer.price_per_month),
              ],
              [answer.dry_run ? 'would charge now' : 'charged now', rupees(answer.charged)],
            ]),
          );
        },
      )
      .demandCommand(1, 'Name a backups command (schedule).'),
  );
}

// Following a job: a progress bar on a terminal (cli-progress), one line per change otherwise
// (a CI log or a pipe), both on stderr.

import type { Hostplane, Job } from '@hostplane/sdk';
import cliProgress from 'cli-progress';
import { CliError } from './errors.ts';
import { clean, msg, note } from './output.ts';

/** How often a followed job is read (HOSTPLANE_POLL_MS: the tests read faster). */
const POLL_MS = Number(process.env.HOSTPLANE_POLL_MS) > 0 ? Number(process.env.HOSTPLANE_POLL_MS) : 1000;

/** The job's step or status as the server says it, cleaned: it goes into a progress bar too. */
function describe(job: Job): string {
  return clean(job.step ?? job.status);
}

/** Wait for the job, showing its progress; a failed job is an error (exit 1). */
export async function follow(client: Hostplane, job: Job, what: string): Promise<Job> {
  // Made by the callers from arguments and the server's labels.
  const title = clean(what);
  const bar = process.stderr.isTTY
    ? new cliProgress.SingleBar(
        {
          // cli-progress reads `{…}` as its own placeholders.
          format: `${title.replace(/[{}]/g, '')} [{bar}] {percentage}% | {step}`,
          stream: process.stderr,
          hideCursor: true,
          barsize: 30,
        },
        cliProgress.Presets.shades_classic,
      )
    : null;
  bar?.start(100, job.progress, { step: describe(job) });
  let final: Job;
  try {
    final = await client.waitForJob(job.id, {
      intervalMs: POLL_MS,
      onProgress: (j) => {
        if (bar) bar.update(j.progress, { step: describe(j) });
        else note(msg`${title}: job ${j.id} ${j.status} ${j.progress}%${j.step ? msg` ${j.step}` : ''}`);
      },
    });
  } finally {
    bar?.stop();
  }
  if (final.status === 'failed') {
    const reason = final.error ? msg`${final.error.message} (${final.error.code})` : 'no reason given';
    throw new CliError(msg`${title}: job ${final.id} failed: ${reason}`.text);
  }
  return final;
}

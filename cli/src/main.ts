// `hostplane`: the client CLI (README "Client CLI and SDK", CONTRACT §9), on @hostplane/sdk.
// Exit codes: 0 done; 1 the API or the server said no, or could not be reached (the message and
// the request id on stderr); 2 the command line is wrong.

import { HostplaneError } from '@hostplane/sdk';
import yargs, { type Argv } from 'yargs';
import { hideBin } from 'yargs/helpers';
import { accountCommands } from './commands/account.ts';
import { authCommands } from './commands/auth.ts';
import { backupCommands } from './commands/backups.ts';
import { completionCommands, recordCommands } from './commands/completion.ts';
import { instanceCommands } from './commands/instances.ts';
import { invoiceCommands } from './commands/invoices.ts';
import { rdnsCommands } from './commands/rdns.ts';
import { resizeCommands } from './commands/resize.ts';
import { searchCommands } from './commands/search.ts';
import { webhookCommands } from './commands/webhooks.ts';
import { CliError, UsageError } from './errors.ts';
import { err, jsonSafe, msg, note, paint } from './output.ts';
import { DEFAULT_URL, type GlobalArgs, VERSION } from './session.ts';

/** The whole CLI on `root` (yargs; `completion fish` passes a recorder to read the command table). */
function parser(argv: string[], root: Argv = yargs(argv)): Argv<GlobalArgs> {
  const base: Argv<GlobalArgs> = root
    .scriptName('hostplane')
    .usage('$0 <command> [options]\n\nManage your Hostplane instances from the terminal.')
    .option('output', {
      alias: 'o',
      choices: ['table', 'json'] as const,
      default: 'table' as const,
      describe: 'table for people, json for scripts',
    })
    .option('context', { type: 'string', describe: 'use this saved login instead of the current one' })
    .option('url', { type: 'string', describe: `the server (else HOSTPLANE_URL, the context's, ${DEFAULT_URL})` })
    .option('insecure', {
      type: 'boolean',
      default: false,
      describe: 'allow http:// to a host other than this machine (the token then crosses the network in clear text)',
    })
    .epilogue(
      'Environment: HOSTPLANE_TOKEN and HOSTPLANE_URL override the saved login; NO_COLOR turns colour off.\n' +
        'Exit codes: 0 done, 1 API or connection error, 2 bad usage.',
    );
  const withCommands = invoiceCommands(accountCommands(instanceCommands(authCommands(base))));
  const products = backupCommands(rdnsCommands(resizeCommands(webhookCommands(searchCommands(withCommands)))));
  return completionCommands(products, () => recordCommands((recorder) => parser([], recorder)))
    .demandCommand(1, 'Name a command.')
    .strict()
    .help()
    .alias('help', 'h')
    .version(VERSION)
    .wrap(Math.min(110, process.stdout.columns || 100))
    .exitProcess(false)
    .fail((message, error) => {
      if (error) throw error;
      throw new UsageError(message);
    });
}

const USAGE = 'Run `hostplane --help` for usage.';

function report(error: unknown, json: boolean): number {
  const label = paint(err.red, 'error:');
  if (error instanceof HostplaneError) {
    if (json) {
      process.stderr.write(`${jsonSafe(JSON.stringify({ error: error.toJSON() }))}\n`);
      return 1;
    }
    // Every part but our own words is the server's (or the network's): one line each, escaped.
    const where = error.status === 0 ? '' : msg` (${error.code}, HTTP ${error.status}`.text;
    const id = error.request_id ? msg`, request id ${error.request_id})`.text : where ? ')' : '';
    const hint =
      error.code === 'unreachable'
        ? '\nIs the server running, and is the URL right (--url, hostplane context list)?'
        : '';
    note(`${msg`${label} ${error.message}`.text}${where}${id}${hint}`);
    return 1;
  }
  if (error instanceof CliError) {
    const usage = error instanceof UsageError;
    if (json) {
      // The shape of an API error's, so that a script reads one kind of object on stderr.
      const code = usage ? 'bad_usage' : 'failed';
      const body = { status: 0, code, message: error.message, request_id: null };
      process.stderr.write(`${jsonSafe(JSON.stringify({ error: usage ? { ...body, usage: USAGE } : body }))}\n`);
      return error.exitCode;
    }
    note(usage ? `${label} ${error.message}\n${USAGE}` : `${label} ${error.message}`);
    return error.exitCode;
  }
  note(`${label} ${error instanceof Error ? (error.stack ?? error.message) : String(error)}`);
  return 1;
}

export async function run(argv: string[]): Promise<number> {
  const json = argv.some(
    (a, i) => a === '-ojson' || a === '--output=json' || (['-o', '--output'].includes(a) && argv[i + 1] === 'json'),
  );
  try {
    await parser(argv).parseAsync();
    return 0;
  } catch (error) {
    return report(error, json);
  }
}

process.exitCode = await run(hideBin(process.argv));

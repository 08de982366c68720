// `hostplane`: the client CLI (README "Client CLI and SDK", CONTRACT §9), on @hostplane/sdk.
// Exit codes: 0 done; 1 the API or the server said no, or could not be reached (the message and
// the request id on stderr); 2 the command line is wrong.

import { HostplaneError } from '@hostplane/sdk';
import yargs, { type Argv } from 'yargs';
import { hideBin } from 'yargs/helpers';
import { accountCommands } from './commands/account.ts';
import { authCommands } from './commands/auth.ts';
import { backupCommands } from './commands/backups.ts';
import { instanceCommands } from './commands/instances.ts';
import { invoiceCommands } from './commands/invoices.ts';
import { CliError, UsageError } from './errors.ts';
import { err, jsonSafe, msg, note, paint } from './output.ts';
import { DEFAULT_URL, type GlobalArgs, VERSION } from './session.ts';

function parser(argv: string[]) {
  const base: Argv<GlobalArgs> = yargs(argv)
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
  const withCommands = backupCommands(invoiceCommands(accountCommands(instanceCommands(authCommands(base)))));
  return withCommands
    .demandCommand(1, 'Name a command.')
    .strict()
    .completion('completion', 'Print the bash/zsh completion script (hostplane completion >> ~/.bashrc)')
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
  if (error instanceof UsageError) {
    note(`${label} ${error.message}\nRun \`hostplane --help\` for usage.`);
    return 2;
  }
  if (error instanceof CliError) {
    note(`${label} ${error.message}`);
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

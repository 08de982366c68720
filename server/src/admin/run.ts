// Parse a staff command line and run it. Used by the CLI (in its own process) and by the
// admin socket of a running embedded server, so both behave identically.

import { parseArgs } from 'node:util';
import type { Deps } from '../core/deps.ts';
import { isAppError } from '../core/errors.ts';
import type { BareContext, InputReader, OutputFile } from './command.ts';
import { type Command, CommandError, jsonSafe, terminalSafe, UsageError } from './command.ts';
import { noInputs } from './inputs.ts';
import { COMMANDS } from './registry.ts';

export interface AdminResult {
  exitCode: number;
  stdout: string;
  stderr: string;
  /**
   * Files for the CLI process to write (outputs.ts), base64 so the result stays JSON over the
   * socket, or a temporary file under DATA_DIR/backup-tmp for it to move.
   */
  files?: ResultFile[];
}

export type ResultFile = { path: string; exclusive?: boolean } & ({ base64: string } | { tempPath: string });

function resultFile(file: OutputFile): ResultFile {
  const exclusive = file.exclusive ? { exclusive: true } : {};
  return 'tempPath' in file
    ? { path: file.path, tempPath: file.tempPath, ...exclusive }
    : { path: file.path, base64: file.data.toString('base64'), ...exclusive };
}

/** Inside a server, or a test's app: the bare installation is what the services stand on. */
function bareFromDeps(getDeps: () => Promise<Deps>): () => Promise<BareContext> {
  return async () => {
    const deps = await getDeps();
    return { config: deps.config, inServer: true, database: async () => deps.database, logger: deps.logger };
  };
}

/** Find the command an argv names, or null for help. Throws UsageError on an unknown one. */
export function resolveCommand(argv: string[]): { command: Command | null; rest: string[]; help: boolean } {
  const help = argv.includes('--help') || argv.includes('-h');
  // The noun and verb come first; options follow them.
  const noun = argv[0]?.startsWith('-') ? undefined : argv[0];
  const verb = argv[1]?.startsWith('-') ? undefined : argv[1];
  if (noun === undefined || noun === 'help') return { command: null, rest: [], help: true };
  const ofNoun = COMMANDS.filter((c) => c.noun === noun);
  if (ofNoun.length === 0) throw new UsageError(`unknown command "${noun}"; run with --help to list commands`);
  // A noun that is a command by itself (`search QUERY`): everything after it is its own.
  const bare = ofNoun.find((c) => c.verb === '');
  if (bare) return { command: bare, rest: argv.slice(1), help };
  if (verb === undefined) {
    if (help) return { command: null, rest: [noun], help: true };
    throw new UsageError(`"${noun}" needs one of: ${ofNoun.map((c) => c.verb).join(', ')}`);
  }
  const command = ofNoun.find((c) => c.verb === verb);
  if (!command)
    throw new UsageError(`unknown command "${noun} ${verb}"; "${noun}" has: ${ofNoun.map((c) => c.verb).join(', ')}`);
  return { command, rest: argv.slice(2), help };
}

export function helpText(noun?: string): string {
  const list = COMMANDS.filter((c) => noun === undefined || c.noun === noun);
  const lines = list.map(
    (c) =>
      `  ${[c.noun, c.verb, usage(c)]
        .filter((x) => x !== '')
        .join(' ')
        .padEnd(52)} ${c.summary}`,
  );
  return [
    'Hostplane staff CLI',
    '',
    'Usage: npm run admin -- <noun> <verb> [args] [--json]',
    '',
    'Commands:',
    ...lines,
    '',
    'Options:',
    '  --json      print one JSON document on stdout',
    "  --help      this text, or a command's own with `<noun> <verb> --help`",
    '',
    'Runs against the database configured by the environment (DATABASE_URL, or the embedded',
    'database in DATA_DIR; while `npm start` holds that, commands run inside it).',
  ].join('\n');
}

function usage(command: Command): string {
  const positional = [...(command.args ?? []), ...(command.optionalArgs ?? []).map((a) => `[${a}]`)];
  const options = Object.entries(command.options ?? {}).map(([name, spec]) =>
    spec.type === 'boolean'
      ? `[--${name}]`
      : spec.required
        ? `--${name} ${name.toUpperCase()}`
        : `[--${name} ${name.toUpperCase()}]`,
  );
  return [...positional, ...options].join(' ');
}

function commandHelp(command: Command): string {
  const options = Object.entries(command.options ?? {}).map(
    ([name, spec]) => `  --${name.padEnd(12)} ${spec.required ? '(required) ' : ''}${spec.description}`,
  );
  return [
    `Usage: npm run admin -- ${[command.noun, command.verb, usage(command)].filter((x) => x !== '').join(' ')} [--json]`,
    '',
    command.summary,
    ...(options.length > 0 ? ['', 'Options:', ...options] : []),
    ...(command.details ? ['', command.details] : []),
  ].join('\n');
}

/**
 * Run one command line. Whatever the command prints passes through one guard here: text output
 * (and every error message) has its control characters made visible (`terminalSafe`), JSON
 * output has DEL, C1 and bidi characters \u-escaped too, so client-written text (notes, names,
 * references, reasons, node messages) can never drive the staff terminal. `inputs` reads what an
 * option takes from standard input or a file (`--credentials -`, `--credentials-file PATH`).
 */
export async function runAdmin(
  argv: string[],
  getDeps: () => Promise<Deps>,
  actor = 'staff',
  inputs: InputReader = noInputs,
  getBare: () => Promise<BareContext> = bareFromDeps(getDeps),
): Promise<AdminResult> {
  const result = await runUnguarded(argv, { getDeps, getBare }, actor, inputs);
  const json = argv.includes('--json');
  return {
    exitCode: result.exitCode,
    stdout: json ? jsonSafe(result.stdout) : terminalSafe(result.stdout),
    stderr: terminalSafe(result.stderr),
    ...(result.files ? { files: result.files } : {}),
  };
}

/**
 * Parse a command line just far enough to read what its options take from stdin or files.
 * A wrong command line is left for runAdmin to report; a refused read is returned as the result.
 */
export async function readCommandInputs(argv: string[], inputs: InputReader): Promise<AdminResult | null> {
  let command: Command | null;
  let parsed: ReturnType<typeof parseCommandArgs>;
  try {
    const resolved = resolveCommand(argv);
    if (resolved.command === null || resolved.help) return null;
    command = resolved.command;
    parsed = parseCommandArgs(command, resolved.rest);
  } catch {
    return null;
  }
  try {
    await command.readInputs?.(parsed.options, inputs, parsed.args);
    return null;
  } catch (error) {
    if (error instanceof CommandError) {
      const result = failure(1, error.code, error.message, argv.includes('--json'));
      return { ...result, stdout: jsonSafe(result.stdout), stderr: terminalSafe(result.stderr) };
    }
    if (!(error instanceof UsageError)) throw error;
    const result = failure(2, 'usage_error', error.message, argv.includes('--json'));
    return { ...result, stdout: jsonSafe(result.stdout), stderr: terminalSafe(result.stderr) };
  }
}

async function runUnguarded(
  argv: string[],
  { getDeps, getBare }: { getDeps: () => Promise<Deps>; getBare: () => Promise<BareContext> },
  actor: string,
  inputs: InputReader,
): Promise<AdminResult> {
  const json = argv.includes('--json');
  try {
    const { command, rest, help } = resolveCommand(argv);
    if (command === null) return { exitCode: 0, stdout: `${helpText(rest[0])}\n`, stderr: '' };
    if (help) return { exitCode: 0, stdout: `${commandHelp(command)}\n`, stderr: '' };
    const parsed = parseCommandArgs(command, rest);
    const input = { ...parsed, actor, inputs };
    const output = command.runBare
      ? await command.runBare(await getBare(), input)
      : await (command.run as NonNullable<Command['run']>)(await getDeps(), input);
    return {
      exitCode: 0,
      stdout: json ? `${JSON.stringify(output.json, null, 2)}\n` : `${output.text}\n`,
      stderr: '',
      ...(output.files ? { files: output.files.map(resultFile) } : {}),
    };
  } catch (error) {
    if (error instanceof UsageError) return failure(2, 'usage_error', error.message, json);
    if (error instanceof CommandError) return failure(1, error.code, error.message, json);
    if (isAppError(error)) {
      const fields = error.fields
        ? ` (${Object.entries(error.fields)
            .map(([k, v]) => `${k}: ${v}`)
            .join('; ')})`
        : '';
      return failure(1, error.code, `${error.message}${fields}`, json);
    }
    throw error;
  }
}

function failure(exitCode: number, code: string, message: string, json: boolean): AdminResult {
  return {
    exitCode,
    stdout: json ? `${JSON.stringify({ ok: false, error: code, message }, null, 2)}\n` : '',
    stderr: `error: ${message}\n`,
  };
}

function parseCommandArgs(
  command: Command,
  rest: string[],
): { args: string[]; options: Record<string, string | boolean | undefined> } {
  const options: Record<string, { type: 'string' | 'boolean' }> = { json: { type: 'boolean' } };
  for (const [name, spec] of Object.entries(command.options ?? {})) options[name] = { type: spec.type };
  let parsed: ReturnType<typeof parseArgs>;
  try {
    parsed = parseArgs({ args: rest, options, allowPositionals: true, strict: true });
  } catch (error) {
    throw new UsageError((error as Error).message);
  }
  const required = command.args ?? [];
  const optional = command.optionalArgs ?? [];
  const count = parsed.positionals.length;
  if (count < required.length || count > required.length + optional.length) {
    throw new UsageError(`usage: ${command.noun} ${command.verb} ${usage(command)}`);
  }
  const { json: _json, ...values } = parsed.values as Record<string, string | boolean | undefined>;
  const missing = Object.entries(command.options ?? {})
    .filter(
      ([name, spec]) => spec.required && (typeof values[name] !== 'string' || (values[name] as string).trim() === ''),
    )
    .map(([name]) => `--${name}`);
  if (missing.length > 0) throw new UsageError(`${missing.join(', ')} ${missing.length === 1 ? 'is' : 'are'} required`);
  return { args: parsed.positionals, options: values };
}

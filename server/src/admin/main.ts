// `npm run admin -- <noun> <verb> [args] [--json]`: the staff CLI, on the same core and
// database as the server. With an embedded database held by a running server, the command
// runs inside that server through its admin socket.

import { userInfo } from 'node:os';
import { join } from 'node:path';
import pino from 'pino';
import { type Config, ConfigError, loadConfig } from '../config.ts';
import { closeDeps, createDeps, type Deps } from '../core/deps.ts';
import { BACKUP_TEMP_DIR } from '../core/system/backup/data-files.ts';
import { type Database, openDatabase, targetFromConfig } from '../db/database.ts';
import { DataDirLockedError, lockHolder } from '../db/lock.ts';
import { migrateToLatest } from '../db/migrator.ts';
import { createLogger } from '../logging.ts';
import type { Command, InputReader } from './command.ts';
import { localInputs, recordingInputs } from './inputs.ts';
import { writeOutputFiles } from './outputs.ts';
import { type AdminResult, readCommandInputs, resolveCommand, runAdmin } from './run.ts';
import { AdminSocketError, runRemote } from './socket.ts';

/** The command an argv names (null for help or a wrong command line, which runAdmin reports). */
function commandOf(argv: string[]): Command | null {
  try {
    const { command, help } = resolveCommand(argv);
    return help ? null : command;
  } catch {
    return null;
  }
}

/** Run the command in this process, opening the database itself. */
async function runLocal(argv: string[], config: Config, actor: string, inputs: InputReader): Promise<AdminResult> {
  let database: Database | null = null;
  let deps: Deps | null = null;
  // Warnings and worse only, on stderr, so stdout stays one clean document with --json.
  const logger = createLogger('warn', pino.destination(2));
  const open = async (): Promise<Database> => {
    // Files the CLI creates in an embedded data directory are private, as the server's (F4).
    process.umask(0o077);
    database ??= await openDatabase(targetFromConfig(config, 'admin CLI'), logger);
    return database;
  };
  try {
    return await runAdmin(
      argv,
      async () => {
        const opened = await open();
        await migrateToLatest(opened.db);
        deps = await createDeps(config, opened, logger);
        return deps;
      },
      actor,
      inputs,
      // `backup`: the database as it is, neither migrated nor served.
      async () => ({ config, inServer: false, database: open, logger }),
    );
  } finally {
    if (deps) await closeDeps(deps);
    if (database) await (database as Database).close();
  }
}

async function main(argv: string[]): Promise<number> {
  const config = loadConfig(process.env);
  const actor = `staff:${
    userInfo()
      .username.replace(/[^\w.@-]/g, '_')
      .slice(0, 64) || 'unknown'
  }`;
  let result: AdminResult;
  const command = commandOf(argv);
  const inputs = localInputs(process.stdin, (text) => process.stderr.write(text));
  if (command && !command.cliOnly && config.engine === 'pglite' && lockHolder(config.dataDir) !== null) {
    // The server cannot see this process's standard input or working directory: read here.
    const recording = recordingInputs(inputs);
    result =
      (await readCommandInputs(argv, recording.reader)) ??
      (await runRemote(config.dataDir, argv, actor, recording.read));
  } else {
    result = await runLocal(argv, config, actor, inputs);
  }
  // Files a command produced (an invoice's PDF, a backup) are written here, where the staff member runs it.
  result = await writeOutputFiles(
    result,
    argv.includes('--json'),
    process.cwd(),
    join(config.dataDir, BACKUP_TEMP_DIR),
  );
  process.stdout.write(result.stdout);
  process.stderr.write(result.stderr);
  return result.exitCode;
}

main(process.argv.slice(2)).then(
  (code) => process.exit(code),
  (error: unknown) => {
    if (error instanceof ConfigError || error instanceof DataDirLockedError) {
      console.error(`admin: ${error.message}`);
      process.exit(2);
    }
    if (error instanceof AdminSocketError) {
      console.error(`admin: ${error.message}`);
      process.exit(1);
    }
    console.error('admin: unexpected failure:', error);
    process.exit(1);
  },
);

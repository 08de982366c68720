// Imported by boot.ts, before the server's modules load, when the process is `npm start`
// (server/src/main.ts): with the embedded database, its opening begins now, in its own thread,
// so that it overlaps the main thread's loading of the modules (db/embedded-start.ts).
// It decides as main.ts will: the same role flag and configuration, the same target. Anything
// it cannot start (another role, PostgreSQL, a configuration error, a data directory locked by
// another process) it leaves alone: main.ts meets it and reports it as before.

import { loadConfig } from './config.ts';
import { prestartEmbedded } from './db/embedded-start.ts';

/** What main.ts names the process in the data directory's lock (`npm start`, the role `all`). */
export const START_ROLE = 'npm start';

export function startEarly(argv: string[], env: NodeJS.ProcessEnv): void {
  const flag = argv.find((a) => a.startsWith('--role='));
  if (flag !== undefined && flag !== '--role=all') return;
  let dataDir: string;
  try {
    const config = loadConfig(env);
    if (config.engine !== 'pglite') return;
    dataDir = config.dataDir;
  } catch {
    return;
  }
  // As main.ts does first: what the process creates is private to its user (F4).
  process.umask(0o077);
  prestartEmbedded({ dataDir, role: START_ROLE, template: true });
}

// `npm test`: prepare the migrated template once, then run every *.test.ts under server/test
// with node's test runner (or only the files named on the command line). With
// TEST_DATABASE_URL set, every file gets a fresh PostgreSQL database instead of PGlite.

import { spawn } from 'node:child_process';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative, resolve } from 'node:path';
import { preparePgliteTemplate, preparePostgresTemplate, ROOT } from './support/template.ts';

function findTests(dir: string): string[] {
  const found: string[] = [];
  for (const entry of readdirSync(dir).sort()) {
    const path = join(dir, entry);
    if (statSync(path).isDirectory()) found.push(...findTests(path));
    else if (entry.endsWith('.test.ts')) found.push(path);
  }
  return found;
}

/**
 * The longest files first (server/test/order.json, written by `scripts/test-costs.ts --write-order`
 * from a measured run), files it does not know before them: with a few files at once, a long
 * file started last would run on alone at the end.
 */
function startOrder(files: string[]): string[] {
  let known: string[] = [];
  try {
    known = (JSON.parse(readFileSync(join(ROOT, 'server/test/order.json'), 'utf8')) as string[]).map((f) =>
      join(ROOT, f),
    );
  } catch {
    return files;
  }
  const rank = new Map(known.map((file, i) => [file, i]));
  return [...files].sort((a, b) => (rank.get(a) ?? -1) - (rank.get(b) ?? -1));
}

async function main(): Promise<number> {
  const args = process.argv.slice(2);
  let files = args.length > 0 ? args.map((a) => resolve(a)) : startOrder(findTests(join(ROOT, 'server/test')));
  // CI's second engine (TEST_ONE_ENGINE_SKIP=1) leaves out the files marked `// ci: one engine`:
  // they use no database and no Redis (or, the browser journeys, test the panel over API paths
  // the other files run on both engines), so a second run would repeat the first unchanged.
  const skipped: string[] = [];
  if (process.env.TEST_ONE_ENGINE_SKIP === '1') {
    files = files.filter((file) => {
      const once = readFileSync(file, 'utf8').slice(0, 400).includes('// ci: one engine');
      if (once) skipped.push(relative(ROOT, file));
      return !once;
    });
  }
  const env: NodeJS.ProcessEnv = { ...process.env };
  const started = performance.now();
  if (env.TEST_DATABASE_URL) {
    env.HOSTPLANE_TEST_TEMPLATE_DB = await preparePostgresTemplate(env.TEST_DATABASE_URL);
  } else {
    env.HOSTPLANE_TEST_TEMPLATE = await preparePgliteTemplate();
  }
  const engine = env.TEST_DATABASE_URL ? `PostgreSQL${env.REDIS_URL ? ' + Redis' : ''}` : 'PGlite';
  process.stdout.write(
    `test database: ${engine}; template ready in ${Math.round(performance.now() - started)} ms; ${files.length} files\n`,
  );
  if (skipped.length > 0) {
    process.stdout.write(`left out on this engine (run on the first): ${skipped.join(', ')}\n`);
  }
  const child = spawn(
    process.execPath,
    [
      // Each test file is a process that loads the whole server: boot.ts caches the type-stripped
      // sources and V8's code, so all but the first load them from node_modules/.cache.
      // The embedded database is PostgreSQL compiled to WebAssembly: V8 compiles it quickly, then
      // again optimised in background threads, which a test file's short life rarely pays back
      // (measured: 20 % less CPU for a short file, 8 % for a long one, the same wall time).
      '--liftoff-only',
      '--import',
      join(ROOT, 'server/src/boot.ts'),
      ...(env.TEST_CPU_REPORT ? ['--import', join(ROOT, 'server/test/support/cpu-report.ts')] : []),
      '--test',
      '--test-reporter=spec',
      // Four files at once on a 2-core machine: many files wait on child processes, sockets and
      // timers more than they compute (a PGlite run: 506 s at 3 against 615 s at 2, 2026-11-28;
      // at 3 the 2 cores were busy 1.6 of 2 on average, 2026-11-29, so a fourth file fills them).
      `--test-concurrency=${env.TEST_CONCURRENCY ?? '4'}`,
      // A hang fails its test (and a file, which is a test too) after 10 minutes instead of
      // stalling the whole run: a guard, not a measure. Files that spawn servers and wait on
      // SIGTERM took over 3 minutes on a 2-core machine under load, so 3 was too tight.
      '--test-timeout=600000',
      ...files.map((f) => relative(ROOT, f)),
    ],
    { cwd: ROOT, env, stdio: 'inherit' },
  );
  return new Promise((resolveExit) => child.on('exit', (code, signal) => resolveExit(code ?? (signal ? 1 : 0))));
}

main().then(
  (code) => process.exit(code),
  (error: unknown) => {
    console.error('test setup failed:', error);
    process.exit(1);
  },
);

// Loaded before anything else by every entry point (`node --import ./server/src/boot.ts …`):
// caches what node does to load this repository's TypeScript, so a process after the first
// starts faster. Two caches, both keyed by the file's contents and node's version, both optional
// (a directory that cannot be written, or a node without the API, loads as before):
//  - the type-stripped JavaScript of each .ts file (node 22 strips every file again at every
//    start, about 0.4 s of CPU for the server: a third of what loading it costs);
//  - node's own compile cache (V8's code for each module), `module.enableCompileCache`.
// The directory is NODE_COMPILE_CACHE when set (node's own variable), else node_modules/.cache.

import { createHash } from 'node:crypto';
import { mkdirSync, readFileSync, realpathSync, renameSync, writeFileSync } from 'node:fs';
import nodeModule from 'node:module';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { isMainThread } from 'node:worker_threads';

/** What node >= 22.15 has (module.registerHooks, stripTypeScriptTypes), beyond the @types/node in use. */
interface LoadResult {
  format?: string;
  source?: string | Buffer;
  shortCircuit?: boolean;
}
interface ModuleApi {
  registerHooks?(hooks: {
    load(url: string, context: object, nextLoad: (url: string, context: object) => LoadResult): LoadResult;
  }): void;
  stripTypeScriptTypes?(source: string): string;
  enableCompileCache?(directory: string): unknown;
}
const module = nodeModule as unknown as ModuleApi;

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
const base = process.env.NODE_COMPILE_CACHE || join(ROOT, 'node_modules/.cache/hostplane');

function strippedCache(): string | null {
  if (typeof module.registerHooks !== 'function' || typeof module.stripTypeScriptTypes !== 'function') return null;
  const dir = join(base, `strip-${process.version}`);
  try {
    mkdirSync(dir, { recursive: true });
    return dir;
  } catch {
    return null;
  }
}

/** Without node's one-time "stripTypeScriptTypes is an experimental feature" warning on stderr. */
function quietly<T>(run: () => T): T {
  const emit = process.emitWarning;
  process.emitWarning = ((warning: string | Error, ...rest: never[]) => {
    if (!String(warning).includes('stripTypeScriptTypes')) emit.call(process, warning, ...rest);
  }) as typeof process.emitWarning;
  try {
    return run();
  } finally {
    process.emitWarning = emit;
  }
}

const dir = strippedCache();
if (dir !== null) {
  const strip = module.stripTypeScriptTypes as (source: string) => string;
  module.registerHooks?.({
    load(url, context, nextLoad) {
      if (!url.startsWith('file:') || !url.endsWith('.ts') || url.includes('/node_modules/')) {
        return nextLoad(url, context);
      }
      const source = readFileSync(fileURLToPath(url), 'utf8');
      const file = join(dir, `${createHash('sha1').update(source).digest('hex')}.js`);
      let code: string;
      try {
        code = readFileSync(file, 'utf8');
      } catch {
        code = quietly(() => strip(source));
        try {
          const partial = `${file}.${process.pid}.partial`;
          writeFileSync(partial, code);
          renameSync(partial, file);
        } catch {
          // A read-only cache: this start strips as node would.
        }
      }
      return { format: 'module', source: code, shortCircuit: true };
    },
  });
}
module.enableCompileCache?.(base);

/** Whether this process is the server (`npm start`, the units), not a CLI, a test or a thread. */
function isServer(): boolean {
  const entry = process.argv[1];
  if (!isMainThread || entry === undefined) return false;
  try {
    return realpathSync(entry) === join(ROOT, 'server/src/main.ts');
  } catch {
    return false;
  }
}

// The server with the embedded database: its thread begins opening it now, on the second core,
// while this thread loads the server's modules (early-start.ts). Imported before the server's
// own modules begin to load, never beside them.
if (isServer()) (await import('./early-start.ts')).startEarly(process.argv.slice(2), process.env);

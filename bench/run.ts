// `npm run bench -- <name> [--engine pglite|postgresql] [--pg URL] [--duration S] [--connections N] [--rounds N]`
// Starts what it measures as real processes and prints a Markdown table with ratios against a
// baseline measured in the same run (this machine is noisy; absolute numbers drift).

import { parseArgs } from 'node:util';
import type { BenchOptions } from './support.ts';

const BENCHES: Record<
  string,
  () => Promise<{ run(options: BenchOptions): Promise<string>; engine?: 'pglite' | 'postgresql' }>
> = {
  health: () => import('./health.ts'),
  orders: () => import('./orders.ts'),
  token: () => import('./token.ts'),
  startup: () => import('./startup.ts'),
  upload: () => import('./upload.ts'),
  search: () => import('./search.ts'),
  panel: () => import('./panel.ts'),
};

async function main(): Promise<void> {
  const { positionals, values } = parseArgs({
    allowPositionals: true,
    options: {
      engine: { type: 'string', default: 'pglite' },
      pg: { type: 'string', default: 'postgres://postgres@127.0.0.1:5432/test' },
      duration: { type: 'string', default: '10' },
      connections: { type: 'string', default: '50' },
      rounds: { type: 'string', default: '2' },
    },
  });
  const name = positionals[0];
  const load = name ? BENCHES[name] : undefined;
  if (!load) {
    console.error(
      `usage: npm run bench -- <${Object.keys(BENCHES).join('|')}> [--engine pglite|postgresql] [--duration S]`,
    );
    process.exit(2);
  }
  if (values.engine !== 'pglite' && values.engine !== 'postgresql') throw new Error('--engine is pglite or postgresql');
  const options: BenchOptions = {
    engine: values.engine,
    pgUrl: values.pg,
    duration: Number(values.duration),
    connections: Number(values.connections),
    rounds: Number(values.rounds),
  };
  const started = new Date().toISOString();
  const bench = await load();
  // Some benchmarks only make sense on one engine (e.g. concurrency on PostgreSQL).
  if (bench.engine) options.engine = bench.engine;
  const report = await bench.run(options);
  const command = `npm run bench -- ${process.argv.slice(2).join(' ')}`;
  process.stdout.write(
    `\n### ${name} (${options.engine}), ${started}\n\nCommand: \`${command}\` (${options.connections} connections, ` +
      `${options.duration} s per run, ${options.rounds} interleaved rounds, node ${process.version})\n\n${report}\n`,
  );
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});

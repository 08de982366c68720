// `npm run bench -- health`: GET /api/v1/health/ (one database round trip per request) against
// a raw node:http server answering the same JSON bytes, interleaved A/B in the same run.

import { type BenchOptions, type Measured, measure, startHostplane, startRaw, summarize, table } from './support.ts';

export async function run(options: BenchOptions): Promise<string> {
  const app = await startHostplane(options);
  const path = '/api/v1/health/';
  const sample = await (await fetch(`${app.url}${path}`)).text();
  const raw = await startRaw({ [path]: { status: 200, body: sample } });
  const rows: Measured[] = [];
  try {
    await measure('warm-up', `${app.url}${path}`, { ...options, duration: 2 });
    for (let round = 1; round <= options.rounds; round++) {
      rows.push(await measure(`raw node:http #${round}`, `${raw.url}${path}`, options));
      rows.push(await measure(`hostplane health (${options.engine}) #${round}`, `${app.url}${path}`, options));
    }
  } finally {
    await raw.stop();
    await app.stop();
  }
  const byRound = (row: Measured) => rows.find((r) => r.label === `raw node:http #${row.label.split('#')[1]}`);
  return `${table(rows, byRound)}\n\n${summarize(rows, 'hostplane health', 'raw node:http')}`;
}

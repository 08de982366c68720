// `node scripts/test-costs.ts FILE [N] [--write-order]`: the N (default 30) test files that cost the
// most CPU in a `TEST_CPU_REPORT=FILE npm test` run, with their wall time, and the totals.
// --write-order: also write server/test/order.json, the files longest first by wall time, which
// `npm test` starts first (the run ends sooner when the long files do not start last).

import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { ROOT } from '../server/test/support/template.ts';

interface Cost {
  file: string;
  wall: number;
  cpu: number;
  children: number;
  code: number;
}

const writeOrder = process.argv.includes('--write-order');
const [path, count = '30'] = process.argv.slice(2).filter((arg) => !arg.startsWith('--'));
if (!path) {
  process.stderr.write('usage: node scripts/test-costs.ts FILE [N] [--write-order]\n');
  process.exit(2);
}
const rows = readFileSync(path, 'utf8')
  .split('\n')
  .filter(Boolean)
  .map((line) => JSON.parse(line) as Cost);
const total = (row: Cost) => row.cpu + row.children;
rows.sort((a, b) => total(b) - total(a));
const sum = (f: (row: Cost) => number) => rows.reduce((acc, row) => acc + f(row), 0).toFixed(0);
process.stdout.write(
  `${rows.length} files; CPU ${sum(total)} s (own ${sum((r) => r.cpu)} s), wall ${sum((r) => r.wall)} s\n`,
);
process.stdout.write('   cpu  own  child  wall  file\n');
for (const row of rows.slice(0, Number(count))) {
  const cells = [total(row), row.cpu, row.children, row.wall].map((n) => n.toFixed(1).padStart(5));
  process.stdout.write(`${cells.join(' ')}  ${row.file}${row.code ? ` (exit ${row.code})` : ''}\n`);
}

if (writeOrder) {
  const order = [...new Set([...rows].sort((a, b) => b.wall - a.wall).map((row) => row.file))];
  writeFileSync(join(ROOT, 'server/test/order.json'), `${JSON.stringify(order, null, 2)}\n`);
  process.stdout.write(`wrote server/test/order.json (${order.length} files, longest first)\n`);
}

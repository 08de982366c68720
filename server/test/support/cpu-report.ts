// `TEST_CPU_REPORT=FILE npm test`: each test file's process appends one JSON line to FILE when it
// exits — its wall time and the CPU time it and the children it waited for used (/proc/self/stat,
// Linux only) — so the files that cost CI the most can be found: `node scripts/test-costs.ts FILE`.

import { appendFileSync, readFileSync } from 'node:fs';
import { relative } from 'node:path';
import { ROOT } from './template.ts';

const out = process.env.TEST_CPU_REPORT;
const file = process.argv[1];
if (out && file?.endsWith('.test.ts')) {
  process.on('exit', () => {
    let cpu: number[] = [];
    try {
      // Fields after the command name: utime, stime, cutime, cstime are the 14th to 17th (ticks).
      const stat = readFileSync('/proc/self/stat', 'utf8');
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      cpu = fields.slice(11, 15).map((ticks) => Number(ticks) / 100);
    } catch {
      // Not Linux: wall time only.
    }
    const [user = 0, system = 0, childUser = 0, childSystem = 0] = cpu;
    appendFileSync(
      out,
      `${JSON.stringify({
        file: relative(ROOT, file),
        wall: Math.round(process.uptime() * 10) / 10,
        cpu: Math.round((user + system) * 10) / 10,
        children: Math.round((childUser + childSystem) * 10) / 10,
        code: process.exitCode ?? 0,
      })}\n`,
    );
  });
}

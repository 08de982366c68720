// `node --import ./server/src/boot.ts scripts/db-template.ts`, run by `npm ci` (postinstall):
// builds the migrated template a fresh DATA_DIR starts from (server/src/db/template.ts), unless
// this release's exists. A template that cannot be built (a read-only cache, …) leaves `npm start`
// creating its database the long way, which is no reason to fail the install: it warns and exits 0.

import { ensureTemplate } from '../server/src/db/template-build.ts';

const started = performance.now();
try {
  const path = await ensureTemplate();
  process.stdout.write(`database template: ${path} (${Math.round(performance.now() - started)} ms)\n`);
} catch (error) {
  process.stderr.write(
    `database template not built (npm start will create its database without): ${(error as Error).message}\n`,
  );
}

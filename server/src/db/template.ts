// The migrated template of a new embedded database: a `dumpDataDir()` tarball of a cluster with
// every migration and pg-boss's schema applied, and nothing of an installation's own (no
// installation id, no secret key, no demo catalogue: the first start makes those, as for any new
// database). `npm start` on an empty DATA_DIR loads it instead of running initdb and every
// migration (db/embedded-start.ts); the tests clone it for every file (server/test/support).
// Built by `npm ci` (postinstall), by `npm test` and by `npm run bench -- startup` when missing
// (db/template-build.ts); a start without one creates the database the long way.
//
// Kept in the checkout's .cache/ (which `npm ci` leaves alone, unlike node_modules), named by a
// fingerprint of everything that shapes its contents: a release with another migration, queue
// catalogue, PGlite or pg-boss finds no template of its own rather than a wrong one. Migrations
// still run after it is loaded, as on every start, so a template can only save work, not skip it.

import { createHash } from 'node:crypto';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../../..');

/** The directory of the templates. */
export const TEMPLATE_DIR = join(ROOT, '.cache');

/** Changes whenever the schema, the queues pg-boss creates or an engine that shapes the stored files changes. */
export function templateFingerprint(): string {
  const hash = createHash('sha256');
  const dir = join(ROOT, 'server/src/db/migrations');
  for (const file of readdirSync(dir).sort()) hash.update(file).update(readFileSync(join(dir, file)));
  hash.update(readFileSync(join(ROOT, 'server/src/core/jobs/catalog.ts')));
  for (const pkg of ['@electric-sql/pglite', 'pg-boss']) {
    hash.update(readFileSync(join(ROOT, 'node_modules', pkg, 'package.json')));
  }
  return hash.digest('hex').slice(0, 12);
}

/** Where this release's template is (or would be) in `dir`. */
export function templatePath(dir = TEMPLATE_DIR): string {
  // Not compressed: PGlite untars it at every load, and gunzipping its 45 MB first cost about a
  // quarter of the load (measured: ~1.0 s of CPU per load with gzip, ~0.75 s without).
  return join(dir, `pglite-migrated-${templateFingerprint()}.tar`);
}

/** This release's template in `dir`, or null when it has not been built there (or cannot be read). */
export function cachedTemplate(dir = TEMPLATE_DIR): string | null {
  try {
    const path = templatePath(dir);
    return existsSync(path) ? path : null;
  } catch {
    return null; // a release without its migrations' sources or packages to fingerprint
  }
}

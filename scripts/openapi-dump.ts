// `node scripts/openapi-dump.ts [--public-url URL] [FILE]`: the OpenAPI document
// the app serves at /api/v1/openapi.json, written to FILE (default openapi.json in the current
// directory) or to stdout with `-`, for linters that read a file (CI: `redocly lint`). As in
// scripts/openapi-generate.ts, the app is built in-process on a throwaway in-memory database
// with a fixed configuration and the document is injected: no server runs, nothing listens.
// `--public-url` is the PUBLIC_URL the document names as its server (default
// http://localhost:8080, what an installation without one serves).

import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import pino from 'pino';
import { loadConfig } from '../server/src/config.ts';
import { closeDeps, createDeps } from '../server/src/core/deps.ts';
import { openDatabase } from '../server/src/db/database.ts';
import { migrateToLatest } from '../server/src/db/migrator.ts';
import { OPENAPI_PATH } from '../server/src/http/plugins/openapi.ts';
import { buildServer } from '../server/src/http/server.ts';

/** The document as the app serves it, with the defaults of every setting it mentions. */
export async function openApiDocument(publicUrl = 'http://localhost:8080'): Promise<Record<string, unknown>> {
  const dataDir = mkdtempSync(join(tmpdir(), 'hostplane-openapi-'));
  const config = loadConfig({
    DATA_DIR: dataDir,
    SECRET_KEY: randomBytes(32).toString('base64'),
    DEMO: '0',
    PUBLIC_URL: publicUrl,
  });
  const database = await openDatabase({ engine: 'pglite', dataDir: null });
  try {
    await migrateToLatest(database.db);
    const deps = await createDeps(config, database, pino({ level: 'silent' }));
    try {
      const app = buildServer(deps);
      try {
        await app.ready();
        const res = await app.inject({ method: 'GET', url: OPENAPI_PATH });
        if (res.statusCode !== 200) throw new Error(`GET ${OPENAPI_PATH} answered ${res.statusCode}: ${res.body}`);
        return res.json() as Record<string, unknown>;
      } finally {
        await app.close();
      }
    } finally {
      await closeDeps(deps);
    }
  } finally {
    await database.close();
    rmSync(dataDir, { recursive: true, force: true });
  }
}

if (process.argv[1] !== undefined && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const args = process.argv.slice(2);
  const at = args.indexOf('--public-url');
  const publicUrl = at === -1 ? undefined : args.splice(at, 2)[1];
  if (at !== -1 && !publicUrl) throw new Error('--public-url needs a URL');
  const target = args[0] ?? 'openapi.json';
  const text = `${JSON.stringify(await openApiDocument(publicUrl), null, 2)}\n`;
  if (target === '-') process.stdout.write(text);
  else {
    writeFileSync(target, text);
    process.stderr.write(`wrote ${resolve(target)}\n`);
  }
}

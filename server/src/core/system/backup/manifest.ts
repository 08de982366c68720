// What a backup says about itself (manifest.json, the archive's first entry), and the
// fingerprint of a database's contents both ends compute: per table, its row count and an
// order-independent checksum of its rows. Create computes it on exactly what was dumped;
// restore recomputes it on what it restored and refuses to finish when the two differ.

import { createHmac } from 'node:crypto';
import type { Engine } from '../../../config.ts';
import { migrations } from '../../../db/migrations/index.ts';
import { BackupError } from './errors.ts';

export const FORMAT = 'hostplane-backup';
export const FORMAT_VERSION = 1;
export const MANIFEST_ENTRY = 'manifest.json';
/** At most this much manifest: a few hundred tables and many thousand files. */
export const MAX_MANIFEST_BYTES = 64 * 1024 * 1024;

export interface TableSum {
  rows: number;
  /** Sum of the first 64 bits of md5(row as text) over the rows, in decimal. */
  checksum: string;
}

export interface FileRecord {
  /** Entry name in the archive: `database/…` or `files/<path under DATA_DIR>`. */
  path: string;
  bytes: number;
  sha256: string;
}

export interface Manifest {
  format: typeof FORMAT;
  version: number;
  created_at: string;
  engine: Engine;
  /** The database server's version (PGlite: its PostgreSQL), e.g. `17.5`. */
  database_version: string;
  /** The last migration applied to the backed-up database. */
  schema_version: string | null;
  installation_id: string | null;
  /**
   * Where the key that seals secrets at rest came from: `data_dir` (generated into DATA_DIR; the
   * backup holds it, files/secret.key) or `environment` (SECRET_KEY; the backup does not hold it).
   * `check` identifies the key without revealing it.
   */
  secret_key: { source: 'data_dir' | 'environment'; check: string } | null;
  database: FileRecord;
  files: FileRecord[];
  /** By `schema.table`: every permanent table (unlogged ones, the rate-limit counters, are not kept). */
  tables: Record<string, TableSum>;
}

/** Identifies a key without revealing it (an HMAC of a fixed text). */
export function keyCheck(key: Buffer): string {
  return createHmac('sha256', key).update('hostplane backup key check').digest('hex').slice(0, 16);
}

export interface Queryable {
  query(text: string): Promise<{ rows: unknown[] }>;
}

const TABLES_SQL = `
  select n.nspname as schema, c.relname as name
  from pg_class c join pg_namespace n on n.oid = c.relnamespace
  where c.relkind in ('r', 'p') and c.relpersistence = 'p' and not c.relispartition
    and n.nspname not in ('pg_catalog', 'information_schema') and n.nspname not like 'pg\\_%'
  order by 1, 2`;

const quoteIdent = (name: string) => `"${name.replaceAll('"', '""')}"`;

/**
 * Row counts and checksums of every permanent table, as `client` sees them: call it inside a
 * transaction (its settings are SET LOCAL, so a row prints the same on both ends).
 */
export async function tableSums(client: Queryable): Promise<Record<string, TableSum>> {
  await client.query(
    "set local timezone = 'UTC'; set local datestyle = 'ISO, YMD'; set local intervalstyle = 'postgres'; " +
      "set local extra_float_digits = 1; set local bytea_output = 'hex'",
  );
  const { rows: tables } = (await client.query(TABLES_SQL)) as { rows: { schema: string; name: string }[] };
  const sums: Record<string, TableSum> = {};
  for (const { schema, name } of tables) {
    const { rows } = (await client.query(
      `select count(*)::text as n, coalesce(sum(('x' || left(md5(t::text), 16))::bit(64)::bigint), 0)::text as s
       from ${quoteIdent(schema)}.${quoteIdent(name)} t`,
    )) as { rows: { n: string; s: string }[] };
    sums[`${schema}.${name}`] = { rows: Number(rows[0]?.n ?? 0), checksum: rows[0]?.s ?? '0' };
  }
  return sums;
}

/** The installation id, the last applied migration and the server version, as `client` sees them. */
export async function describeDatabase(
  client: Queryable,
): Promise<{ installationId: string | null; schemaVersion: string | null; serverVersion: string }> {
  const { rows } = (await client.query(
    `select current_setting('server_version') as version,
       to_regclass('public.installation') is not null as has_installation,
       to_regclass('public.kysely_migration') is not null as has_migrations`,
  )) as { rows: { version: string; has_installation: boolean; has_migrations: boolean }[] };
  const row = rows[0] as { version: string; has_installation: boolean; has_migrations: boolean };
  const first = async (text: string) =>
    (((await client.query(text)) as { rows: { v: string }[] }).rows[0]?.v ?? null) as string | null;
  return {
    serverVersion: row.version,
    installationId: row.has_installation ? await first('select id as v from installation limit 1') : null,
    schemaVersion: row.has_migrations
      ? await first('select name as v from kysely_migration order by name desc limit 1')
      : null,
  };
}

/** Fingerprint (tableSums) and description (describeDatabase) in one REPEATABLE READ transaction of `client`. */
export async function fingerprint(client: Queryable): Promise<{
  tables: Record<string, TableSum>;
  described: Awaited<ReturnType<typeof describeDatabase>>;
}> {
  await client.query('begin isolation level repeatable read read only');
  try {
    const tables = await tableSums(client);
    const described = await describeDatabase(client);
    await client.query('commit');
    return { tables, described };
  } catch (error) {
    await client.query('rollback').catch(() => {});
    throw error;
  }
}

/** The tables whose row count or checksum differ between two fingerprints (either side missing counts). */
export function differingTables(a: Record<string, TableSum>, b: Record<string, TableSum>): string[] {
  const names = new Set([...Object.keys(a), ...Object.keys(b)]);
  return [...names].filter((name) => a[name]?.rows !== b[name]?.rows || a[name]?.checksum !== b[name]?.checksum).sort();
}

const isRecord = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

function isFileRecord(value: unknown): value is FileRecord {
  return (
    isRecord(value) &&
    typeof value.path === 'string' &&
    Number.isSafeInteger(value.bytes) &&
    (value.bytes as number) >= 0 &&
    typeof value.sha256 === 'string' &&
    /^[0-9a-f]{64}$/.test(value.sha256)
  );
}

/**
 * The manifest of a backup file, checked: a file that is no Hostplane backup is backup_foreign,
 * one from a newer format or with migrations this code lacks is backup_newer, one whose manifest
 * is malformed is backup_corrupt.
 */
export function parseManifest(text: string): Manifest {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    throw new BackupError('backup_corrupt', 'the backup file is damaged: its manifest is not JSON');
  }
  if (!isRecord(value) || value.format !== FORMAT) {
    throw new BackupError('backup_foreign', 'this is not a Hostplane backup (its manifest names another format)');
  }
  if (typeof value.version !== 'number' || value.version > FORMAT_VERSION) {
    throw new BackupError(
      'backup_newer',
      `this backup is in format version ${String(value.version)}; this Hostplane reads version ${FORMAT_VERSION}: restore it with the version that made it`,
    );
  }
  const tables = value.tables;
  const wellFormed =
    (value.engine === 'pglite' || value.engine === 'postgresql') &&
    typeof value.created_at === 'string' &&
    typeof value.database_version === 'string' &&
    (value.schema_version === null || typeof value.schema_version === 'string') &&
    (value.installation_id === null || typeof value.installation_id === 'string') &&
    (value.secret_key === null ||
      (isRecord(value.secret_key) &&
        (value.secret_key.source === 'data_dir' || value.secret_key.source === 'environment') &&
        typeof value.secret_key.check === 'string')) &&
    isFileRecord(value.database) &&
    Array.isArray(value.files) &&
    value.files.every(isFileRecord) &&
    isRecord(tables) &&
    Object.values(tables).every((t) => isRecord(t) && Number.isSafeInteger(t.rows) && typeof t.checksum === 'string');
  if (!wellFormed) throw new BackupError('backup_corrupt', 'the backup file is damaged: its manifest is incomplete');
  const manifest = value as unknown as Manifest;
  if (manifest.schema_version !== null && !Object.hasOwn(migrations, manifest.schema_version)) {
    throw new BackupError(
      'backup_newer',
      `this backup's database is at migration ${manifest.schema_version}, which this Hostplane does not have ` +
        `(its latest is ${latestMigration()}): restore it with a Hostplane at least as new as the one that made it`,
    );
  }
  return manifest;
}

/** The newest migration this code has. */
export function latestMigration(): string {
  return Object.keys(migrations).sort().at(-1) ?? '';
}

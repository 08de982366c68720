// Why a backup or a restore was refused: a code for `--json` and a sentence for the operator.
// The staff CLI shows them as it shows AppErrors (exit 1).

export type BackupErrorCode =
  /** The file is not a Hostplane backup (another archive, another program's file). */
  | 'backup_foreign'
  /** The file is a backup, but damaged: truncated, a checksum that does not match. */
  | 'backup_corrupt'
  /** Made by a newer Hostplane (a format or migrations this code does not know). */
  | 'backup_newer'
  /** The backup's engine is not the configured one (PGlite into PostgreSQL, or the reverse). */
  | 'engine_mismatch'
  /** The DATA_DIR or database to restore into holds data, or a server is running on it. */
  | 'target_not_empty'
  /** SECRET_KEY is missing, or is not the key the backup's secrets are sealed with. */
  | 'secret_key_mismatch'
  /** There is nothing to back up (no embedded database in DATA_DIR). */
  | 'no_database'
  /** The output file exists already. */
  | 'file_exists'
  /** The backup file cannot be read. */
  | 'unreadable'
  /** pg_dump or pg_restore failed, or is not installed. */
  | 'tool_failed'
  /** DATABASE_URL cannot be reached. */
  | 'database_unreachable'
  /** The restored copy does not hold what the backup recorded. */
  | 'verify_failed'
  /** The disk filled while the backup was written (DATA_DIR/backup-tmp, or where a restore unpacks). */
  | 'insufficient_storage';

export class BackupError extends Error {
  override name = 'BackupError';
  readonly code: BackupErrorCode;
  constructor(code: BackupErrorCode, message: string) {
    super(message);
    this.code = code;
  }
}

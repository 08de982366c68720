// The key that encrypts secrets at rest (CONTRACT §3). With PostgreSQL it must come from
// SECRET_KEY; embedded mode generates one into DATA_DIR on first start and keeps it there.

import { randomBytes } from 'node:crypto';
import { chmodSync, mkdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

export const SECRET_KEY_FILE = 'secret.key';

export function resolveSecretKey(config: { secretKey: Buffer | null; dataDir: string }): Buffer {
  if (config.secretKey !== null) return config.secretKey;
  const path = join(config.dataDir, SECRET_KEY_FILE);
  try {
    const key = Buffer.from(readFileSync(path, 'utf8').trim(), 'base64');
    if (key.length !== 32) throw new Error(`${path} does not hold a 32-byte base64 key`);
    // Written 0600; if it was opened up since, close it again (F4).
    const mode = statSync(path).mode & 0o777;
    if ((mode & 0o077) !== 0) chmodSync(path, mode & 0o600);
    return key;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
  }
  mkdirSync(config.dataDir, { recursive: true, mode: 0o700 });
  const key = randomBytes(32);
  writeFileSync(path, `${key.toString('base64')}\n`, { mode: 0o600, flag: 'wx' });
  return key;
}

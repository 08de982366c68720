// Plausible, slowly growing usage figures: every mailbox, database and home directory starts
// small and gains a little with time (capped by its quota), bandwidth accrues while the account
// exists. Derived from creation times, so they survive restarts without being stored.

import type { Account, Database, Mailbox } from './state.ts';
import { limitOf } from './state.ts';

const MB = 1024 * 1024;

function minutesSince(ms: number, now: number): number {
  return Math.max(0, (now - ms) / 60_000);
}

export function mailboxBytes(box: Mailbox, now = Date.now()): number {
  const grown = box.baseBytes + Math.floor(minutesSince(box.createdAt, now) * 2048);
  return box.quotaMb > 0 ? Math.min(grown, box.quotaMb * MB) : grown;
}

export function databaseBytes(db: Database, now = Date.now()): number {
  return db.baseBytes + Math.floor(minutesSince(db.createdAt, now) / 10) * 16384;
}

/** Home directory files other than mail (public_html, logs, …). */
export function homeBytes(account: Account, now = Date.now()): number {
  return 2 * MB + Math.floor(minutesSince(account.createdAt, now) * 10240);
}

export function diskUsedBytes(account: Account, now = Date.now()): number {
  let total = homeBytes(account, now);
  for (const box of account.mailboxes) total += mailboxBytes(box, now);
  for (const db of account.databases) total += databaseBytes(db, now);
  const quota = limitOf(account.limits, 'QUOTA');
  return quota ? Math.min(total, quota * MB) : total;
}

export function mysqlBytes(account: Account, now = Date.now()): number {
  return account.databases.reduce((sum, db) => sum + databaseBytes(db, now), 0);
}

export function bandwidthBytes(account: Account, now = Date.now()): number {
  return Math.floor(minutesSince(account.createdAt, now) * 51200);
}

export function inodes(account: Account, now = Date.now()): number {
  return 120 + account.mailboxes.length * 14 + Math.floor(minutesSince(account.createdAt, now) / 5);
}

/** `120M`-style figure as listaccts shows it. */
export function megs(bytes: number): string {
  return `${Math.round(bytes / MB)}M`;
}

/** cPanel's human-readable sizes (`format_bytes`). */
export function humanBytes(bytes: number): string {
  if (bytes < 1024) return `${bytes} bytes`;
  const units = ['KB', 'MB', 'GB', 'TB'];
  let value = bytes / 1024;
  let unit = 0;
  while (value >= 1024 && unit < units.length - 1) {
    value /= 1024;
    unit++;
  }
  return `${value >= 100 ? Math.round(value) : value.toFixed(2)} ${units[unit]}`;
}

// What every exporter of a data export (./exporters.ts) is given and returns.

import type { Kysely } from 'kysely';
import type { DB } from '../../db/tables.ts';
import { isoWithOffset } from '../time.ts';

export interface ExportContext {
  db: Kysely<DB>;
  accountId: number;
  /** The customer asked for their deposits' proof files inline (base64). */
  includeProofs: boolean;
  /** Where a deposit's proof file is stored (DATA_DIR/uploads/deposits/…). */
  proofPath(file: string): string;
  now: Date;
}

export interface Exporter {
  /** The archive's key for this section. */
  section: string;
  /** One line saying what the section holds, and what it leaves out. */
  description: string;
  collect(ctx: ExportContext): Promise<unknown>;
}

/** ISO 8601 with offset, or null. */
export const iso = (date: Date | null): string | null => (date === null ? null : isoWithOffset(date));

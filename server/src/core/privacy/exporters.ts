// What a data export holds (CONTRACT §11): one exporter per section of the archive, each reading
// only the rows of the one account it is given, column by column (never `select *`), so a secret
// (the password hash, token and session hashes, TOTP secrets, sealed credentials) cannot slip in
// when a table grows a column. A feature that keeps more about an account adds its exporter to
// EXPORTERS; the archive lists every section.

import { isoWithOffset } from '../time.ts';
import type { ExportContext, Exporter } from './export-kit.ts';
import { ACCOUNT_EXPORTERS } from './exporters-account.ts';
import { ACTIVITY_EXPORTERS } from './exporters-activity.ts';
import { MONEY_EXPORTERS } from './exporters-money.ts';
import { SERVICE_EXPORTERS } from './exporters-services.ts';

export type { ExportContext, Exporter } from './export-kit.ts';

/** Every section, in the order the archive lists them. */
export const EXPORTERS: readonly Exporter[] = [
  ...ACCOUNT_EXPORTERS,
  ...ACTIVITY_EXPORTERS,
  ...MONEY_EXPORTERS,
  ...SERVICE_EXPORTERS,
];

export const ARCHIVE_FORMAT = 'hostplane-account-export';

/** The archive: what it is, when it was made, what each section holds, then the sections. */
export async function buildArchive(
  ctx: ExportContext,
  exporters: readonly Exporter[] = EXPORTERS,
): Promise<Record<string, unknown>> {
  const sections: Record<string, unknown> = {};
  for (const exporter of exporters) sections[exporter.section] = await exporter.collect(ctx);
  return {
    format: ARCHIVE_FORMAT,
    version: 1,
    generated_at: isoWithOffset(ctx.now),
    account_id: ctx.accountId,
    about:
      'Everything Hostplane keeps about your account, as JSON. Amounts are rupees as decimal strings ' +
      '(INR); times are ISO 8601. Passwords, API token secrets, session cookies, two-factor secrets and ' +
      'service credentials are never included: we keep only their hashes or sealed copies.',
    sections: exporters.map((e) => ({ name: e.section, description: e.description })),
    ...sections,
  };
}

// `deps.privacy`: data exports and account deletion (CONTRACT §11). Exports: ./exports.ts;
// asking for and cancelling a deletion: ./deletion.ts; erasing due accounts: ./erasure.ts.

import { createDeletion } from './deletion.ts';
import { runDeletions } from './erasure.ts';
import { createExports } from './exports.ts';
import type { PrivacyOptions } from './options.ts';

export type { PrivacyOptions } from './options.ts';

export function createPrivacy(options: PrivacyOptions) {
  return {
    exports: createExports(options),
    deletion: createDeletion(options),
    /** Erase the accounts whose deletion is due at `at` (default now); `dryRun` only says what it would do. */
    runDeletions: (input: { at?: Date; dryRun?: boolean } = {}) => runDeletions(options, input),
    /** Accounts with a deletion scheduled, soonest first (staff CLI). */
    scheduled: () =>
      options.db
        .selectFrom('accounts')
        .select(['id', 'email', 'username', 'deletion_requested_at', 'deletion_scheduled_for'])
        .where('deletion_scheduled_for', 'is not', null)
        .orderBy('deletion_scheduled_for')
        .orderBy('id')
        .execute(),
  };
}

export type Privacy = ReturnType<typeof createPrivacy>;

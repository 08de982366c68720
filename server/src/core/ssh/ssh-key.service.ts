// SSH keys of an account (issue 16, CONTRACT §9): added once (the fingerprint is unique per
// account), listed, deleted; and resolved by id for a deploy, always within the account.

import type { Kysely } from 'kysely';
import type { DB, SshKey } from '../../db/tables.ts';
import { freeTextProblem } from '../accounts/rules.ts';
import { AppError } from '../errors.ts';
import { isoWithOffset } from '../time.ts';
import { parsePublicKey } from './keys.ts';

/** Keys an account may hold. */
export const MAX_KEYS = 50;

/**
 * The account's keys among `ids`, id → OpenSSH line (stored normalised). Ids of other accounts'
 * keys are simply absent, like ids that do not exist. Runs in the caller's transaction when given one.
 */
export async function keyLines(
  db: Kysely<DB>,
  accountId: number,
  ids: readonly number[],
): Promise<Map<number, string>> {
  if (ids.length === 0) return new Map();
  const rows = await db
    .selectFrom('ssh_keys')
    .select(['id', 'public_key'])
    .where('account_id', '=', accountId)
    .where('id', 'in', [...ids])
    .orderBy('id')
    .execute();
  return new Map(rows.map((r) => [r.id, r.public_key]));
}

export function createSshKeyService({ db }: { db: Kysely<DB> }) {
  return {
    list: (accountId: number): Promise<SshKey[]> =>
      db.selectFrom('ssh_keys').selectAll().where('account_id', '=', accountId).orderBy('id').execute(),

    async add(accountId: number, input: { name: unknown; public_key: unknown }): Promise<SshKey> {
      const problems: Record<string, string> = {};
      const name = typeof input.name === 'string' ? input.name.trim() : '';
      if (name.length < 1 || name.length > 64) problems.name = 'must be 1 to 64 characters';
      else {
        const bad = freeTextProblem(name, { multiline: false });
        if (bad) problems.name = bad;
      }
      let parsed: ReturnType<typeof parsePublicKey> | null = null;
      if (typeof input.public_key !== 'string') problems.public_key = 'is required: the one line of an id_*.pub file';
      else {
        try {
          parsed = parsePublicKey(input.public_key);
        } catch (error) {
          if (error instanceof AppError && error.fields) Object.assign(problems, error.fields);
          else throw error;
        }
      }
      if (Object.keys(problems).length > 0 || !parsed) throw AppError.fields(problems);
      const key = parsed;
      return db.transaction().execute(async (trx) => {
        const count = await trx
          .selectFrom('ssh_keys')
          .select((eb) => eb.fn.countAll<string>().as('n'))
          .where('account_id', '=', accountId)
          .executeTakeFirstOrThrow();
        if (Number(count.n) >= MAX_KEYS) {
          throw new AppError('limit_reached', {
            message: `An account holds at most ${MAX_KEYS} SSH keys.`,
            details: { limit: MAX_KEYS },
          });
        }
        const row = await trx
          .insertInto('ssh_keys')
          .values({
            account_id: accountId,
            name,
            public_key: key.normalized,
            key_type: key.type,
            bits: key.bits,
            fingerprint: key.fingerprint,
          })
          .onConflict((oc) => oc.columns(['account_id', 'fingerprint']).doNothing())
          .returningAll()
          .executeTakeFirst();
        if (!row) {
          throw AppError.fields(
            { public_key: `is already on your account (${key.fingerprint})` },
            'This key is already on your account.',
          );
        }
        return row;
      });
    },

    async remove(accountId: number, id: number): Promise<SshKey> {
      const row = await db
        .deleteFrom('ssh_keys')
        .where('id', '=', id)
        .where('account_id', '=', accountId)
        .returningAll()
        .executeTakeFirst();
      if (!row) throw new AppError('not_owner');
      return row;
    },

    /** The public keys of these ids, all the account's (404 not_owner for any other). */
    async resolve(accountId: number, ids: number[]): Promise<string[]> {
      const found = await keyLines(db, accountId, ids);
      if (found.size !== new Set(ids).size)
        throw new AppError('not_owner', { message: 'No such SSH key on your account.' });
      return [...found.values()];
    },
  };
}

export type SshKeyService = ReturnType<typeof createSshKeyService>;

export function sshKeyView(k: SshKey) {
  return {
    id: k.id,
    name: k.name,
    type: k.key_type,
    bits: k.bits,
    fingerprint: k.fingerprint,
    public_key: k.public_key,
    created_at: isoWithOffset(k.created_at),
  };
}

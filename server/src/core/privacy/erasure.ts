// Erasing accounts whose deletion is due (CONTRACT §11): the `account.deletions` job every hour, and
// `npm run admin -- accounts deletions run [--at ISO]`. Each account in one transaction under a lock
// on its row, checked again (still due, still nothing in the way; if something new stands in the
// way, the deletion is called off and the customer told why). Then:
//
// - the account row stays as a tombstone (orders, invoices and the ledger point at it): its name,
//   e-mail address and username are replaced (`deleted-<id>@invalid`, an address no one can
//   register, so the old one is free for a new account), its password hash is unusable, and it is
//   marked deleted (and suspended, so every check that refuses a suspended account refuses it);
// - every other table that points at the account is emptied of its rows — sessions, API tokens and
//   their request log, SSH keys, two-factor secrets and recovery codes, e-mail links and sign-in
//   codes, billing details, notifications, queued and sent mail, exports, idempotency records,
//   consoles — found from the database's foreign keys, so a table added later is erased too
//   unless it is listed in KEPT with the reason it must stay;
// - the kept tables lose what identifies the customer and serves no record: service credentials,
//   SSH public keys (their comments are often an e-mail address) in service and order settings and
//   job parameters, notes to staff, deposit proof files (deleted from disk after the commit).
//
// Tax invoices and credit notes are not touched: they are immutable and kept 8 years with the buyer
// they were made out to (CGST Act s.36). The ledger is append-only and stays.

import { rm } from 'node:fs/promises';
import { join } from 'node:path';
import { type Kysely, sql, type Transaction } from 'kysely';
import type { DB } from '../../db/tables.ts';
import { uploadDirs } from '../deposits/uploads.ts';
import { AppError } from '../errors.ts';
import { counted } from '../words.ts';
import { deletionBlockers } from './blockers.ts';
import { deletionStoppedMail } from './mails.ts';
import type { PrivacyOptions } from './options.ts';

/** Tables with a foreign key to accounts that keep the account's rows, and why. */
export const KEPT: Readonly<Record<string, string>> = {
  wallets: 'the balance the ledger adds up to (₹0.00 by then); the ledger rows hang from it',
  orders: 'what was sold and paid for, which the invoices point at (kept 8 years); SSH keys removed',
  services: 'what the orders and invoices were for; credentials and SSH keys removed',
  jobs: 'the history of work on those services; passwords and SSH keys removed from the parameters',
  service_requests: "staff decisions about those services; the customer's note removed",
  invoices: 'tax invoices and credit notes: immutable, kept 8 years with the buyer as issued (CGST Act s.36)',
  deposits: 'the record of money received and refunded; the proof file deleted',
  ipv4_addresses: 'the address pool: the column names the current holder of an address, none once terminated',
};

export interface ErasureAction {
  account: number;
  action: 'erased' | 'stopped' | 'would_erase' | 'would_stop' | 'failed';
  detail: string;
}

/** The (table, column) pairs whose foreign key points at accounts, children before parents. */
async function referencingTables(db: Kysely<DB>): Promise<{ table: string; column: string }[]> {
  const { rows } = await sql<{ table: string; column: string }>`
    select child.relname as "table", a.attname as "column"
    from pg_constraint c
    join pg_class child on child.oid = c.conrelid
    join pg_namespace n on n.oid = child.relnamespace
    join pg_attribute a on a.attrelid = c.conrelid and a.attnum = c.conkey[1]
    where c.contype = 'f' and c.confrelid = 'public.accounts'::regclass and n.nspname = 'public'
      and array_length(c.conkey, 1) = 1
    order by child.relname, a.attname`.execute(db);
  const { rows: edges } = await sql<{ child: string; parent: string }>`
    select child.relname as child, parent.relname as parent
    from pg_constraint c
    join pg_class child on child.oid = c.conrelid
    join pg_class parent on parent.oid = c.confrelid
    join pg_namespace n on n.oid = child.relnamespace
    where c.contype = 'f' and n.nspname = 'public' and child.oid <> parent.oid`.execute(db);
  // A table's rows go before the rows of the tables it points at (a restricting key would refuse).
  const depth = new Map<string, number>();
  const depthOf = (table: string, seen: Set<string>): number => {
    const known = depth.get(table);
    if (known !== undefined) return known;
    if (seen.has(table)) return 0;
    seen.add(table);
    const children = edges.filter((e) => e.parent === table).map((e) => e.child);
    const d = children.length === 0 ? 0 : 1 + Math.max(...children.map((c) => depthOf(c, seen)));
    depth.set(table, d);
    return d;
  };
  return rows.sort((x, y) => depthOf(x.table, new Set()) - depthOf(y.table, new Set()));
}

/** Erase one account in `trx` (see the file's comment); returns the proof files to delete once committed. */
async function eraseAccount(
  trx: Transaction<DB>,
  account: { id: number; email: string },
  at: Date,
  tables: { table: string; column: string }[],
): Promise<string[]> {
  const id = account.id;
  for (const { table, column } of tables) {
    if (table in KEPT) continue;
    await sql`delete from ${sql.table(table)} where ${sql.ref(column)} = ${id}`.execute(trx);
  }
  // Mail the account never owned (or that outlived the link): by address.
  await trx.deleteFrom('mail_outbox').where('to_address', '=', account.email).execute();
  await sql`update orders set config = config - 'ssh_keys' where account_id = ${id} and config ? 'ssh_keys'`.execute(
    trx,
  );
  await sql`update services set credentials_sealed = null, user_data_sealed = null, config = config - 'ssh_keys'
    where account_id = ${id}`.execute(trx);
  await sql`update jobs set params = params - 'ssh_keys' - 'password' - 'root_password'
    where account_id = ${id} and (params ? 'ssh_keys' or params ? 'password' or params ? 'root_password')`.execute(trx);
  await trx.updateTable('service_requests').set({ note: null }).where('account_id', '=', id).execute();
  const proofs = await trx
    .selectFrom('deposits')
    .select('screenshot_file')
    .where('account_id', '=', id)
    .where('screenshot_file', 'is not', null)
    .forUpdate()
    .execute();
  await trx
    .updateTable('deposits')
    .set({ screenshot_file: null, screenshot_type: null, screenshot_bytes: null, proof_erased_at: at })
    .where('account_id', '=', id)
    .where('screenshot_file', 'is not', null)
    .execute();
  await trx
    .updateTable('accounts')
    .set({
      name: 'Deleted account',
      email: `deleted-${id}@invalid`,
      username: `deleted#${id}`,
      // Not an argon2 hash: no password can ever match it.
      password_hash: '!deleted',
      suspended_at: at,
      suspended_reason: 'deleted',
      deleted_at: at,
      deletion_requested_at: null,
      deletion_scheduled_for: null,
      updated_at: at,
    })
    .where('id', '=', id)
    .execute();
  return proofs.map((p) => p.screenshot_file as string);
}

async function turn(options: PrivacyOptions, accountId: number, at: Date, dryRun: boolean): Promise<ErasureAction> {
  const { db } = options;
  const tables = await referencingTables(db);
  const files: string[] = [];
  let email = '';
  let username = '';
  const action = await db.transaction().execute(async (trx): Promise<ErasureAction> => {
    const { rows } = await sql<{ id: number; name: string; email: string; username: string; due: Date | null }>`
      select id, name, email, username, deletion_scheduled_for as due from accounts
      where id = ${accountId} and deleted_at is null for update`.execute(trx);
    const account = rows[0];
    if (!account || account.due === null || account.due > at) {
      return { account: accountId, action: 'failed', detail: 'no longer due (cancelled meanwhile)' };
    }
    const reasons = await deletionBlockers(trx, accountId, at);
    if (reasons.length > 0) {
      if (dryRun) return { account: accountId, action: 'would_stop', detail: reasons.map((r) => r.code).join(', ') };
      await trx
        .updateTable('accounts')
        .set({ deletion_requested_at: null, deletion_scheduled_for: null, updated_at: at })
        .where('id', '=', accountId)
        .execute();
      await deletionStoppedMail(
        options.mailer,
        trx,
        options.publicUrl,
        account,
        reasons.map((r) => r.message),
      );
      return { account: accountId, action: 'stopped', detail: reasons.map((r) => r.code).join(', ') };
    }
    if (dryRun) return { account: accountId, action: 'would_erase', detail: `due ${account.due.toISOString()}` };
    files.push(...(await eraseAccount(trx, account, at, tables)));
    // Token caches drop the account's tokens and open consoles close, here and in every process.
    await options.bus.publish(trx, { topic: 'account', id: accountId });
    await options.bus.publish(trx, { topic: 'access_revoked', id: accountId });
    email = account.email;
    username = account.username;
    return { account: accountId, action: 'erased', detail: `${counted(files.length, 'proof file')}` };
  });
  if (action.action !== 'erased') return action;
  const dir = uploadDirs(options.dataDir).deposits;
  for (const file of files) {
    await rm(join(dir, file), { force: true }).catch((error: unknown) =>
      options.logger.warn(
        { err: error, account: accountId },
        'a deposit proof file of an erased account was not deleted',
      ),
    );
  }
  // Counters keyed by what was typed (the e-mail address, the username) go too.
  for (const key of [email, username]) {
    for (const name of ['otp_request_identifier', 'otp_verify_identifier', 'forgot_identifier'] as const) {
      await options.limits.reset(name, key).catch(() => {});
    }
  }
  return action;
}

/**
 * Erase every account whose deletion is due at `at` (default now), each in its own transaction; with
 * `dryRun`, say what would happen. An account that fails is reported and left for the next run.
 */
export async function runDeletions(
  options: PrivacyOptions,
  input: { at?: Date; dryRun?: boolean } = {},
): Promise<ErasureAction[]> {
  const at = input.at ?? options.clock();
  const due = await options.db
    .selectFrom('accounts')
    .select('id')
    .where('deletion_scheduled_for', '<=', at)
    .where('deleted_at', 'is', null)
    .orderBy('deletion_scheduled_for')
    .orderBy('id')
    .execute();
  const actions: ErasureAction[] = [];
  for (const { id } of due) {
    try {
      actions.push(await turn(options, id, at, input.dryRun ?? false));
    } catch (error) {
      options.logger.error({ err: error, account: id }, 'account erasure failed; retried on the next run');
      actions.push({
        account: id,
        action: 'failed',
        detail: error instanceof AppError ? error.message : 'failed; retried on the next run',
      });
    }
  }
  return actions;
}

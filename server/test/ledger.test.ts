// The wallet ledger (CONTRACT §3; reliability T1, T11): balance == sum of rows, never negative,
// append-only, one credit per deposit whatever races.

import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import fc from 'fast-check';
import { sql } from 'kysely';
import { AppError } from '../src/core/errors.ts';
import { post } from '../src/core/wallet/ledger.ts';
import { createAccount } from './support/factories.ts';
import { createTestApp, type TestApp } from './support/harness.ts';
import { receivedPng } from './support/uploads.ts';

let t: TestApp;
before(async () => {
  t = await createTestApp();
});
after(() => t.close());

async function ledgerState(accountId: number) {
  const db = t.deps.database.db;
  const wallet = await db
    .selectFrom('wallets')
    .select('balance_paise')
    .where('account_id', '=', accountId)
    .executeTakeFirst();
  const { rows } = await sql<{ sum: string | null; n: string }>`
    select sum(amount_paise) as sum, count(*) as n from wallet_transactions where account_id = ${accountId}`.execute(
    db,
  );
  return {
    balance: BigInt(wallet?.balance_paise ?? '0'),
    sum: BigInt(rows[0]?.sum ?? '0'),
    rows: Number(rows[0]?.n ?? '0'),
  };
}

async function pendingDeposit(accountId: number, paise: bigint, ref: string) {
  return t.deps.deposits.submit(accountId, {
    amount: (Number(paise) / 100).toFixed(2),
    txnRef: ref,
    upload: await receivedPng(t.dataDir),
  });
}

describe('ledger', () => {
  test('property: any sequence of credits, approvals and debits keeps balance == sum of rows, never negative', async () => {
    let run = 0;
    const op = fc.oneof(
      fc.record({ kind: fc.constant('credit' as const), paise: fc.bigInt({ min: 1n, max: 500_000n }) }),
      fc.record({ kind: fc.constant('debit' as const), paise: fc.bigInt({ min: 1n, max: 700_000n }) }),
      fc.record({ kind: fc.constant('deposit' as const), paise: fc.bigInt({ min: 100n, max: 300_000n }) }),
    );
    await fc.assert(
      fc.asyncProperty(fc.array(op, { minLength: 1, maxLength: 12 }), async (ops) => {
        const { account } = await createAccount(t);
        let model = 0n;
        for (const [i, o] of ops.entries()) {
          if (o.kind === 'credit') {
            await t.deps.database.db
              .transaction()
              .execute((trx) => post(trx, account.id, { kind: 'adjustment', amountPaise: o.paise }));
            model += o.paise;
          } else if (o.kind === 'deposit') {
            const deposit = await pendingDeposit(account.id, o.paise, `PROP${run}X${i}X${account.id}`);
            await t.deps.deposits.approve(deposit.id, 'staff:test');
            model += o.paise;
          } else {
            try {
              await t.deps.database.db
                .transaction()
                .execute((trx) => post(trx, account.id, { kind: 'order', amountPaise: -o.paise }));
              model -= o.paise;
            } catch (error) {
              assert.ok(error instanceof AppError && error.code === 'insufficient_funds');
              assert.ok(o.paise > model, 'refused only when the balance did not cover it');
            }
          }
          const state = await ledgerState(account.id);
          assert.equal(state.balance, model);
          assert.equal(state.sum, state.balance);
          assert.ok(state.balance >= 0n);
        }
        run++;
      }),
      { numRuns: 25 },
    );
  });

  test('an uncovered debit is refused with balance, required and shortfall, and writes nothing', async () => {
    const { account } = await createAccount(t);
    await t.deps.wallet.credit(account.id, '100.00', 'test float');
    await assert.rejects(
      t.deps.database.db.transaction().execute((trx) => post(trx, account.id, { kind: 'order', amountPaise: -15050n })),
      (error: unknown) => {
        assert.ok(error instanceof AppError);
        assert.equal(error.code, 'insufficient_funds');
        assert.deepEqual(error.details, { balance: '100.00', required: '150.50', shortfall: '50.50', currency: 'INR' });
        return true;
      },
    );
    assert.deepEqual(await ledgerState(account.id), { balance: 10000n, sum: 10000n, rows: 1 });
  });

  test('40 concurrent debits of 30.00 against 1000.00: exactly 33 succeed, balance 10.00', async () => {
    const { account } = await createAccount(t);
    await t.deps.wallet.credit(account.id, '1000', 'test float');
    const results = await Promise.allSettled(
      Array.from({ length: 40 }, () =>
        t.deps.database.db
          .transaction()
          .execute((trx) => post(trx, account.id, { kind: 'order', amountPaise: -3000n })),
      ),
    );
    assert.equal(results.filter((r) => r.status === 'fulfilled').length, 33);
    assert.ok(
      results.every(
        (r) => r.status === 'fulfilled' || (r.reason instanceof AppError && r.reason.code === 'insufficient_funds'),
      ),
    );
    assert.deepEqual(await ledgerState(account.id), { balance: 1000n, sum: 1000n, rows: 34 });
  });

  test('the ledger is append-only: the database refuses UPDATE and DELETE', async () => {
    const { account } = await createAccount(t);
    const row = await t.deps.wallet.credit(account.id, '5', 'test');
    const db = t.deps.database.db;
    await assert.rejects(
      db.updateTable('wallet_transactions').set({ amount_paise: '999999' }).where('id', '=', row.id).execute(),
      /append-only/,
    );
    await assert.rejects(db.deleteFrom('wallet_transactions').where('id', '=', row.id).execute(), /append-only/);
    await assert.rejects(
      db.updateTable('wallets').set({ balance_paise: '-1' }).where('account_id', '=', account.id).execute(),
      /check/i,
    );
  });
});

describe('deposit approval', () => {
  test('20 concurrent approvals of one deposit: one credit, one notification, one mail', async () => {
    const { account } = await createAccount(t);
    const deposit = await pendingDeposit(account.id, 250_000n, `RACE${account.id}`);
    const results = await Promise.allSettled(
      Array.from({ length: 20 }, () => t.deps.deposits.approve(deposit.id, 'staff:test')),
    );
    assert.equal(results.filter((r) => r.status === 'fulfilled').length, 1);
    for (const r of results) if (r.status === 'rejected') assert.equal((r.reason as AppError).code, 'conflict');
    assert.deepEqual(await ledgerState(account.id), { balance: 250_000n, sum: 250_000n, rows: 1 });
    const db = t.deps.database.db;
    assert.equal(
      (await db.selectFrom('notifications').select('id').where('account_id', '=', account.id).execute()).length,
      1,
    );
    const mails = await db
      .selectFrom('mail_outbox')
      .select('template')
      .where('account_id', '=', account.id)
      .where('template', '=', 'deposit_approved')
      .execute();
    assert.equal(mails.length, 1);
  });

  test('approve racing reject: exactly one terminal state, and money only if approved', async () => {
    for (let round = 0; round < 5; round++) {
      const { account } = await createAccount(t);
      const deposit = await pendingDeposit(account.id, 10_000n, `AR${account.id}R${round}`);
      const results = await Promise.allSettled([
        t.deps.deposits.approve(deposit.id, 'staff:a'),
        t.deps.deposits.reject(deposit.id, 'staff:b', 'no such payment'),
        t.deps.deposits.approve(deposit.id, 'staff:c'),
        t.deps.deposits.reject(deposit.id, 'staff:d', 'duplicate'),
      ]);
      assert.equal(results.filter((r) => r.status === 'fulfilled').length, 1);
      const final = await t.deps.deposits.get(deposit.id);
      const state = await ledgerState(account.id);
      assert.equal(state.balance, final.status === 'approved' ? 10_000n : 0n);
      assert.equal(state.rows, final.status === 'approved' ? 1 : 0);
    }
  });

  test('reject needs a reason and sends the client one', async () => {
    const { account } = await createAccount(t);
    const deposit = await pendingDeposit(account.id, 5_000n, `REJ${account.id}`);
    await assert.rejects(t.deps.deposits.reject(deposit.id, 'staff:x', ' '), /invalid/);
    const { deposit: rejected } = await t.deps.deposits.reject(
      deposit.id,
      'staff:x',
      'UTR not found in bank statement',
    );
    assert.equal(rejected.status, 'rejected');
    assert.equal(rejected.reviewed_by, 'staff:x');
    const note = await t.deps.database.db
      .selectFrom('notifications')
      .selectAll()
      .where('account_id', '=', account.id)
      .executeTakeFirstOrThrow();
    assert.match(note.body, /UTR not found in bank statement/);
  });
});

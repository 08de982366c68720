// The maintenance sweep: what it deletes (expired sessions and codes, request-log rows past
// their retention, spent console tickets), what it keeps, and the embedded database's vacuum.

import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { sql } from 'kysely';
import { seedDemoCatalog } from '../src/core/catalog/demo-seed.ts';
import { analyzeEmbedded, sweep, vacuumEmbedded } from '../src/core/housekeeping.ts';
import { REQUEST_LOG_RETENTION_DAYS } from '../src/core/tokens/request-log.ts';
import { createAccount } from './support/factories.ts';
import { createTestApp, onPostgres, type TestApp } from './support/harness.ts';

const DAY_MS = 86_400_000;
let t: TestApp;

before(async () => {
  t = await createTestApp();
  await seedDemoCatalog(t.deps.database.db);
});
after(() => t.close());

describe('maintenance sweep', () => {
  test('request-log rows past retention and spent console tickets go; recent ones stay', async () => {
    const { db } = t.deps.database;
    const now = new Date();
    const { account } = await createAccount(t);
    const token = await t.deps.tokens.create(account.id, { name: 'ci', scopes: ['read'] });
    const old = new Date(now.getTime() - (REQUEST_LOG_RETENTION_DAYS + 1) * DAY_MS);
    const recent = new Date(now.getTime() - (REQUEST_LOG_RETENTION_DAYS - 1) * DAY_MS);
    const row = (created_at: Date, path: string) => ({
      token_id: token.token.id,
      account_id: account.id,
      method: 'GET',
      path,
      status: 200,
      ip: '203.0.113.9',
      duration_ms: 3,
      created_at,
    });
    await db
      .insertInto('api_request_log')
      .values([row(old, '/api/v1/old'), row(recent, '/api/v1/recent')])
      .execute();

    const plan = await db.selectFrom('plans').selectAll().where('label', '=', 'vps-1c-1g').executeTakeFirstOrThrow();
    const location = await t.deps.catalog.location('mum1');
    const service = await db
      .insertInto('services')
      .values({
        account_id: account.id,
        plan_id: plan.id,
        type: 'vps',
        label: 'sweepme',
        status: 'active',
        location_id: location.id,
        price_paise: plan.price_paise,
        config: JSON.stringify({}),
      })
      .returning('id')
      .executeTakeFirstOrThrow();
    const ticket = (hash: string, expires_at: Date) => ({
      ticket_hash: hash,
      account_id: account.id,
      service_id: service.id,
      kind: 'vnc' as const,
      upstream_sealed: 'x',
      expires_at,
    });
    await db
      .insertInto('console_tickets')
      .values([
        ticket('spent', new Date(now.getTime() - 2 * 3_600_000)),
        ticket('live', new Date(now.getTime() + 60_000)),
      ])
      .execute();

    // Console sessions: one whose lease lapsed (its process died), one still renewed.
    await db
      .insertInto('console_sessions')
      .values([
        { account_id: account.id, service_id: service.id, node_id: 1, expires_at: new Date(now.getTime() - 1000) },
        { account_id: account.id, service_id: service.id, node_id: 1, expires_at: new Date(now.getTime() + 60_000) },
      ])
      .execute();

    const removed = await sweep(db, now);
    assert.equal(removed.request_log, 1);
    assert.equal(removed.console_tickets, 1);
    assert.equal(removed.console_sessions, 1);
    const left = await db.selectFrom('console_sessions').select('expires_at').execute();
    assert.equal(left.length, 1);
    assert.ok((left[0]?.expires_at as Date).getTime() > now.getTime());
    const paths = await db.selectFrom('api_request_log').select('path').execute();
    assert.deepEqual(
      paths.map((p) => p.path),
      ['/api/v1/recent'],
    );
    const tickets = await db.selectFrom('console_tickets').select('ticket_hash').execute();
    assert.deepEqual(
      tickets.map((r) => r.ticket_hash),
      ['live'],
    );
    assert.equal((await sweep(db, now)).request_log, 0, 'a second sweep finds nothing');
    // The delete by age reads the log's time index, a BRIN since migration 0019 (cheaper to write).
    const index = await sql<{ indexdef: string }>`
      select indexdef from pg_indexes where indexname = 'api_request_log_created_idx'`.execute(db);
    assert.match(index.rows[0]?.indexdef ?? '', /USING brin \(created_at\)/);
  });

  test('embedded: vacuum and analyze give the planner statistics', {
    skip: onPostgres && 'embedded only',
  }, async () => {
    const { db } = t.deps.database;
    await analyzeEmbedded(db);
    await vacuumEmbedded(db);
    const { rows } = await sql<{ n: string }>`
      select count(*) as n from pg_stat_user_tables where relname = 'plans' and last_analyze is not null`.execute(db);
    assert.equal(rows[0]?.n, '1');
  });
});

// Change notices for in-memory read caches. The instance lists of every surface are
// served from a per-account cache (core/services/list-cache.ts); whatever changes what a list
// shows — a service, its address, an unpaid renewal, a plan's or location's name, a node — and
// whatever ends or changes a cached session must
// reach every process's cache, whichever process or tool wrote it (the worker, the staff CLI,
// psql). So the database says it: triggers NOTIFY on the bus's channel (core/bus.ts), which
// PostgreSQL delivers on commit to every listening process (PGlite to its one process), and
// collapses into one message per account and transaction. The writing process itself drops its
// entries at commit already (db/observed.ts).

import { type Kysely, sql } from 'kysely';

const CHANNEL = 'hostplane_invalidate';
const OWNED = ['services', 'ipv4_addresses', 'orders'] as const;
/** Table → [topic, the events that matter]. */
const SHARED: Record<string, [string, string]> = {
  plans: ['catalog', 'insert or update or delete or truncate'],
  locations: ['catalog', 'insert or update or delete or truncate'],
  nodes: ['nodes', 'insert or update or delete or truncate'],
  // Cached sessions (core/auth/sessions.ts): a logout, a suspension, a changed name or e-mail.
  // Not a new session (nobody has it cached), nor the touch of `last_seen_at` once a minute
  // (an entry lives seconds; the idle limit is hours).
  sessions: ['sessions', 'delete or update of id_hash, account_id, remember, expires_at or truncate'],
  accounts: ['sessions', 'update or delete or truncate'],
};

export async function up(db: Kysely<unknown>): Promise<void> {
  // Row by row: one message per account written (identical messages of a transaction are sent once).
  await sql`
    create function hp_notice_account() returns trigger language plpgsql as $$
    begin
      if tg_op <> 'INSERT' and old.account_id is not null then
        perform pg_notify(${sql.lit(CHANNEL)}, json_build_object('topic', 'account_services', 'id', old.account_id)::text);
      end if;
      if tg_op <> 'DELETE' and new.account_id is not null then
        perform pg_notify(${sql.lit(CHANNEL)}, json_build_object('topic', 'account_services', 'id', new.account_id)::text);
      end if;
      return null;
    end $$`.execute(db);
  // Once per statement: the topic is the trigger's argument.
  await sql`
    create function hp_notice_topic() returns trigger language plpgsql as $$
    begin
      perform pg_notify(${sql.lit(CHANNEL)}, json_build_object('topic', tg_argv[0])::text);
      return null;
    end $$`.execute(db);
  for (const table of OWNED) {
    await sql`create trigger ${sql.id(`${table}_notice`)} after insert or update or delete on ${sql.table(table)}
      for each row execute function hp_notice_account()`.execute(db);
  }
  for (const [table, [topic, events]] of Object.entries(SHARED)) {
    await sql`create trigger ${sql.id(`${table}_notice`)} after ${sql.raw(events)} on ${sql.table(table)}
      for each statement execute function hp_notice_topic(${sql.lit(topic)})`.execute(db);
  }
}

export async function down(db: Kysely<unknown>): Promise<void> {
  for (const table of [...OWNED, ...Object.keys(SHARED)])
    await sql`drop trigger if exists ${sql.id(`${table}_notice`)} on ${sql.table(table)}`.execute(db);
  await sql`drop function if exists hp_notice_account()`.execute(db);
  await sql`drop function if exists hp_notice_topic()`.execute(db);
}

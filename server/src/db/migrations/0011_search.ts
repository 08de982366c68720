// Search (spec 4.13, CONTRACT §8, issue 15): `hp_fold` makes text case- and accent-insensitive
// (an immutable function, so expressions over it can be indexed), and trigram indexes over the
// folded text columns a client searches serve substring (`LIKE '%…%'`) and fuzzy (`<%`) matches;
// a GiST index serves address-in-prefix (`<<=`). Every search is also scoped to one account,
// whose rows the (account_id, id) indexes of each table already find.

import { type Kysely, sql } from 'kysely';

const FROM = 'àáâãäåāăąçćčďđèéêëēėęěìíîïīįıłñńňòóôõöøōőùúûüūůűųýÿžźżśšşğřť';
const TO = 'aaaaaaaaacccddeeeeeeeeiiiiiiilnnnoooooooouuuuuuuuyyzzzsssgrt';

export async function up(db: Kysely<unknown>): Promise<void> {
  if ([...FROM].length !== [...TO].length) throw new Error('hp_fold: the two maps differ in length');
  await sql`
    create function hp_fold(t text) returns text
    language sql immutable parallel safe returns null on null input
    as ${sql.raw(`$$ select translate(lower(t), '${FROM}', '${TO}') $$`)}`.execute(db);
  await sql`create index services_search_label_idx on services using gin (hp_fold(label) gin_trgm_ops)`.execute(db);
  await sql`create index services_search_host_idx on services using gin (hp_fold(config->>'hostname') gin_trgm_ops)`.execute(
    db,
  );
  await sql`create index services_search_domain_idx on services using gin (hp_fold(config->>'domain') gin_trgm_ops)`.execute(
    db,
  );
  await sql`create index wallet_transactions_search_note_idx on wallet_transactions using gin (hp_fold(note) gin_trgm_ops)`.execute(
    db,
  );
  await sql`create index deposits_search_ref_idx on deposits using gin (hp_fold(txn_ref) gin_trgm_ops)`.execute(db);
  await sql`create index ipv4_search_address_idx on ipv4_addresses using gist (address inet_ops)`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  for (const index of [
    'ipv4_search_address_idx',
    'deposits_search_ref_idx',
    'wallet_transactions_search_note_idx',
    'services_search_domain_idx',
    'services_search_host_idx',
    'services_search_label_idx',
  ])
    await sql`drop index if exists ${sql.id(index)}`.execute(db);
  await sql`drop function if exists hp_fold(text)`.execute(db);
}

// Search (spec 4.13, CONTRACT §8, issue 15). Every search is scoped to one account, so every
// index it uses leads with the account: its cost follows the account's rows, not the table's.
//
// - `hp_fold` makes text case- and accent-insensitive; immutable, so expressions over it index.
// - Per searchable table, one folded text holds every text a client searches on that row
//   (services: label, hostname, domain; orders: public id, domain; ledger: public id, note;
//   deposits: public id, reference), as a stored generated column `search_text`: folding
//   (translate over a long map) costs tens of microseconds a row, so it is paid once per write,
//   not per row searched. It is indexed with GIN as (account_id, search_text gin_trgm_ops)
//   (btree_gin puts the integer in the same GIN index): substring `LIKE '%…%'` and fuzzy `<%`
//   intersect the account's posting list with the trigrams' instead of scanning the account.
//   Services and orders carry the plan id in the same index (a plan's name matches by id),
//   services their location and type too (`loc:`, `type:vps`).
// - Addresses: `ipv4_addresses.account_id` is the owner of the service holding the address,
//   kept by a trigger (the row's service_id decides it, whoever writes it), indexed with the
//   address so a CIDR is one range of one account's addresses (the planner derives the range
//   of `<<=` for a btree).
// - Operators (`status:`) find an account's rows of a status through (account_id, status).

import { type Kysely, sql } from 'kysely';

const FROM = 'àáâãäåāăąçćčďđèéêëēėęěìíîïīįıłñńňòóôõöøōőùúûüūůűųýÿžźżśšşğřť';
const TO = 'aaaaaaaaacccddeeeeeeeeiiiiiiilnnnoooooooouuuuuuuuyyzzzsssgrt';

/** The folded text searched per table (the generated column's expression). */
function searchText(table: SearchTable): string {
  switch (table) {
    case 'services':
      return `hp_fold(coalesce(label, '') || ' ' || coalesce(config->>'hostname', '') || ' ' || coalesce(config->>'domain', ''))`;
    case 'orders':
      return `hp_fold(public_id || ' ' || coalesce(domain, ''))`;
    case 'wallet_transactions':
      return `hp_fold(public_id || ' ' || coalesce(note, ''))`;
    case 'deposits':
      return `hp_fold(public_id || ' ' || txn_ref)`;
  }
}
type SearchTable = 'services' | 'orders' | 'wallet_transactions' | 'deposits';
const SEARCH_TABLES: SearchTable[] = ['services', 'orders', 'wallet_transactions', 'deposits'];
/**
 * The columns beside the account and the text in each table's GIN index: a plan's name matches
 * by plan id, and `loc:` / `type:` narrow services inside the same index.
 */
const ALSO_INDEXED: Record<SearchTable, string> = {
  services: 'plan_id, location_id, type, ',
  orders: 'plan_id, ',
  wallet_transactions: '',
  deposits: '',
};

export async function up(db: Kysely<unknown>): Promise<void> {
  if ([...FROM].length !== [...TO].length) throw new Error('hp_fold: the two maps differ in length');
  await sql`create extension if not exists btree_gin`.execute(db);
  await sql`
    create function hp_fold(t text) returns text
    language sql immutable parallel safe returns null on null input
    as ${sql.raw(`$$ select translate(lower(t), '${FROM}', '${TO}') $$`)}`.execute(db);
  for (const table of SEARCH_TABLES) {
    await sql`alter table ${sql.table(table)}
      add column search_text text generated always as (${sql.raw(searchText(table))}) stored`.execute(db);
    await sql`create index ${sql.id(`${table}_search_idx`)} on ${sql.table(table)}
      using gin (account_id, ${sql.raw(ALSO_INDEXED[table])}search_text gin_trgm_ops)`.execute(db);
  }
  for (const table of ['services', 'orders', 'deposits'])
    await sql`create index ${sql.id(`${table}_status_idx`)} on ${sql.table(table)} (account_id, status)`.execute(db);

  await sql`alter table ipv4_addresses add column account_id integer references accounts (id)`.execute(db);
  await sql`
    create function hp_ipv4_owner() returns trigger language plpgsql as $$
    begin
      new.account_id := (select s.account_id from services s where s.id = new.service_id);
      return new;
    end $$`.execute(db);
  await sql`
    create trigger ipv4_addresses_owner before insert or update of service_id on ipv4_addresses
    for each row execute function hp_ipv4_owner()`.execute(db);
  await sql`
    update ipv4_addresses ip set account_id = s.account_id
    from services s where s.id = ip.service_id`.execute(db);
  // The service id rides along: a CIDR counts the services it holds from the index alone.
  await sql`create index ipv4_addresses_account_idx on ipv4_addresses (account_id, address) include (service_id)
    where account_id is not null`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`drop trigger if exists ipv4_addresses_owner on ipv4_addresses`.execute(db);
  await sql`drop function if exists hp_ipv4_owner()`.execute(db);
  await sql`alter table ipv4_addresses drop column if exists account_id`.execute(db);
  for (const table of ['services', 'orders', 'deposits'])
    await sql`drop index if exists ${sql.id(`${table}_status_idx`)}`.execute(db);
  for (const table of SEARCH_TABLES) {
    await sql`drop index if exists ${sql.id(`${table}_search_idx`)}`.execute(db);
    await sql`alter table ${sql.table(table)} drop column if exists search_text`.execute(db);
  }
  await sql`drop function if exists hp_fold(text)`.execute(db);
  await sql`drop extension if exists btree_gin`.execute(db);
}

// The request log without foreign keys. Each logged call checked two foreign keys as it was
// written — a lookup and a row lock on its token and its account per row — a large part of a
// row's cost on PGlite, in the same process as the requests. The insert already leaves out
// rows whose token or account is gone (core/tokens/request-log.ts); what the keys' cascades did
// — a deleted token's or account's log goes with it — triggers do now. A token deleted in the
// instant between that check and the batch's commit can leave rows of it, which nobody can read
// and which go with the retention sweep.

import { type Kysely, sql } from 'kysely';

export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`alter table api_request_log drop constraint if exists api_request_log_token_id_fkey`.execute(db);
  await sql`alter table api_request_log drop constraint if exists api_request_log_account_id_fkey`.execute(db);
  await sql`
    create function hp_request_log_forget_token() returns trigger language plpgsql as $$
    begin
      delete from api_request_log where token_id = old.id;
      return null;
    end $$`.execute(db);
  await sql`
    create function hp_request_log_forget_account() returns trigger language plpgsql as $$
    begin
      delete from api_request_log where account_id = old.id;
      return null;
    end $$`.execute(db);
  await sql`create trigger api_tokens_forget_log after delete on api_tokens
    for each row execute function hp_request_log_forget_token()`.execute(db);
  await sql`create trigger accounts_forget_log after delete on accounts
    for each row execute function hp_request_log_forget_account()`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`drop trigger if exists api_tokens_forget_log on api_tokens`.execute(db);
  await sql`drop trigger if exists accounts_forget_log on accounts`.execute(db);
  await sql`drop function if exists hp_request_log_forget_token()`.execute(db);
  await sql`drop function if exists hp_request_log_forget_account()`.execute(db);
  await sql`delete from api_request_log l where (l.token_id is not null and not exists (select 1 from api_tokens t where t.id = l.token_id))
    or (l.account_id is not null and not exists (select 1 from accounts a where a.id = l.account_id))`.execute(db);
  await sql`alter table api_request_log add constraint api_request_log_token_id_fkey
    foreign key (token_id) references api_tokens (id) on delete cascade`.execute(db);
  await sql`alter table api_request_log add constraint api_request_log_account_id_fkey
    foreign key (account_id) references accounts (id) on delete cascade`.execute(db);
}

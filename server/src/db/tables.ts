// Row types of every table, as Kysely sees them. Keep in step with migrations/.
// Conventions: ids are `integer generated always as identity` (JS number); money is bigint
// paise (JS string from pg, converted with BigInt in the core); times are timestamptz (Date).

// biome-ignore lint/complexity/noBannedTypes: tables arrive with the features that own them
export type DB = {};

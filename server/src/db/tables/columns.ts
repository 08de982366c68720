// The column types the table interfaces share (../tables.ts says the conventions): database
// times and money in paise, each as read, as inserted and as updated.

import type { ColumnType } from 'kysely';

/** A timestamptz the database fills in by default. */
export type CreatedAt = ColumnType<Date, Date | string | undefined, Date | string>;
export type Timestamp = ColumnType<Date, Date | string, Date | string>;
export type NullableTimestamp = ColumnType<Date | null, Date | string | null | undefined, Date | string | null>;
/** Money in paise: bigint, read as a string. */
export type Paise = ColumnType<string, bigint | string, bigint | string>;

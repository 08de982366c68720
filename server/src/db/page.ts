// One page of a listing and how many rows the whole listing has, as the paginated lists answer
// (`{rows, total}`): both queries start from the same filtered query, so the total always counts
// exactly what the pages walk through.

import type { SelectQueryBuilder } from 'kysely';

export interface Page<Row> {
  rows: Row[];
  total: number;
}

/**
 * Page `page` (from 1) of `perPage` rows of `filtered`: `rows` picks the columns and the order,
 * the count runs on `filtered` as it is. Both run at once.
 */
export async function pageOf<DB, TB extends keyof DB, Row>(
  filtered: SelectQueryBuilder<DB, TB, object>,
  rows: (query: SelectQueryBuilder<DB, TB, object>) => SelectQueryBuilder<DB, TB, Row>,
  page: number,
  perPage: number,
): Promise<Page<Row>> {
  const [list, count] = await Promise.all([
    rows(filtered)
      .limit(perPage)
      .offset((page - 1) * perPage)
      .execute(),
    filtered
      .select((eb) => eb.fn.countAll<string>().as('n'))
      // What the select above gives; a generic builder cannot name it.
      .$castTo<{ n: string }>()
      .executeTakeFirstOrThrow(),
  ]);
  return { rows: list, total: Number(count.n) };
}

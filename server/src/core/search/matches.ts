// SQL conditions the searches share: whether a row's folded text holds the query's text, and
// whether a service's NICs include a MAC. They build SQL only; they run nothing.

import { type RawBuilder, type SqlBool, sql } from 'kysely';
import { textPatterns } from './patterns.ts';

/**
 * Whether `folded` (text already folded by `hp_fold`) holds `text` (textPatterns): the LIKE is what
 * the trigram index serves; the regular expression, only when the text has a space, is called as a
 * function so the planner never makes it an index condition (its character class gives the index
 * no trigrams to look up) and it only rechecks what the LIKE found.
 */
export function holdsText(folded: RawBuilder<unknown>, text: string): RawBuilder<SqlBool> {
  const { like, separated } = textPatterns(text);
  const substring = sql<SqlBool>`${folded} like hp_fold(${like}) escape '\\'`;
  return separated === null
    ? substring
    : sql<SqlBool>`(${substring} and textregexeq(${folded}, hp_fold(${separated})))`;
}

/**
 * Whether a service's NICs include `mac` (lower-case colon form): virtual and bare-metal servers
 * keep theirs in `external.macs`, looked up in their index (migration 0018, on services that have any).
 */
export function hasMac(alias: string, mac: string): RawBuilder<SqlBool> {
  const external = sql.ref(`${alias}.external`);
  return sql<SqlBool>`(${external} ? 'macs' and ${external} -> 'macs' ? ${mac})`;
}

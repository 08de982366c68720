// The search box's grammar (spec 4.13, CONTRACT §8): split `q` into operators (`type:` `status:`
// `loc:` `node:` `user:`) and free text, then name the free text's shape (address, prefix, MAC,
// e-mail, public id, `#id`, domain or plain text) with its normalised value, so the route can
// pick an index-backed lookup per shape. Pure functions: no database, no I/O.
//
// Grammar. Words are separated by white space; double quotes group white space into a word and
// take `\"` and `\\` as escapes (a missing closing quote runs to the end). A word is an operator
// when its unquoted start is `name:` with a name of letters only (any case). A known name takes
// the rest of the word as its value: commas outside quotes separate values, repeated operators
// add values (OR), different operators combine (AND). An unknown name is refused, except where
// the word is a shape that happens to hold a colon: hex-and-colon words (IPv6, MAC, `dead:beef`),
// URLs (`https://…`) and `mailto:`. Quoting a word (`"foo:bar"`) always makes it free text.
//
// The parts: ./query-types.ts (what a parsed query is), ./operators.ts (words and operators),
// ./shapes.ts (the free text's shape), ./patterns.ts (LIKE and regular-expression patterns).

import {
  applyOperator,
  collapse,
  colonShape,
  emptyOperators,
  isOperatorName,
  OPERATOR_HELP,
  operatorValues,
  splitWords,
} from './operators.ts';
import { type ParsedQuery, PRODUCT_TYPES, SEARCH_TYPES, SearchQueryError } from './query-types.ts';
import { detect } from './shapes.ts';

export { typeFilterOf } from './operators.ts';
export { escapeLike, escapeRegex, textPatterns } from './patterns.ts';
export {
  OPERATOR_NAMES,
  type OperatorName,
  type ParsedQuery,
  PRODUCT_TYPES,
  type ProductType,
  SEARCH_TYPES,
  type SearchCidr,
  type SearchKind,
  type SearchOperators,
  SearchQueryError,
  type SearchType,
} from './query-types.ts';

/** Longest accepted query, in Unicode code points after trimming. */
export const MAX_QUERY = 1000;

/** Lone UTF-16 surrogates become U+FFFD, so the text is valid UTF-8 for the database. */
function wellFormed(text: string): string {
  return text.replace(/[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/g, '\uFFFD');
}

/** Parse a search query; throws SearchQueryError (422) for what the grammar refuses. */
export function parseSearch(input: string): ParsedQuery {
  const q = input.trim();
  if (q.length > MAX_QUERY && [...q].length > MAX_QUERY) {
    throw new SearchQueryError(`the query is longer than ${MAX_QUERY} characters`);
  }
  // Control characters (NUL would break PostgreSQL) and invisible zero-width spaces count as spaces.
  const clean = wellFormed(q)
    .normalize('NFC')
    .replace(/[\p{Cc}\u200B\u2060\uFEFF]/gu, ' ');

  const operators = emptyOperators();
  const free: string[] = [];
  for (const segments of splitWords(clean)) {
    const first = segments[0];
    const whole = segments.map((segment) => segment.text).join('');
    const operator = first && !first.quoted ? /^([a-z]+):/i.exec(first.text) : null;
    if (operator && first) {
      const typed = operator[1] ?? '';
      const name = typed.toLowerCase();
      if (isOperatorName(name)) {
        const rest = { text: first.text.slice(operator[0].length), quoted: false };
        applyOperator(operators, name, operatorValues([rest, ...segments.slice(1)]));
        continue;
      }
      if (!colonShape(whole)) {
        throw new SearchQueryError(
          `unknown operator "${typed}:"; ${OPERATOR_HELP} (or put the word in double quotes to search for it)`,
        );
      }
    }
    free.push(whole);
  }

  operators.type.sort((a, b) => SEARCH_TYPES.indexOf(a) - SEARCH_TYPES.indexOf(b));
  operators.product.sort((a, b) => PRODUCT_TYPES.indexOf(a) - PRODUCT_TYPES.indexOf(b));
  const text = collapse(free.join(' '));
  return { q, text, ...detect(text), operators };
}

// The words of a search query and its operators (`type:` `status:` `loc:` `node:` `user:`): how
// `q` splits into words (quotes group white space), which words are operators, and what each
// operator's values add to the query. Pure functions: no database, no I/O.

import {
  OPERATOR_NAMES,
  type OperatorName,
  PRODUCT_TYPES,
  type ProductType,
  SEARCH_TYPES,
  type SearchOperators,
  SearchQueryError,
  type SearchType,
} from './query-types.ts';

type TypeFilter = { type: SearchType } | { product: ProductType };

/**
 * Words naming a product type besides the type itself. Every product type is accepted by its own
 * name (TYPE_WORDS is built from PRODUCT_TYPES), so a new one needs no entry here.
 */
const PRODUCT_ALIASES: Partial<Record<ProductType, readonly string[]>> = {
  vps: ['kvm'],
  game: ['games'],
  baremetal: ['bare-metal'],
};

const TYPE_WORDS: Record<string, TypeFilter> = {
  service: { type: 'service' },
  services: { type: 'service' },
  ip: { type: 'ip' },
  ips: { type: 'ip' },
  order: { type: 'order' },
  orders: { type: 'order' },
  transaction: { type: 'transaction' },
  transactions: { type: 'transaction' },
  deposit: { type: 'deposit' },
  deposits: { type: 'deposit' },
  ...Object.fromEntries(
    PRODUCT_TYPES.flatMap((product) =>
      [product, ...(PRODUCT_ALIASES[product] ?? [])].map((word): [string, TypeFilter] => [word, { product }]),
    ),
  ),
};

/** A `type:` value (any case, singular or plural, or a product type); null when unknown. */
export function typeFilterOf(value: string): TypeFilter | null {
  const key = value.trim().toLowerCase();
  return Object.hasOwn(TYPE_WORDS, key) ? (TYPE_WORDS[key] ?? null) : null;
}

const TYPE_HELP = `use ${SEARCH_TYPES.join(', ')} (or ${PRODUCT_TYPES.join(', ')} for services)`;
export const OPERATOR_HELP = `use ${OPERATOR_NAMES.map((name) => `${name}:`).join(', ')}`;

export interface Segment {
  text: string;
  quoted: boolean;
}

const SPACE = /\s/;

export function splitWords(input: string): Segment[][] {
  const words: Segment[][] = [];
  const n = input.length;
  let i = 0;
  while (i < n) {
    while (i < n && SPACE.test(input.charAt(i))) i++;
    if (i >= n) break;
    const word: Segment[] = [];
    while (i < n && !SPACE.test(input.charAt(i))) {
      let text = '';
      if (input.charAt(i) === '"') {
        i++;
        while (i < n && input.charAt(i) !== '"') {
          const next = input.charAt(i + 1);
          if (input.charAt(i) === '\\' && (next === '"' || next === '\\')) {
            text += next;
            i += 2;
          } else {
            text += input.charAt(i);
            i++;
          }
        }
        i++; // the closing quote, or past the end when it is missing
        word.push({ text, quoted: true });
      } else {
        while (i < n && !SPACE.test(input.charAt(i)) && input.charAt(i) !== '"') {
          text += input.charAt(i);
          i++;
        }
        word.push({ text, quoted: false });
      }
    }
    words.push(word);
  }
  return words;
}

export function collapse(text: string): string {
  return text.replace(/\s+/g, ' ').trim();
}

/** Values of one operator word: commas outside quotes separate them; empty ones are dropped. */
export function operatorValues(segments: Segment[]): string[] {
  const values: string[] = [];
  let current = '';
  for (const segment of segments) {
    if (segment.quoted) {
      current += segment.text;
      continue;
    }
    const parts = segment.text.split(',');
    current += parts[0] ?? '';
    for (const part of parts.slice(1)) {
      values.push(current);
      current = part;
    }
  }
  values.push(current);
  return values.map(collapse).filter((value) => value !== '');
}

/** Words with a `letters:` start that are shapes, not operators. */
export function colonShape(word: string): boolean {
  if (/^[a-z]+:\/\//i.test(word)) return true; // URL
  if (/^mailto:/i.test(word)) return true;
  return /^[0-9a-f]{1,4}:[0-9a-f:.]*(%[^/]*)?(\/\d*)?$/i.test(word); // IPv6, MAC, partial forms
}

export function isOperatorName(name: string): name is OperatorName {
  return (OPERATOR_NAMES as readonly string[]).includes(name);
}

export function emptyOperators(): SearchOperators {
  return { type: [], product: [], status: [], loc: [], node: [], user: [] };
}

function addUnique(list: string[], value: string): void {
  const key = value.toLowerCase();
  if (!list.some((existing) => existing.toLowerCase() === key)) list.push(value);
}

export function applyOperator(operators: SearchOperators, name: OperatorName, values: string[]): void {
  if (values.length === 0) throw new SearchQueryError(`operator "${name}:" needs a value`);
  for (const value of values) {
    if (name === 'type') {
      const filter = typeFilterOf(value);
      if (filter === null) throw new SearchQueryError(`unknown type "${value}" in type:; ${TYPE_HELP}`);
      if ('product' in filter) {
        if (!operators.product.includes(filter.product)) operators.product.push(filter.product);
        if (!operators.type.includes('service')) operators.type.push('service');
      } else if (!operators.type.includes(filter.type)) {
        operators.type.push(filter.type);
      }
    } else if (name === 'status') {
      addUnique(operators.status, value.toLowerCase());
    } else {
      addUnique(operators[name], value);
    }
  }
}

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

import ipaddr from 'ipaddr.js';
import { AppError } from '../errors.ts';
import { PUBLIC_ID } from '../ids.ts';

/** Longest accepted query, in Unicode code points after trimming. */
export const MAX_QUERY = 1000;

export const SEARCH_TYPES = ['service', 'ip', 'order', 'transaction', 'deposit'] as const;
export type SearchType = (typeof SEARCH_TYPES)[number];

/** Service product types, accepted under `type:` as a filter on the service group. */
export const PRODUCT_TYPES = ['vps', 'game', 'web', 'baremetal'] as const;
export type ProductType = (typeof PRODUCT_TYPES)[number];

export const OPERATOR_NAMES = ['type', 'status', 'loc', 'node', 'user'] as const;
export type OperatorName = (typeof OPERATOR_NAMES)[number];

export type SearchKind =
  | 'ipv4'
  | 'ipv6'
  | 'cidr'
  | 'mac'
  | 'email'
  | 'payment_id'
  | 'order_id'
  | 'number'
  | 'domain'
  | 'text'
  | 'empty';

export interface SearchCidr {
  family: 4 | 6;
  /** Network address, host bits zeroed. */
  network: string;
  prefix: number;
  first: string;
  last: string;
}

export interface SearchOperators {
  /** Result groups, in the canonical group order; empty = every group. */
  type: SearchType[];
  /** Product types narrowing the service group (`type:vps`); a product also puts `service` in `type`. */
  product: ProductType[];
  /** Lower-cased, not validated here. */
  status: string[];
  loc: string[];
  node: string[];
  user: string[];
}

export interface ParsedQuery {
  /** The query as given, trimmed. */
  q: string;
  kind: SearchKind;
  /** Free text: operators removed, quotes resolved, white space collapsed. */
  text: string;
  ipv4?: string;
  ipv6?: string;
  zone?: string;
  cidr?: SearchCidr;
  mac?: string;
  email?: string;
  publicId?: string;
  number?: number;
  domain?: string;
  operators: SearchOperators;
}

/** A query the grammar refuses: 422 validation_failed with `errors: {[field]: reason}`. */
export class SearchQueryError extends AppError {
  override name = 'SearchQueryError';
  readonly field: string;
  readonly reason: string;

  constructor(reason: string, field = 'q') {
    super('validation_failed', { fields: { [field]: reason }, message: reason });
    this.field = field;
    this.reason = reason;
  }
}

/** Escape `\`, `%` and `_` so the text matches itself in `LIKE … ESCAPE '\'`. */
export function escapeLike(text: string): string {
  return text.replace(/[\\%_]/g, '\\$&');
}

/**
 * How free text matches a row's folded text: as a substring, where each space of the text (spaces
 * are collapsed) stands for any one space or punctuation mark, so `sao paulo` finds
 * `São-Paulo-web-21` and `web 1` finds `web-1` but not `web11`. `like` is the pattern for
 * `LIKE … ESCAPE '\'` (a space is `_`, served by the trigram index); `separated`, when the text has
 * a space, the regular expression that narrows what `_` let through to punctuation and spaces.
 */
export function textPatterns(text: string): { like: string; separated: string | null } {
  const words = text.split(' ');
  return {
    like: `%${words.map(escapeLike).join('_')}%`,
    separated: words.length > 1 ? words.map(escapeRegex).join('[[:space:][:punct:]]') : null,
  };
}

/** Escape every character but letters, digits and spaces, so the text matches itself in a POSIX (ARE) regular expression. */
export function escapeRegex(text: string): string {
  return text.replace(/[^\p{L}\p{N} ]/gu, '\\$&');
}

const TYPE_WORDS: Record<string, { type: SearchType } | { product: ProductType }> = {
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
  vps: { product: 'vps' },
  game: { product: 'game' },
  games: { product: 'game' },
  web: { product: 'web' },
  baremetal: { product: 'baremetal' },
  'bare-metal': { product: 'baremetal' },
  kvm: { product: 'vps' },
};

/** A `type:` value (any case, singular or plural, or a product type); null when unknown. */
export function typeFilterOf(value: string): { type: SearchType } | { product: ProductType } | null {
  const key = value.trim().toLowerCase();
  return Object.hasOwn(TYPE_WORDS, key) ? (TYPE_WORDS[key] ?? null) : null;
}

const TYPE_HELP = `use ${SEARCH_TYPES.join(', ')} (or ${PRODUCT_TYPES.join(', ')} for services)`;
const OPERATOR_HELP = `use ${OPERATOR_NAMES.map((name) => `${name}:`).join(', ')}`;

// ---------------------------------------------------------------------------------------------
// Words and operators

interface Segment {
  text: string;
  quoted: boolean;
}

const SPACE = /\s/;

function splitWords(input: string): Segment[][] {
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

function collapse(text: string): string {
  return text.replace(/\s+/g, ' ').trim();
}

/** Values of one operator word: commas outside quotes separate them; empty ones are dropped. */
function operatorValues(segments: Segment[]): string[] {
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
function colonShape(word: string): boolean {
  if (/^[a-z]+:\/\//i.test(word)) return true; // URL
  if (/^mailto:/i.test(word)) return true;
  return /^[0-9a-f]{1,4}:[0-9a-f:.]*(%[^/]*)?(\/\d*)?$/i.test(word); // IPv6, MAC, partial forms
}

function isOperatorName(name: string): name is OperatorName {
  return (OPERATOR_NAMES as readonly string[]).includes(name);
}

function emptyOperators(): SearchOperators {
  return { type: [], product: [], status: [], loc: [], node: [], user: [] };
}

function addUnique(list: string[], value: string): void {
  const key = value.toLowerCase();
  if (!list.some((existing) => existing.toLowerCase() === key)) list.push(value);
}

function applyOperator(operators: SearchOperators, name: OperatorName, values: string[]): void {
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

// ---------------------------------------------------------------------------------------------
// Shapes

type Shape = Omit<ParsedQuery, 'q' | 'text' | 'operators'>;

const OCTET = '(?:25[0-5]|2[0-4]\\d|1\\d\\d|[1-9]?\\d)';
const QUAD = `${OCTET}(?:\\.${OCTET}){3}`;
const IPV4 = new RegExp(`^(${QUAD})\\.?$`);
const IPV4_CIDR = new RegExp(`^(${QUAD})/(\\d+|${QUAD})$`);
const IPV4_PARTIAL = new RegExp(`^(${OCTET}(?:\\.${OCTET}){0,2})\\.$`);
const MAX_INT32 = 2_147_483_647;

function numberShape(text: string): Shape | null {
  const match = /^#(\d{1,10})$/.exec(text);
  if (!match) return null;
  const value = Number(match[1]);
  return value >= 1 && value <= MAX_INT32 ? { kind: 'number', number: value } : null;
}

/** `pay_…` / `order_…` with 16 Crockford base32 characters; i and l read as 1, o as 0. */
function publicIdShape(text: string): Shape | null {
  const match = /^(pay|order)_([0-9a-z]{16})$/i.exec(text);
  if (!match) return null;
  const prefix = (match[1] ?? '').toLowerCase();
  const body = (match[2] ?? '').toLowerCase().replace(/[il]/g, '1').replace(/o/g, '0');
  const id = `${prefix}_${body}`;
  if (!PUBLIC_ID.test(id)) return null;
  return { kind: prefix === 'pay' ? 'payment_id' : 'order_id', publicId: id };
}

const LABEL = /^[\p{L}\p{N}_](?:[\p{L}\p{M}\p{N}_-]{0,61}[\p{L}\p{M}\p{N}_])?$/u;
const TLD = /^(?:\p{L}[\p{L}\p{M}]{1,62}|xn--[a-z0-9-]{1,59})$/u;

/** A lower-cased name of two or more labels whose last label is letters; null otherwise. */
function domainOf(raw: string): string | null {
  const name = raw.toLowerCase().replace(/\.$/, '');
  if (name.length > 253) return null;
  const labels = name.split('.');
  if (labels.length < 2) return null;
  if (!labels.every((label) => LABEL.test(label))) return null;
  return TLD.test(labels[labels.length - 1] ?? '') ? name : null;
}

function domainShape(text: string): Shape | null {
  const domain = domainOf(text);
  return domain === null ? null : { kind: 'domain', domain };
}

function emailShape(text: string): Shape | null {
  const raw = text.replace(/^mailto:/i, '');
  const match = /^([\p{L}\p{N}.!#$%&'*+/=?^_`{|}~-]{1,64})@([^@]+)$/u.exec(raw);
  if (!match || raw.length > 254) return null;
  const local = match[1] ?? '';
  if (local.startsWith('.') || local.endsWith('.') || local.includes('..')) return null;
  const domain = domainOf(match[2] ?? '');
  return domain === null ? null : { kind: 'email', email: `${local.toLowerCase()}@${domain}` };
}

/**
 * MAC notations: `aa:bb:cc:dd:ee:ff` (also one-digit groups, as macOS prints them),
 * `aa-bb-cc-dd-ee-ff`, Cisco `aabb.ccdd.eeff`, and bare `aabbccddeeff` only when it holds a
 * letter a-f (twelve digits are more likely a UPI/UTR reference or a phone number).
 */
function macShape(text: string): Shape | null {
  let groups: string[] | null = null;
  if (/^[0-9a-f]{1,2}(?::[0-9a-f]{1,2}){5}$/i.test(text)) groups = text.split(':');
  else if (/^[0-9a-f]{2}(?:-[0-9a-f]{2}){5}$/i.test(text)) groups = text.split('-');
  else if (/^[0-9a-f]{4}(?:\.[0-9a-f]{4}){2}$/i.test(text)) groups = text.replace(/\./g, '').match(/../g);
  else if (/^[0-9a-f]{12}$/i.test(text) && /[a-f]/i.test(text)) groups = text.match(/../g);
  if (groups === null) return null;
  return { kind: 'mac', mac: groups.map((group) => group.padStart(2, '0').toLowerCase()).join(':') };
}

/** Canonical text: dotted quad, or RFC 5952 compressed lower-case IPv6. */
function show(ip: ipaddr.IPv4 | ipaddr.IPv6): string {
  return ip instanceof ipaddr.IPv6 ? ip.toRFC5952String() : ip.toString();
}

function cidrShape(family: 4 | 6, address: string, prefix: number): Shape {
  const text = `${address}/${prefix}`;
  const network = family === 4 ? ipaddr.IPv4.networkAddressFromCIDR(text) : ipaddr.IPv6.networkAddressFromCIDR(text);
  const last = family === 4 ? ipaddr.IPv4.broadcastAddressFromCIDR(text) : ipaddr.IPv6.broadcastAddressFromCIDR(text);
  return { kind: 'cidr', cidr: { family, network: show(network), prefix, first: show(network), last: show(last) } };
}

function prefixOf(bits: string, max: number, family: string): number {
  const value = Number(bits);
  if (!Number.isInteger(value) || value > max) {
    throw new SearchQueryError(`prefix /${bits} is out of range for ${family} (0-${max})`);
  }
  return value;
}

/** `a.b.c.d` (one trailing dot allowed), `a.b.c.d/n` or `/mask`, and prefixes `a.`, `a.b.`, `a.b.c.`. */
function ipv4Shape(text: string): Shape | null {
  const address = IPV4.exec(text);
  if (address) return { kind: 'ipv4', ipv4: address[1] ?? '' };
  const cidr = IPV4_CIDR.exec(text);
  if (cidr) {
    const bits = cidr[2] ?? '';
    if (bits.includes('.')) {
      const prefix = ipaddr.IPv4.parse(bits).prefixLengthFromSubnetMask();
      return prefix === null ? null : cidrShape(4, cidr[1] ?? '', prefix);
    }
    return cidrShape(4, cidr[1] ?? '', prefixOf(bits, 32, 'IPv4'));
  }
  const partial = IPV4_PARTIAL.exec(text);
  if (partial) {
    const octets = (partial[1] ?? '').split('.');
    const prefix = octets.length * 8;
    while (octets.length < 4) octets.push('0');
    return cidrShape(4, octets.join('.'), prefix);
  }
  return null;
}

/**
 * IPv6 in any spelling ipaddr.js reads, optionally in brackets, with a zone (`fe80::1%eth0`) or
 * a prefix (`2001:db8::/32`), not both. IPv4-mapped addresses (`::ffff:10.0.0.1`) fold to IPv4,
 * as everywhere else in the server (net/ip.ts); a mapped prefix of /96 or more folds to IPv4 too.
 */
function ipv6Shape(text: string): Shape | null {
  let body = text;
  const bracketed = /^\[([^\]]*)\](\/\d+)?$/.exec(body);
  if (bracketed) body = `${bracketed[1] ?? ''}${bracketed[2] ?? ''}`;
  const slash = body.indexOf('/');
  const bits = slash < 0 ? null : body.slice(slash + 1);
  if (bits !== null) body = body.slice(0, slash);
  const percent = body.indexOf('%');
  const zone = percent < 0 ? null : body.slice(percent + 1);
  if (zone !== null) body = body.slice(0, percent);
  if (!body.includes(':') || !ipaddr.IPv6.isValid(body)) return null;
  if (zone !== null && (bits !== null || !/^[0-9a-z_.~-]{1,64}$/i.test(zone))) return null;
  if (bits !== null && !/^\d+$/.test(bits)) return null;
  const address = ipaddr.IPv6.parse(body);
  if (bits === null) {
    if (address.isIPv4MappedAddress()) return { kind: 'ipv4', ipv4: address.toIPv4Address().toString() };
    const shape: Shape = { kind: 'ipv6', ipv6: address.toRFC5952String() };
    if (zone !== null) shape.zone = zone;
    return shape;
  }
  const prefix = prefixOf(bits, 128, 'IPv6');
  if (address.isIPv4MappedAddress() && prefix >= 96) {
    return cidrShape(4, address.toIPv4Address().toString(), prefix - 96);
  }
  return cidrShape(6, address.toRFC5952String(), prefix);
}

/** `scheme://[user@]host[:port][/…]`: the host's shape (IPv4, IPv6 in brackets, domain), else null. */
function urlShape(text: string): Shape | null {
  const match = /^[a-z][a-z0-9+.-]*:\/\/(?:[^/?#@]*@)?(\[[^\]]+\]|[^/?#:[\]]+)(?::\d*)?(?:[/?#].*)?$/i.exec(text);
  if (!match) return null;
  const host = match[1] ?? '';
  if (host.startsWith('[')) {
    const shape = ipv6Shape(host);
    return shape && (shape.kind === 'ipv6' || shape.kind === 'ipv4') ? shape : null;
  }
  const ip = IPV4.exec(host);
  if (ip) return { kind: 'ipv4', ipv4: ip[1] ?? '' };
  const domain = domainOf(host);
  return domain === null ? null : { kind: 'domain', domain };
}

function detect(text: string): Shape {
  if (text === '') return { kind: 'empty' };
  if (text.includes(' ')) return { kind: 'text' };
  return (
    numberShape(text) ??
    publicIdShape(text) ??
    emailShape(text) ??
    urlShape(text) ??
    macShape(text) ??
    ipv4Shape(text) ??
    ipv6Shape(text) ??
    domainShape(text) ?? { kind: 'text' }
  );
}

// ---------------------------------------------------------------------------------------------
// The parser

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

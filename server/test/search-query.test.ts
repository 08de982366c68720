// ci: one engine (this file uses no database and no Redis: the second engine would run it again unchanged)
// The search query grammar (issue 15, spec 4.13, CONTRACT §8): every shape with its normalised
// value, the ambiguous inputs and how they are decided, every operator (quoting, repetition,
// combination, position), the refusals (unknown operator, bad type, prefix out of range, length),
// LIKE escaping, and a seeded property test over hostile strings. Pure functions: no database.

import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import fc from 'fast-check';
import { AppError } from '../src/core/errors.ts';
import {
  escapeLike,
  MAX_QUERY,
  type ParsedQuery,
  parseSearch,
  type SearchKind,
  type SearchOperators,
  SearchQueryError,
  typeFilterOf,
} from '../src/core/search/query.ts';

const SEED = Number(process.env.FUZZ_SEED ?? 20261123);
const NO_OPERATORS: SearchOperators = { type: [], product: [], status: [], loc: [], node: [], user: [] };

/** Everything but `q` and `operators`: the kind, the text and the shape's value, nothing else. */
function shapeOf(parsed: ParsedQuery): Record<string, unknown> {
  const { q: _q, operators: _operators, ...shape } = parsed;
  return shape;
}

interface ShapeCase {
  q: string;
  kind: SearchKind;
  /** The free text when it differs from the trimmed query. */
  text?: string;
  value?: Omit<Partial<ParsedQuery>, 'q' | 'kind' | 'text' | 'operators'>;
  why: string;
}

const SHAPES: ShapeCase[] = [
  // empty
  { q: '', kind: 'empty', why: 'nothing typed' },
  { q: '   \t\n ', kind: 'empty', text: '', why: 'only white space' },
  // #number
  { q: '#12', kind: 'number', value: { number: 12 }, why: '# then digits is an id' },
  { q: '#0012', kind: 'number', value: { number: 12 }, why: 'leading zeros are read as decimal' },
  { q: '#2147483647', kind: 'number', value: { number: 2147483647 }, why: 'largest int32' },
  { q: '12', kind: 'text', why: 'a bare number is text (a label, a UTR), only #12 is an id' },
  { q: '#0', kind: 'text', why: 'ids start at 1' },
  { q: '#2147483648', kind: 'text', why: 'beyond int32' },
  { q: '#-1', kind: 'text', why: 'not a positive integer' },
  { q: '#12a', kind: 'text', why: 'not only digits' },
  { q: '# 12', kind: 'text', why: 'two words' },
  // public ids
  { q: 'pay_0123456789abcdef', kind: 'payment_id', value: { publicId: 'pay_0123456789abcdef' }, why: 'pay_ id' },
  {
    q: 'PAY_0123456789ABCDEF',
    kind: 'payment_id',
    value: { publicId: 'pay_0123456789abcdef' },
    why: 'upper case is folded',
  },
  {
    q: 'order_abcdefghjkmnpqrs',
    kind: 'order_id',
    value: { publicId: 'order_abcdefghjkmnpqrs' },
    why: 'order_ id',
  },
  {
    q: 'order_0123456789abcdeo',
    kind: 'order_id',
    value: { publicId: 'order_0123456789abcde0' },
    why: 'Crockford: o is read as 0',
  },
  {
    q: 'pay_I023456789abcdeL',
    kind: 'payment_id',
    value: { publicId: 'pay_1023456789abcde1' },
    why: 'Crockford: i and l are read as 1',
  },
  { q: 'pay_0123456789abcde', kind: 'text', why: '15 characters: not an id' },
  { q: 'pay_0123456789abcdeff', kind: 'text', why: '17 characters: not an id' },
  { q: 'pay_0123456789abcdeu', kind: 'text', why: 'u is not in the alphabet' },
  { q: 'txn_0123456789abcdef', kind: 'text', why: 'unknown prefix' },
  // e-mail
  { q: 'Bob.Smith+vps@Example.IN', kind: 'email', value: { email: 'bob.smith+vps@example.in' }, why: 'lower-cased' },
  { q: 'mailto:bob@example.in', kind: 'email', value: { email: 'bob@example.in' }, why: 'mailto: is not an operator' },
  { q: 'bob@localhost', kind: 'text', why: 'the domain needs a dot and a TLD' },
  { q: 'bob@10.0.0.1', kind: 'text', why: 'numeric TLD' },
  { q: '.bob@example.in', kind: 'text', why: 'local part starts with a dot' },
  { q: 'bob@@example.in', kind: 'text', why: 'two @' },
  // MAC
  { q: 'AA:BB:CC:DD:EE:FF', kind: 'mac', value: { mac: 'aa:bb:cc:dd:ee:ff' }, why: 'colons, upper case' },
  { q: 'aa-bb-cc-dd-ee-ff', kind: 'mac', value: { mac: 'aa:bb:cc:dd:ee:ff' }, why: 'hyphens (Windows)' },
  { q: 'aabb.ccdd.eeff', kind: 'mac', value: { mac: 'aa:bb:cc:dd:ee:ff' }, why: 'Cisco dotted' },
  { q: 'AABBCCDDEEFF', kind: 'mac', value: { mac: 'aa:bb:cc:dd:ee:ff' }, why: 'bare 12 hex with letters' },
  { q: '0:1a:2b:3:4:5', kind: 'mac', value: { mac: '00:1a:2b:03:04:05' }, why: 'one-digit groups (macOS arp)' },
  { q: '0011.2233.4455', kind: 'mac', value: { mac: '00:11:22:33:44:55' }, why: 'Cisco dotted, all digits' },
  { q: '001122334455', kind: 'text', why: 'bare 12 digits: a UTR or phone number, not a MAC' },
  { q: 'aa:bb:cc:dd:ee', kind: 'text', why: 'five groups: neither MAC nor IPv6 (and not an operator)' },
  { q: 'aa:bb:cc:dd:ee:ff:00', kind: 'text', why: 'seven groups' },
  { q: 'aa-bb-cc:dd-ee-ff', kind: 'text', why: 'mixed separators' },
  { q: 'a-b-c-d-e-f', kind: 'text', why: 'hyphen form needs two digits per group' },
  { q: 'aabbccddeeffgg', kind: 'text', why: 'not hex' },
  // IPv4
  { q: '10.0.0.1', kind: 'ipv4', value: { ipv4: '10.0.0.1' }, why: 'a dotted quad is an address, not a hostname' },
  { q: '0.0.0.0', kind: 'ipv4', value: { ipv4: '0.0.0.0' }, why: 'zero address' },
  { q: '10.0.0.1.', kind: 'ipv4', text: '10.0.0.1.', value: { ipv4: '10.0.0.1' }, why: 'trailing dot' },
  { q: '010.0.0.1', kind: 'text', why: 'leading zeros refused (octal ambiguity), as net/ip.ts does' },
  { q: '10.0.0.256', kind: 'text', why: 'octet out of range' },
  { q: '10.0.0.1.2', kind: 'text', why: 'five numeric labels' },
  { q: '::ffff:10.0.0.1', kind: 'ipv4', value: { ipv4: '10.0.0.1' }, why: 'IPv4-mapped IPv6 folds to IPv4' },
  { q: '::FFFF:a00:1', kind: 'ipv4', value: { ipv4: '10.0.0.1' }, why: 'mapped, hex spelling' },
  // IPv4 CIDR and prefixes
  {
    q: '203.0.113.0/26',
    kind: 'cidr',
    value: { cidr: { family: 4, network: '203.0.113.0', prefix: 26, first: '203.0.113.0', last: '203.0.113.63' } },
    why: 'CIDR',
  },
  {
    q: '203.0.113.5/26',
    kind: 'cidr',
    value: { cidr: { family: 4, network: '203.0.113.0', prefix: 26, first: '203.0.113.0', last: '203.0.113.63' } },
    why: 'host bits are zeroed',
  },
  {
    q: '10.1.2.3/32',
    kind: 'cidr',
    value: { cidr: { family: 4, network: '10.1.2.3', prefix: 32, first: '10.1.2.3', last: '10.1.2.3' } },
    why: '/32',
  },
  {
    q: '10.9.9.9/0',
    kind: 'cidr',
    value: { cidr: { family: 4, network: '0.0.0.0', prefix: 0, first: '0.0.0.0', last: '255.255.255.255' } },
    why: '/0',
  },
  {
    q: '10.0.0.0/255.255.255.0',
    kind: 'cidr',
    value: { cidr: { family: 4, network: '10.0.0.0', prefix: 24, first: '10.0.0.0', last: '10.0.0.255' } },
    why: 'netmask notation',
  },
  { q: '10.0.0.0/255.0.255.0', kind: 'text', why: 'not a contiguous mask' },
  { q: '10.0.0.0/', kind: 'text', why: 'slash without a prefix' },
  {
    q: '203.0.113.',
    kind: 'cidr',
    value: { cidr: { family: 4, network: '203.0.113.0', prefix: 24, first: '203.0.113.0', last: '203.0.113.255' } },
    why: 'three octets and a trailing dot: /24',
  },
  {
    q: '192.168.',
    kind: 'cidr',
    value: { cidr: { family: 4, network: '192.168.0.0', prefix: 16, first: '192.168.0.0', last: '192.168.255.255' } },
    why: 'two octets and a trailing dot: /16',
  },
  {
    q: '10.',
    kind: 'cidr',
    value: { cidr: { family: 4, network: '10.0.0.0', prefix: 8, first: '10.0.0.0', last: '10.255.255.255' } },
    why: 'one octet and a trailing dot: /8',
  },
  { q: '10.0', kind: 'text', why: 'no trailing dot: ambiguous with versions and prices, text' },
  { q: '22.04', kind: 'text', why: 'an OS version is text' },
  { q: '1.2.3', kind: 'text', why: 'a semantic version is text' },
  { q: '10/8', kind: 'text', why: 'shorthand CIDR needs the full quad' },
  { q: '300.', kind: 'text', why: 'octet out of range' },
  {
    q: '::ffff:10.1.2.3/104',
    kind: 'cidr',
    value: { cidr: { family: 4, network: '10.0.0.0', prefix: 8, first: '10.0.0.0', last: '10.255.255.255' } },
    why: 'mapped prefix of /96 or more folds to IPv4',
  },
  // IPv6
  { q: '2001:DB8:0:0:0:0:0:1', kind: 'ipv6', value: { ipv6: '2001:db8::1' }, why: 'compressed, lower-cased' },
  { q: '2001:0:0:1:0:0:0:1', kind: 'ipv6', value: { ipv6: '2001:0:0:1::1' }, why: 'RFC 5952: the longest run' },
  { q: '::1', kind: 'ipv6', value: { ipv6: '::1' }, why: 'loopback' },
  { q: '::', kind: 'ipv6', value: { ipv6: '::' }, why: 'unspecified' },
  { q: 'fe80::1%eth0', kind: 'ipv6', value: { ipv6: 'fe80::1', zone: 'eth0' }, why: 'zone id kept apart' },
  { q: 'FE80::1%25', kind: 'ipv6', value: { ipv6: 'fe80::1', zone: '25' }, why: 'numeric zone' },
  { q: 'fe80::1%', kind: 'text', why: 'empty zone' },
  { q: '[2001:db8::1]', kind: 'ipv6', value: { ipv6: '2001:db8::1' }, why: 'brackets' },
  {
    q: 'dead:beef::',
    kind: 'ipv6',
    value: { ipv6: 'dead:beef::' },
    why: 'letters-only first group is not an operator',
  },
  { q: '1:2:3:4:5:6:7:8', kind: 'ipv6', value: { ipv6: '1:2:3:4:5:6:7:8' }, why: 'eight groups' },
  { q: '64:ff9b::10.0.0.1', kind: 'ipv6', value: { ipv6: '64:ff9b::a00:1' }, why: 'embedded IPv4 (NAT64)' },
  { q: '2001:db8::1::2', kind: 'text', why: 'two ::' },
  { q: 'dead:beef', kind: 'text', why: 'two groups: hex text, not an operator' },
  {
    q: '2001:DB8::5/64',
    kind: 'cidr',
    value: {
      cidr: {
        family: 6,
        network: '2001:db8::',
        prefix: 64,
        first: '2001:db8::',
        last: '2001:db8::ffff:ffff:ffff:ffff',
      },
    },
    why: 'IPv6 CIDR, host bits zeroed',
  },
  {
    q: '[2001:db8::]/32',
    kind: 'cidr',
    value: {
      cidr: {
        family: 6,
        network: '2001:db8::',
        prefix: 32,
        first: '2001:db8::',
        last: '2001:db8:ffff:ffff:ffff:ffff:ffff:ffff',
      },
    },
    why: 'bracketed CIDR',
  },
  { q: 'fe80::1%eth0/64', kind: 'text', why: 'a zone and a prefix together' },
  // domains
  { q: 'shop.example.in', kind: 'domain', value: { domain: 'shop.example.in' }, why: 'domain' },
  { q: 'Web1.Example.IN.', kind: 'domain', value: { domain: 'web1.example.in' }, why: 'lower case, trailing dot' },
  {
    q: '1.2.3.4.example.in',
    kind: 'domain',
    value: { domain: '1.2.3.4.example.in' },
    why: 'numeric labels, letter TLD',
  },
  { q: '_dmarc.example.in', kind: 'domain', value: { domain: '_dmarc.example.in' }, why: 'underscore label' },
  { q: 'xn--h2brj9c.xn--h2brj9c', kind: 'domain', value: { domain: 'xn--h2brj9c.xn--h2brj9c' }, why: 'punycode' },
  { q: 'उदाहरण.भारत', kind: 'domain', value: { domain: 'उदाहरण.भारत' }, why: 'IDN in Devanagari' },
  { q: 'backup.tar.gz', kind: 'domain', value: { domain: 'backup.tar.gz' }, why: 'a file name is domain-shaped' },
  {
    q: 'https://Shop.Example.in/cart?x=1',
    kind: 'domain',
    value: { domain: 'shop.example.in' },
    why: "a URL is its host's shape",
  },
  { q: 'http://10.0.0.1:8080/', kind: 'ipv4', value: { ipv4: '10.0.0.1' }, why: 'URL with an IPv4 host' },
  { q: 'http://[2001:db8::1]:8080/', kind: 'ipv6', value: { ipv6: '2001:db8::1' }, why: 'URL with an IPv6 host' },
  { q: 'ftp://localhost/', kind: 'text', why: 'URL with a one-label host' },
  { q: 'localhost', kind: 'text', why: 'one label' },
  { q: 'example.', kind: 'text', why: 'one label and a dot' },
  { q: '-bad.example.in', kind: 'text', why: 'label starts with a hyphen' },
  { q: 'a..example.in', kind: 'text', why: 'empty label' },
  { q: '*.example.in', kind: 'text', why: 'wildcard' },
  { q: 'shop.example.in:8080', kind: 'text', why: 'host and port without a scheme' },
  { q: `${'a'.repeat(64)}.example.in`, kind: 'text', why: 'label longer than 63' },
  // text
  { q: 'web server', kind: 'text', why: 'two words' },
  { q: '  web    server  ', kind: 'text', text: 'web server', why: 'white space collapsed' },
  { q: 'Café crème', kind: 'text', why: 'accents stay (the route matches accent-insensitively)' },
  { q: 'Cafe\u0301', kind: 'text', text: 'Café', why: 'NFC: a combining accent is composed' },
  { q: 'सर्वर मुंबई', kind: 'text', why: 'Devanagari text' },
  { q: '服务器', kind: 'text', why: 'CJK text' },
  { q: 'game 🎮', kind: 'text', why: 'emoji' },
  { q: '100%_off\\', kind: 'text', why: 'LIKE metacharacters stay literal in text' },
  { q: '10:30', kind: 'text', why: 'a time is text' },
  { q: '"web server"', kind: 'text', text: 'web server', why: 'quotes group a phrase' },
  { q: '"foo:bar"', kind: 'text', text: 'foo:bar', why: 'a quoted word is never an operator' },
  { q: '"say \\"hi\\""', kind: 'text', text: 'say "hi"', why: 'escaped quotes' },
  {
    q: '"unterminated phrase',
    kind: 'text',
    text: 'unterminated phrase',
    why: 'a missing closing quote runs to the end',
  },
  { q: '"10.0.0.1"', kind: 'ipv4', text: '10.0.0.1', value: { ipv4: '10.0.0.1' }, why: 'quotes do not hide a shape' },
  { q: 'x1:y', kind: 'text', why: 'an operator name is letters only' },
  { q: 'foo_bar:y', kind: 'text', why: 'an operator name is letters only' },
  { q: '-type:ip', kind: 'text', why: 'no negation: text' },
  { q: 'a\u0000b', kind: 'text', text: 'a b', why: 'NUL is white space (PostgreSQL text cannot hold it)' },
  { q: '10.0.0.1\u200b', kind: 'ipv4', text: '10.0.0.1', value: { ipv4: '10.0.0.1' }, why: 'zero-width space' },
  { q: 'x\uD800y', kind: 'text', text: 'x\uFFFDy', why: 'a lone surrogate becomes U+FFFD' },
];

describe('shapes', () => {
  for (const c of SHAPES) {
    test(`${JSON.stringify(c.q)} → ${c.kind}: ${c.why}`, () => {
      const parsed = parseSearch(c.q);
      assert.equal(parsed.q, c.q.trim());
      assert.deepEqual(shapeOf(parsed), { kind: c.kind, text: c.text ?? c.q.trim(), ...c.value });
      assert.deepEqual(parsed.operators, NO_OPERATORS);
    });
  }
});

interface OperatorCase {
  q: string;
  operators: Partial<SearchOperators>;
  text?: string;
  kind?: SearchKind;
  why: string;
}

const OPERATORS: OperatorCase[] = [
  { q: 'type:ip', operators: { type: ['ip'] }, kind: 'empty', text: '', why: 'operator alone' },
  { q: 'TYPE:IP', operators: { type: ['ip'] }, kind: 'empty', text: '', why: 'case-insensitive name and value' },
  {
    q: 'type:services type:IPs type:orders type:transactions type:deposits',
    operators: { type: ['service', 'ip', 'order', 'transaction', 'deposit'] },
    text: '',
    kind: 'empty',
    why: 'plurals',
  },
  {
    q: 'type:deposit type:service',
    operators: { type: ['service', 'deposit'] },
    text: '',
    kind: 'empty',
    why: 'groups come back in the canonical order',
  },
  {
    q: 'type:order,ip',
    operators: { type: ['ip', 'order'] },
    text: '',
    kind: 'empty',
    why: 'comma-separated values OR',
  },
  { q: 'type:ip type:ip type:ips', operators: { type: ['ip'] }, text: '', kind: 'empty', why: 'duplicates dropped' },
  {
    q: 'type:vps',
    operators: { type: ['service'], product: ['vps'] },
    text: '',
    kind: 'empty',
    why: 'a product type narrows the service group',
  },
  {
    q: 'type:games type:web type:ip',
    operators: { type: ['service', 'ip'], product: ['game', 'web'] },
    text: '',
    kind: 'empty',
    why: 'products OR with groups',
  },
  {
    q: 'status:Active status:suspended,failed',
    operators: { status: ['active', 'suspended', 'failed'] },
    text: '',
    kind: 'empty',
    why: 'status lower-cased, repeated and comma values OR',
  },
  {
    q: 'loc:"Mumbai 1"',
    operators: { loc: ['Mumbai 1'] },
    text: '',
    kind: 'empty',
    why: 'quoted value with a space',
  },
  {
    q: 'loc:"  Mumbai   1 "',
    operators: { loc: ['Mumbai 1'] },
    text: '',
    kind: 'empty',
    why: 'white space inside a quoted value collapsed',
  },
  {
    q: 'loc:"Pune, IN",mum',
    operators: { loc: ['Pune, IN', 'mum'] },
    text: '',
    kind: 'empty',
    why: 'a comma inside quotes is part of the value',
  },
  {
    q: 'node:"pve \\"a\\""',
    operators: { node: ['pve "a"'] },
    text: '',
    kind: 'empty',
    why: 'escaped quote in a value',
  },
  {
    q: 'loc:mum LOC:MUM Loc:del',
    operators: { loc: ['mum', 'del'] },
    text: '',
    kind: 'empty',
    why: 'repeated operator values OR; duplicates compared without case',
  },
  { q: 'node:pve-1:a', operators: { node: ['pve-1:a'] }, text: '', kind: 'empty', why: 'colons inside a value' },
  {
    q: 'user:Alice@Example.in',
    operators: { user: ['Alice@Example.in'] },
    text: '',
    kind: 'empty',
    why: 'user: value kept as typed (the route matches without case)',
  },
  {
    q: 'type:service web1 status:active',
    operators: { type: ['service'], status: ['active'] },
    text: 'web1',
    kind: 'text',
    why: 'operators around the free text',
  },
  {
    q: 'status:active 10.0.0.1',
    operators: { status: ['active'] },
    text: '10.0.0.1',
    kind: 'ipv4',
    why: 'operator before a shape',
  },
  {
    q: 'my type:vps game status:active server loc:mum',
    operators: { type: ['service'], product: ['vps'], status: ['active'], loc: ['mum'] },
    text: 'my game server',
    kind: 'text',
    why: 'operators between free-text words; the words keep their order',
  },
  {
    q: '#42 type:order',
    operators: { type: ['order'] },
    text: '#42',
    kind: 'number',
    why: 'number with a group',
  },
  {
    q: 'type:ip fe80::1%eth0',
    operators: { type: ['ip'] },
    text: 'fe80::1%eth0',
    kind: 'ipv6',
    why: 'IPv6 beside an operator',
  },
  {
    q: 'type:ip status:active loc:mum node:pve1 user:#7 x',
    operators: { type: ['ip'], status: ['active'], loc: ['mum'], node: ['pve1'], user: ['#7'] },
    text: 'x',
    kind: 'text',
    why: 'all five combine (AND)',
  },
];

describe('operators', () => {
  for (const c of OPERATORS) {
    test(`${JSON.stringify(c.q)}: ${c.why}`, () => {
      const parsed = parseSearch(c.q);
      assert.deepEqual(parsed.operators, { ...NO_OPERATORS, ...c.operators });
      if (c.text !== undefined) assert.equal(parsed.text, c.text);
      if (c.kind !== undefined) assert.equal(parsed.kind, c.kind);
    });
  }

  test('the position of operators does not change the result', () => {
    const orders = [
      'type:ip status:active 203.0.113.',
      'status:active 203.0.113. type:ip',
      '203.0.113. type:ip status:active',
      '  203.0.113.   STATUS:Active   Type:IP ',
    ];
    const results = orders.map((q) => {
      const { q: _q, ...rest } = parseSearch(q);
      return rest;
    });
    for (const result of results) assert.deepEqual(result, results[0]);
    assert.equal(results[0]?.kind, 'cidr');
  });

  test('typeFilterOf (for the route’s own type parameter)', () => {
    assert.deepEqual(typeFilterOf('Orders'), { type: 'order' });
    assert.deepEqual(typeFilterOf('vps'), { product: 'vps' });
    assert.equal(typeFilterOf('constructor'), null);
    assert.equal(typeFilterOf('vm'), null);
  });
});

interface ErrorCase {
  q: string;
  reason: RegExp;
  why: string;
}

const ERRORS: ErrorCase[] = [
  {
    q: 'foo:bar',
    reason: /^unknown operator "foo:"; use type:, status:, loc:, node:, user:/,
    why: 'unknown operator, named',
  },
  { q: 'web1 Color:red', reason: /^unknown operator "Color:"/, why: 'unknown operator after free text' },
  { q: 'cafe:latte', reason: /^unknown operator "cafe:"/, why: 'hex name but not a hex word' },
  { q: 'http:foo', reason: /^unknown operator "http:"/, why: 'scheme without //' },
  { q: 'location:mum', reason: /^unknown operator "location:"/, why: 'no aliases' },
  {
    q: 'type:vm',
    reason: /^unknown type "vm" in type:; use service, ip, order, transaction, deposit \(or vps, game, web/,
    why: 'invalid type value names the allowed values',
  },
  { q: 'type:ip,bogus', reason: /^unknown type "bogus"/, why: 'one bad value among several' },
  { q: 'type:__proto__', reason: /^unknown type "__proto__"/, why: 'prototype keys are not types' },
  { q: 'loc:', reason: /^operator "loc:" needs a value$/, why: 'empty value' },
  { q: 'status:""', reason: /^operator "status:" needs a value$/, why: 'empty quoted value' },
  { q: 'node:,,', reason: /^operator "node:" needs a value$/, why: 'only commas' },
  { q: '203.0.113.0/33', reason: /^prefix \/33 is out of range for IPv4 \(0-32\)$/, why: 'IPv4 prefix too long' },
  { q: '2001:db8::/129', reason: /^prefix \/129 is out of range for IPv6 \(0-128\)$/, why: 'IPv6 prefix too long' },
  { q: 'x'.repeat(MAX_QUERY + 1), reason: /^the query is longer than 1000 characters$/, why: 'length limit' },
];

describe('refusals', () => {
  for (const c of ERRORS) {
    test(`${JSON.stringify(c.q.slice(0, 40))}: ${c.why}`, () => {
      assert.throws(
        () => parseSearch(c.q),
        (error: unknown) => {
          assert.ok(error instanceof SearchQueryError);
          assert.equal(error.field, 'q');
          assert.match(error.reason, c.reason);
          // The central error handler renders it as 422 validation_failed {errors: {q: reason}}.
          assert.ok(error instanceof AppError);
          assert.equal(error.code, 'validation_failed');
          assert.equal(error.status, 422);
          assert.deepEqual(error.fields, { q: error.reason });
          assert.equal(error.message, error.reason);
          return true;
        },
      );
    });
  }
});

describe('length limit', () => {
  test('1,000 characters are accepted, 1,001 are not', () => {
    const long = 'a'.repeat(MAX_QUERY);
    assert.deepEqual(shapeOf(parseSearch(long)), { kind: 'text', text: long });
    assert.throws(() => parseSearch(`${long}b`), SearchQueryError);
  });

  test('1,000 words of mixed text are accepted', () => {
    const text = Array.from({ length: 200 }, (_, i) => `w${i}%_`)
      .join(' ')
      .slice(0, MAX_QUERY);
    assert.equal(parseSearch(text).text, text.trim());
  });

  test('counted in code points, after trimming', () => {
    const emoji = '🎮'.repeat(MAX_QUERY); // 2,000 UTF-16 units
    assert.equal(parseSearch(emoji).text, emoji);
    assert.throws(() => parseSearch(`${emoji}x`), SearchQueryError);
    const padded = `${' '.repeat(500)}${'a'.repeat(MAX_QUERY)}${'\n'.repeat(500)}`;
    assert.equal(parseSearch(padded).text.length, MAX_QUERY);
  });
});

/** SQL LIKE with ESCAPE '\', character by character (code points), to check escapeLike against. */
function likeMatches(pattern: string, value: string): boolean {
  let source = '^';
  let escaped = false;
  for (const char of pattern) {
    if (escaped) {
      source += char.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&');
      escaped = false;
    } else if (char === '\\') escaped = true;
    else if (char === '%') source += '.*';
    else if (char === '_') source += '.';
    else source += char.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&');
  }
  assert.equal(escaped, false, 'a pattern must not end in a lone escape');
  return new RegExp(`${source}$`, 'su').test(value);
}

describe('escapeLike', () => {
  const cases: [string, string][] = [
    ['', ''],
    ['plain', 'plain'],
    ['100%', '100\\%'],
    ['a_b', 'a\\_b'],
    ['c:\\dir', 'c:\\\\dir'],
    ['%_\\', '\\%\\_\\\\'],
    ['\\%', '\\\\\\%'],
    ['café 🎮', 'café 🎮'],
  ];
  for (const [input, expected] of cases) {
    test(`${JSON.stringify(input)} → ${JSON.stringify(expected)}`, () => {
      assert.equal(escapeLike(input), expected);
      assert.ok(likeMatches(escapeLike(input), input));
    });
  }

  test('an escaped pattern matches exactly its text, and as a substring only where it occurs', () => {
    const alphabet = fc.constantFrom('a', 'b', '%', '_', '\\', 'é', ' ');
    const word = fc.array(alphabet, { maxLength: 8 }).map((chars) => chars.join(''));
    fc.assert(
      fc.property(word, word, (needle, haystack) => {
        assert.equal(likeMatches(escapeLike(needle), haystack), needle === haystack);
        assert.equal(likeMatches(`%${escapeLike(needle)}%`, haystack), haystack.includes(needle));
      }),
      { seed: SEED, numRuns: 500 },
    );
  });
});

function wellFormed(text: string): boolean {
  return !/[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/.test(text);
}

describe('hostile input', () => {
  const pieces = fc.constantFrom(
    'type:',
    'status:',
    'loc:',
    'node:',
    'user:',
    'ip',
    'vps',
    '"',
    '\\',
    '\\"',
    ' ',
    '\t',
    ',',
    ':',
    '::',
    'fe80',
    '%',
    '/',
    '64',
    '.',
    '10',
    '#',
    '12',
    '@',
    'a',
    'pay_',
    '\u0000',
    '\u200b',
    'é',
    'e\u0301',
    '\uD800',
    '🎮',
  );
  const query = fc.oneof(
    fc.array(pieces, { maxLength: 40 }).map((parts) => parts.join('')),
    fc.string({ maxLength: 60, unit: 'binary' }),
  );

  test('every query parses or is refused with a SearchQueryError, and the result is well-formed', () => {
    fc.assert(
      fc.property(query, (q) => {
        let parsed: ParsedQuery;
        try {
          parsed = parseSearch(q);
        } catch (error) {
          assert.ok(error instanceof SearchQueryError, String(error));
          assert.equal(error.field, 'q');
          return;
        }
        assert.equal(parsed.q, q.trim());
        assert.equal(parsed.text, parsed.text.trim());
        assert.doesNotMatch(parsed.text, /\s\s|[\p{Cc}]/u);
        assert.ok(wellFormed(parsed.text), 'no lone surrogates');
        assert.equal(parsed.kind === 'empty', parsed.text === '');
        for (const values of Object.values(parsed.operators) as string[][]) {
          for (const value of values) {
            assert.notEqual(value, '');
            assert.equal(value, value.trim());
            assert.ok(wellFormed(value));
          }
        }
      }),
      { seed: SEED, numRuns: 2000 },
    );
  });
});

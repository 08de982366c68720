// ci: one engine (this file uses no database and no Redis: the second engine would run it again unchanged)
// OpenSSH public-key parsing (issue 16): real keys made here with node:crypto and written in
// the OpenSSH wire format by hand (not by the library under test), their fingerprints checked
// against `ssh-keygen -lf` when it is installed (else against SHA-256 of the blob), and every
// refusal: types, sizes, damaged or mismatched data, private keys, formats, characters, size.

import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { createHash, generateKeyPairSync, type JsonWebKey, type KeyObject, randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, test } from 'node:test';
import { AppError } from '../src/core/errors.ts';
import { parsePublicKey } from '../src/core/ssh/keys.ts';

const dir = mkdtempSync(join(tmpdir(), 'hostplane-sshkeys-'));
after(() => rmSync(dir, { recursive: true, force: true }));

function hasSshKeygen(): boolean {
  try {
    execFileSync('ssh-keygen', ['-?'], { stdio: 'ignore' });
    return true;
  } catch (error) {
    // It prints its usage and exits 1: installed. ENOENT: not installed.
    return (error as NodeJS.ErrnoException).code !== 'ENOENT';
  }
}
const SSH_KEYGEN = hasSshKeygen();

// --- the OpenSSH wire format (RFC 4251 §5, RFC 4253 §6.6, RFC 5656 §3.1, RFC 8709) ---

function string(data: Buffer | string): Buffer {
  const bytes = typeof data === 'string' ? Buffer.from(data, 'latin1') : data;
  const length = Buffer.alloc(4);
  length.writeUInt32BE(bytes.length);
  return Buffer.concat([length, bytes]);
}

/** A positive mpint: big-endian, no needless leading zeros, a zero byte first when the high bit is set. */
function mpint(unsigned: Buffer): Buffer {
  let bytes = unsigned;
  while (bytes.length > 1 && bytes[0] === 0) bytes = bytes.subarray(1);
  return string((bytes[0] ?? 0) & 0x80 ? Buffer.concat([Buffer.from([0]), bytes]) : bytes);
}

const b64u = (value: string | undefined) => Buffer.from(value ?? '', 'base64url');

/** The OpenSSH blob of a public key, built from its JWK. */
function blobOf(key: KeyObject): { type: string; blob: Buffer } {
  const jwk: JsonWebKey = key.export({ format: 'jwk' });
  if (jwk.kty === 'OKP')
    return { type: 'ssh-ed25519', blob: Buffer.concat([string('ssh-ed25519'), string(b64u(jwk.x))]) };
  if (jwk.kty === 'RSA') {
    return { type: 'ssh-rsa', blob: Buffer.concat([string('ssh-rsa'), mpint(b64u(jwk.e)), mpint(b64u(jwk.n))]) };
  }
  const curve = { 'P-256': 'nistp256', 'P-384': 'nistp384', 'P-521': 'nistp521' }[jwk.crv ?? ''] ?? '';
  const point = Buffer.concat([Buffer.from([4]), b64u(jwk.x), b64u(jwk.y)]);
  const type = `ecdsa-sha2-${curve}`;
  return { type, blob: Buffer.concat([string(type), string(curve), string(point)]) };
}

const line = (type: string, blob: Buffer, comment?: string) =>
  `${type} ${blob.toString('base64')}${comment === undefined ? '' : ` ${comment}`}`;

/** What `ssh-keygen -lf` prints for a key line: bits and fingerprint; or the same computed from the blob. */
function reference(text: string, blob: Buffer, n: number): { bits: number | null; fingerprint: string } {
  if (!SSH_KEYGEN) {
    return {
      bits: null,
      fingerprint: `SHA256:${createHash('sha256').update(blob).digest('base64').replace(/=+$/, '')}`,
    };
  }
  const file = join(dir, `key${n}.pub`);
  writeFileSync(file, `${text}\n`);
  const out = execFileSync('ssh-keygen', ['-l', '-E', 'sha256', '-f', file], { encoding: 'utf8' });
  const match = /^(\d+) (SHA256:[A-Za-z0-9+/]+) /.exec(out);
  assert.ok(match, `ssh-keygen printed ${out}`);
  return { bits: Number(match[1]), fingerprint: match[2] ?? '' };
}

function refused(text: string, reason: RegExp): void {
  assert.throws(
    () => parsePublicKey(text),
    (error: unknown) => {
      assert.ok(error instanceof AppError, String(error));
      assert.equal(error.code, 'validation_failed');
      assert.equal(error.status, 422);
      assert.deepEqual(Object.keys(error.fields ?? {}), ['public_key']);
      assert.match(error.fields?.public_key ?? '', reason);
      return true;
    },
    `expected a refusal matching ${reason} for ${JSON.stringify(String(text).slice(0, 80))}`,
  );
}

const made = {
  ed25519: generateKeyPairSync('ed25519'),
  p256: generateKeyPairSync('ec', { namedCurve: 'P-256' }),
  p384: generateKeyPairSync('ec', { namedCurve: 'P-384' }),
  p521: generateKeyPairSync('ec', { namedCurve: 'P-521' }),
  rsa2048: generateKeyPairSync('rsa', { modulusLength: 2048 }),
  rsa4096: generateKeyPairSync('rsa', { modulusLength: 4096 }),
  rsa1024: generateKeyPairSync('rsa', { modulusLength: 1024 }),
};
const ed = blobOf(made.ed25519.publicKey);
const p256 = blobOf(made.p256.publicKey);

describe('parsePublicKey: keys accepted', () => {
  const cases = [
    { name: 'ed25519', key: made.ed25519.publicKey, type: 'ssh-ed25519', bits: 256 },
    { name: 'ecdsa P-256', key: made.p256.publicKey, type: 'ecdsa-sha2-nistp256', bits: 256 },
    { name: 'ecdsa P-384', key: made.p384.publicKey, type: 'ecdsa-sha2-nistp384', bits: 384 },
    { name: 'ecdsa P-521', key: made.p521.publicKey, type: 'ecdsa-sha2-nistp521', bits: 521 },
    { name: 'rsa 2048', key: made.rsa2048.publicKey, type: 'ssh-rsa', bits: 2048 },
    { name: 'rsa 4096', key: made.rsa4096.publicKey, type: 'ssh-rsa', bits: 4096 },
  ];
  cases.forEach((c, i) => {
    test(`${c.name}: type, bits, comment, normalized, fingerprint as ${SSH_KEYGEN ? 'ssh-keygen -lf prints it' : 'SHA-256 of the blob (no ssh-keygen here)'}`, () => {
      const { type, blob } = blobOf(c.key);
      assert.equal(type, c.type);
      const text = line(type, blob, `asha@laptop-${i}`);
      const parsed = parsePublicKey(text);
      const expected = reference(text, blob, i);
      assert.equal(parsed.type, c.type);
      assert.equal(parsed.bits, c.bits);
      if (expected.bits !== null) assert.equal(parsed.bits, expected.bits, 'bits as ssh-keygen -l');
      assert.equal(parsed.fingerprint, expected.fingerprint);
      assert.match(parsed.fingerprint, /^SHA256:[A-Za-z0-9+/]{43}$/, 'unpadded base64 of 32 bytes');
      assert.equal(parsed.comment, `asha@laptop-${i}`);
      assert.equal(parsed.normalized, text);
    });
  });

  test('a .pub file as pasted: a line break, CRLF, a byte-order mark, tabs, no comment, spaces in the comment', () => {
    const base = line(ed.type, ed.blob);
    assert.equal(parsePublicKey(`${base} me@host\n`).normalized, `${base} me@host`);
    assert.equal(parsePublicKey(`${base} me@host\r\n`).comment, 'me@host');
    assert.equal(parsePublicKey(`\uFEFF${base} me@host`).normalized, `${base} me@host`);
    assert.equal(
      parsePublicKey(`  ${ed.type}\t${ed.blob.toString('base64')}\tme@host  `).normalized,
      `${base} me@host`,
    );
    const bare = parsePublicKey(base);
    assert.equal(bare.comment, null);
    assert.equal(bare.normalized, base);
    assert.equal(parsePublicKey(`${base} Asha   Rao  (work laptop)`).comment, 'Asha Rao (work laptop)');
    assert.equal(parsePublicKey(`${base} jürgen@büro`).comment, 'jürgen@büro');
  });

  test('a key written by ssh-keygen itself', { skip: !SSH_KEYGEN && 'ssh-keygen is not installed' }, () => {
    const file = join(dir, 'made_by_keygen');
    execFileSync('ssh-keygen', ['-q', '-t', 'ed25519', '-N', '', '-C', 'ops@example.in', '-f', file]);
    const text = execFileSync('cat', [`${file}.pub`], { encoding: 'utf8' });
    const printed = execFileSync('ssh-keygen', ['-l', '-E', 'sha256', '-f', `${file}.pub`], { encoding: 'utf8' });
    const parsed = parsePublicKey(text);
    assert.equal(printed.split(' ')[1], parsed.fingerprint);
    assert.equal(parsed.comment, 'ops@example.in');
    // Its private key, pasted by mistake.
    refused(execFileSync('cat', [file], { encoding: 'utf8' }), /PRIVATE key/);
  });
});

describe('parsePublicKey: refusals', () => {
  const edData = ed.blob.toString('base64');
  const rsa1024 = blobOf(made.rsa1024.publicKey);
  const p384 = blobOf(made.p384.publicKey);
  const rsa2048 = blobOf(made.rsa2048.publicKey);

  // The blob with one part replaced (parts after the type name, counted from 1).
  const withPart = (blob: Buffer, index: number, replace: (part: Buffer) => Buffer): Buffer => {
    const parts: Buffer[] = [];
    let at = 0;
    while (at < blob.length) {
      const length = blob.readUInt32BE(at);
      parts.push(blob.subarray(at + 4, at + 4 + length));
      at += 4 + length;
    }
    return Buffer.concat(parts.map((p, i) => string(i === index ? replace(p) : p)));
  };

  /** A 16392-bit "modulus": odd, top bit set; no need for it to be a product of primes to be refused. */
  const huge = Buffer.concat([
    string('ssh-rsa'),
    mpint(Buffer.from([1, 0, 1])),
    mpint(randomBytes(2049).fill(0xff, 0, 1)),
  ]);
  const pkcs8 = made.ed25519.privateKey.export({ format: 'pem', type: 'pkcs8' }).toString();
  const pkcs1 = made.rsa2048.privateKey.export({ format: 'pem', type: 'pkcs1' }).toString();
  const sec1 = made.p256.privateKey.export({ format: 'pem', type: 'sec1' }).toString();
  const spki = made.ed25519.publicKey.export({ format: 'pem', type: 'spki' }).toString();

  const cases: [string, string, RegExp][] = [
    ['empty', '', /is empty/],
    ['blank', ' \n\t ', /is empty/],
    ['not a key at all', 'hello world', /not an OpenSSH public key/],
    ['a type without data', 'ssh-ed25519', /key data after 'ssh-ed25519' is missing/],
    ['data without a type', edData, /not an OpenSSH public key/],
    ['an unknown type', `ssh-foo ${edData}`, /'ssh-foo' is not a supported key type/],
    ['DSA', `ssh-dss ${edData} old`, /DSA keys .* not accepted/],
    ['a FIDO ed25519 key', `sk-ssh-ed25519@openssh.com ${edData} yubi`, /security-key \(FIDO\) keys are not accepted/],
    ['a FIDO ecdsa key', `sk-ecdsa-sha2-nistp256@openssh.com ${edData}`, /security-key \(FIDO\)/],
    ['a certificate', `ssh-ed25519-cert-v01@openssh.com ${edData}`, /certificates are not accepted/],
    ['another curve', `ecdsa-sha2-nistp192 ${edData}`, /curve of 'ecdsa-sha2-nistp192' is not supported/],
    ['RSA 1024', line(rsa1024.type, rsa1024.blob), /RSA keys must have 2048 bits at least; this one has 1024/],
    ['RSA over 16384 bits', line('ssh-rsa', huge), /16384 bits at most/],
    [
      'the data of an ed25519 key called ssh-rsa',
      `ssh-rsa ${edData}`,
      /is a ssh-ed25519 key but the line says ssh-rsa/,
    ],
    [
      'a P-256 key called nistp384',
      `ecdsa-sha2-nistp384 ${p256.blob.toString('base64')}`,
      /is a ecdsa-sha2-nistp256 key but the line says ecdsa-sha2-nistp384/,
    ],
    [
      'a curve inside that differs from the type',
      line(
        p384.type,
        withPart(p384.blob, 1, () => Buffer.from('nistp256')),
      ),
      /names another curve/,
    ],
    ['truncated', `ssh-ed25519 ${edData.slice(0, 40)}`, /truncated or damaged/],
    ['bytes appended', line(ed.type, Buffer.concat([ed.blob, string('extra')])), /truncated or damaged/],
    [
      'a short ed25519 key',
      line(
        ed.type,
        withPart(ed.blob, 1, (p) => p.subarray(1)),
      ),
      /truncated or damaged/,
    ],
    ['garbage', `ssh-ed25519 ${randomBytes(51).toString('base64')}`, /damaged/],
    ['not base64', `ssh-ed25519 ${edData.slice(0, -4)}$$$$`, /not valid base64/],
    ['padding stripped', `ecdsa-sha2-nistp256 ${p256.blob.toString('base64').replace(/=+$/, '')}`, /not valid base64/],
    [
      'a point off the curve',
      line(
        p256.type,
        withPart(p256.blob, 2, (p) => Buffer.concat([p.subarray(0, -1), Buffer.from([(p.at(-1) ?? 0) ^ 1])])),
      ),
      /not a valid key/,
    ],
    [
      'a compressed point',
      line(
        p256.type,
        withPart(p256.blob, 2, (p) => Buffer.concat([Buffer.from([2]), p.subarray(1, 33)])),
      ),
      /truncated or damaged/,
    ],
    [
      'a modulus with a needless leading zero',
      line(
        rsa2048.type,
        withPart(rsa2048.blob, 2, (p) => Buffer.concat([Buffer.from([0]), p])),
      ),
      /canonical form/,
    ],
    ['a PKCS#8 private key', pkcs8, /PRIVATE key: never share it/],
    ['an RSA private key', pkcs1, /PRIVATE key/],
    ['an EC private key', sec1, /PRIVATE key/],
    [
      'an OpenSSH private key',
      '-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQAAAAAAAAABAAAAMwAAAAtzc2gtZW\n-----END OPENSSH PRIVATE KEY-----\n',
      /PRIVATE key/,
    ],
    ['a PuTTY private key', 'PuTTY-User-Key-File-3: ssh-ed25519\nEncryption: none\nComment: me\n', /PRIVATE key/],
    ['RFC 4716', `---- BEGIN SSH2 PUBLIC KEY ----\n${edData}\n---- END SSH2 PUBLIC KEY ----`, /RFC 4716/],
    ['a PEM public key', spki, /PEM file/],
    ['two keys', `${line(ed.type, ed.blob, 'a')}\n${line(p256.type, p256.blob, 'b')}`, /single line/],
    ['a carriage return inside', `${line(ed.type, ed.blob)}\rme`, /single line/],
    ['a bell in the comment', `${line(ed.type, ed.blob)} me\u0007`, /control/],
    ['a NUL', `${line(ed.type, ed.blob)} me\u0000you`, /control/],
    ['an escape sequence', `${line(ed.type, ed.blob)} \u001b[31mred`, /control/],
    ['a C1 control', `${line(ed.type, ed.blob)} me\u0085`, /control/],
    ['a right-to-left override', `${line(ed.type, ed.blob)} moc.elpmaxe@\u202eadmin`, /invisible formatting/],
    ['a zero-width space', `${line(ed.type, ed.blob)} me\u200b@host`, /invisible formatting/],
    ['over 16 KiB', `${line(ed.type, ed.blob)} ${'x'.repeat(16 * 1024)}`, /too long \(16 KiB at most\)/],
    ['authorized_keys options', `no-pty,from="10.0.0.1" ${line(ed.type, ed.blob, 'me')}`, /authorized_keys options/],
    ['a command option', `command="/bin/ls" ${line(ed.type, ed.blob)}`, /authorized_keys options/],
  ];
  for (const [name, text, reason] of cases) {
    test(`refuses ${name}`, () => refused(text, reason));
  }

  test('a comment just under 16 KiB is fine; the limit counts bytes, not characters', () => {
    const base = line(ed.type, ed.blob);
    const room = 16 * 1024 - base.length - 1;
    assert.equal(parsePublicKey(`${base} ${'x'.repeat(room)}`).comment?.length, room);
    refused(`${base} ${'é'.repeat(Math.ceil(room / 2) + 1)}`, /too long/);
  });

  test('not a string', () => refused(42 as unknown as string, /must be text/));
});

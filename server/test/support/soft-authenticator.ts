// A software WebAuthn authenticator and the browser side of the ceremonies, for tests without a
// browser: it answers the options the server hands out as navigator.credentials.create() / .get()
// would, with PublicKeyCredential.toJSON()'s shape. Made from the WebAuthn Level 2 spec (§6.1
// authenticator data, §6.5.4 'none' attestation, §5.8.1 client data) with node:crypto: a P-256
// key per credential (ES256, COSE key of RFC 9053), 'none' attestation, discoverable credentials
// (it keeps the user handle and gives it back). CBOR by @levischuck/tiny-cbor (what
// @simplewebauthn/server itself decodes with).
//
// Each part of what it signs can be bent (`origin`, `rpId`, `challenge`, `counter`, user
// verification), so tests can make the answers a broken or hostile client would.

import { createHash, createPublicKey, generateKeyPairSync, type KeyObject, randomBytes, sign } from 'node:crypto';
import { type CBORType, encodeCBOR } from '@levischuck/tiny-cbor';

type B64 = string;

/** The parts of PublicKeyCredentialCreationOptionsJSON used here. */
export interface CreationOptions {
  challenge: B64;
  rp: { id?: string; name: string };
  user: { id: B64; name: string; displayName: string };
  excludeCredentials?: { id: B64 }[];
  authenticatorSelection?: { residentKey?: string; userVerification?: string };
}

/** The parts of PublicKeyCredentialRequestOptionsJSON used here. */
export interface RequestOptions {
  challenge: B64;
  rpId?: string;
  allowCredentials?: { id: B64 }[];
  userVerification?: string;
}

export interface RegistrationAnswer {
  id: B64;
  rawId: B64;
  type: 'public-key';
  response: { clientDataJSON: B64; attestationObject: B64; transports: string[] };
  authenticatorAttachment: 'platform';
  clientExtensionResults: Record<string, unknown>;
}

export interface AssertionAnswer {
  id: B64;
  rawId: B64;
  type: 'public-key';
  response: { clientDataJSON: B64; authenticatorData: B64; signature: B64; userHandle?: B64 };
  authenticatorAttachment: 'platform';
  clientExtensionResults: Record<string, unknown>;
}

/** What a test may bend in one ceremony. */
export interface Bend {
  /** The origin the "browser" reports (default: the authenticator's). */
  origin?: string;
  /** The RP id whose hash the authenticator signs (default: the options'). */
  rpId?: string;
  /** The challenge signed (default: the options'). */
  challenge?: B64;
  /** The signature counter to report (default: one more than the last). */
  counter?: number;
  /** Report user verification (default: the authenticator's setting). */
  userVerified?: boolean;
  /** Use this credential (default: the first allowed one, or the first held). */
  credentialId?: B64;
  /** Leave out the user handle of a discoverable credential. */
  omitUserHandle?: boolean;
}

interface Credential {
  id: Buffer;
  key: KeyObject;
  rpId: string;
  userHandle: B64;
  counter: number;
}

const FLAG_UP = 0x01;
const FLAG_UV = 0x04;
const FLAG_AT = 0x40;

const sha256 = (data: Buffer | string) => createHash('sha256').update(data).digest();
const u32 = (n: number) => {
  const b = Buffer.alloc(4);
  b.writeUInt32BE(n >>> 0);
  return b;
};

/** The COSE_Key (RFC 9053 §7.1) of a P-256 public key: kty EC2, alg ES256, crv P-256, x, y. */
function coseKey(key: KeyObject): Uint8Array {
  const jwk = key.export({ format: 'jwk' });
  const map = new Map<number, CBORType>([
    [1, 2],
    [3, -7],
    [-1, 1],
    [-2, Buffer.from(jwk.x as string, 'base64url')],
    [-3, Buffer.from(jwk.y as string, 'base64url')],
  ]);
  return encodeCBOR(map);
}

export class SoftAuthenticator {
  readonly credentials: Credential[] = [];
  readonly origin: string;
  /** Whether it verifies its user (PIN, biometric), as reported in the UV flag. */
  userVerifies: boolean;

  constructor(origin: string, options: { userVerifies?: boolean } = {}) {
    this.origin = origin;
    this.userVerifies = options.userVerifies ?? true;
  }

  private clientData(type: 'webauthn.create' | 'webauthn.get', challenge: B64, bend: Bend): Buffer {
    return Buffer.from(
      JSON.stringify({
        type,
        challenge: bend.challenge ?? challenge,
        origin: bend.origin ?? this.origin,
        crossOrigin: false,
      }),
    );
  }

  private flags(bend: Bend, extra = 0): number {
    return FLAG_UP | ((bend.userVerified ?? this.userVerifies) ? FLAG_UV : 0) | extra;
  }

  /** navigator.credentials.create({publicKey: options}), as JSON. */
  create(options: CreationOptions, bend: Bend = {}): RegistrationAnswer {
    const rpId = bend.rpId ?? options.rp.id ?? new URL(this.origin).hostname;
    const excluded = new Set((options.excludeCredentials ?? []).map((c) => c.id));
    if (this.credentials.some((c) => c.rpId === rpId && excluded.has(c.id.toString('base64url')))) {
      throw new Error('InvalidStateError: this authenticator already holds an excluded credential');
    }
    const { privateKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
    const credential: Credential = {
      id: randomBytes(16),
      key: privateKey,
      rpId,
      userHandle: options.user.id,
      counter: bend.counter ?? 0,
    };
    const publicKey = coseKey(createPublicKey(privateKey));
    const idLength = Buffer.alloc(2);
    idLength.writeUInt16BE(credential.id.length);
    const authData = Buffer.concat([
      sha256(rpId),
      Buffer.from([this.flags(bend, FLAG_AT)]),
      u32(credential.counter),
      Buffer.alloc(16), // AAGUID: none
      idLength,
      credential.id,
      Buffer.from(publicKey),
    ]);
    const attestationObject = encodeCBOR(
      new Map<string, CBORType>([
        ['fmt', 'none'],
        ['attStmt', new Map<string, CBORType>()],
        ['authData', authData],
      ]),
    );
    this.credentials.push(credential);
    const id = credential.id.toString('base64url');
    return {
      id,
      rawId: id,
      type: 'public-key',
      response: {
        clientDataJSON: this.clientData('webauthn.create', options.challenge, bend).toString('base64url'),
        attestationObject: Buffer.from(attestationObject).toString('base64url'),
        transports: ['internal'],
      },
      authenticatorAttachment: 'platform',
      clientExtensionResults: {},
    };
  }

  /** Make a credential for `rpId` that no server has seen (a stranger's passkey); returns this. */
  withCredentialFor(rpId: string): this {
    const { privateKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
    this.credentials.push({
      id: randomBytes(16),
      key: privateKey,
      rpId,
      userHandle: randomBytes(32).toString('base64url'),
      counter: 0,
    });
    return this;
  }

  /** navigator.credentials.get({publicKey: options}), as JSON. */
  get(options: RequestOptions, bend: Bend = {}): AssertionAnswer {
    const rpId = options.rpId ?? new URL(this.origin).hostname;
    const allowed = (options.allowCredentials ?? []).map((c) => c.id);
    const wanted =
      bend.credentialId ??
      (allowed.length > 0
        ? allowed.find((id) => this.credentials.some((c) => c.id.toString('base64url') === id))
        : this.credentials.find((c) => c.rpId === rpId)?.id.toString('base64url'));
    const credential = this.credentials.find((c) => c.id.toString('base64url') === wanted);
    if (!credential) throw new Error('NotAllowedError: no credential of this authenticator fits');
    credential.counter = bend.counter ?? credential.counter + 1;
    const authData = Buffer.concat([
      sha256(bend.rpId ?? rpId),
      Buffer.from([this.flags(bend)]),
      u32(credential.counter),
    ]);
    const clientDataJSON = this.clientData('webauthn.get', options.challenge, bend);
    const signature = sign('sha256', Buffer.concat([authData, sha256(clientDataJSON)]), credential.key);
    const id = credential.id.toString('base64url');
    return {
      id,
      rawId: id,
      type: 'public-key',
      response: {
        clientDataJSON: clientDataJSON.toString('base64url'),
        authenticatorData: authData.toString('base64url'),
        signature: signature.toString('base64url'),
        ...(bend.omitUserHandle ? {} : { userHandle: credential.userHandle }),
      },
      authenticatorAttachment: 'platform',
      clientExtensionResults: {},
    };
  }
}

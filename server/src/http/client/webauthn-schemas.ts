// The WebAuthn shapes of the session surface (CONTRACT §11), as JSON: the options handed to
// navigator.credentials.create() / .get() (PublicKeyCredentialCreationOptionsJSON and
// PublicKeyCredentialRequestOptionsJSON, every binary value base64url; a browser's
// PublicKeyCredential.parseCreationOptionsFromJSON / parseRequestOptionsFromJSON, or
// @simplewebauthn/browser, reads them as they are), and the browser's answers
// (PublicKeyCredential.toJSON()). The passkey as its owner sees it is here too.

import type { AuthenticationResponseJSON, RegistrationResponseJSON } from '@simplewebauthn/server';
import { type Static, Type } from 'typebox';
import type { Passkey } from '../../core/auth/passkeys.ts';
import { isoWithOffset } from '../../core/time.ts';

const B64 = (description: string, maxLength = 4096) =>
  Type.String({ maxLength, description: `${description}, base64url` });

const Transports = Type.Array(Type.String({ maxLength: 32 }), {
  maxItems: 16,
  description: 'how the browser can reach the authenticator (usb, nfc, ble, internal, hybrid)',
});

const PublicKey = Type.String({ description: 'public-key' });

const CredentialDescriptor = Type.Object({
  id: B64('credential id'),
  type: PublicKey,
  transports: Type.Optional(Transports),
});

export const CreationOptionsSchema = Type.Object(
  {
    challenge: B64('the challenge (valid 5 minutes, once, for this session)'),
    rp: Type.Object({ name: Type.String(), id: Type.Optional(Type.String({ description: "PUBLIC_URL's host name" })) }),
    user: Type.Object({
      id: B64('the user handle (opaque, stable per account)'),
      name: Type.String(),
      displayName: Type.String(),
    }),
    pubKeyCredParams: Type.Array(
      Type.Object({ alg: Type.Integer({ description: 'COSE algorithm' }), type: PublicKey }),
    ),
    timeout: Type.Optional(Type.Integer({ description: 'milliseconds' })),
    excludeCredentials: Type.Optional(
      Type.Array(CredentialDescriptor, { description: "the account's passkeys (not registered twice)" }),
    ),
    authenticatorSelection: Type.Optional(
      Type.Object({
        residentKey: Type.Optional(Type.String({ description: 'required: a discoverable credential' })),
        requireResidentKey: Type.Optional(Type.Boolean()),
        userVerification: Type.Optional(Type.String({ description: 'preferred' })),
        authenticatorAttachment: Type.Optional(Type.String()),
      }),
    ),
    attestation: Type.Optional(Type.String({ description: 'none' })),
    extensions: Type.Optional(Type.Object({}, { additionalProperties: true })),
    hints: Type.Optional(Type.Array(Type.String())),
  },
  { description: 'PublicKeyCredentialCreationOptionsJSON, for navigator.credentials.create({publicKey})' },
);

export const RequestOptionsSchema = Type.Object(
  {
    challenge: B64('the challenge (valid 5 minutes, once, for this session)'),
    rpId: Type.Optional(Type.String({ description: "PUBLIC_URL's host name" })),
    timeout: Type.Optional(Type.Integer({ description: 'milliseconds' })),
    allowCredentials: Type.Optional(
      Type.Array(CredentialDescriptor, {
        description: "the account's passkeys (second factor); absent: any discoverable passkey (sign-in)",
      }),
    ),
    userVerification: Type.Optional(
      Type.String({ description: 'required (sign-in with a passkey alone), preferred (second factor)' }),
    ),
    extensions: Type.Optional(Type.Object({}, { additionalProperties: true })),
    hints: Type.Optional(Type.Array(Type.String())),
  },
  { description: 'PublicKeyCredentialRequestOptionsJSON, for navigator.credentials.get({publicKey})' },
);

const Extensions = Type.Optional(Type.Object({}, { additionalProperties: true }));

/** navigator.credentials.create()'s answer, as JSON (RegistrationResponseJSON). */
export const RegistrationResponseSchema = Type.Object(
  {
    id: B64('credential id', 1400),
    rawId: B64('credential id', 1400),
    type: Type.Literal('public-key'),
    response: Type.Object(
      {
        clientDataJSON: B64('client data', 8192),
        attestationObject: B64('attestation object', 65_536),
        authenticatorData: Type.Optional(B64('authenticator data', 65_536)),
        transports: Type.Optional(Transports),
        publicKeyAlgorithm: Type.Optional(Type.Integer()),
        publicKey: Type.Optional(B64('public key (SPKI)', 65_536)),
      },
      { additionalProperties: true },
    ),
    authenticatorAttachment: Type.Optional(Type.String({ maxLength: 32 })),
    clientExtensionResults: Extensions,
  },
  { additionalProperties: true, description: 'PublicKeyCredential.toJSON() of navigator.credentials.create()' },
);

/** navigator.credentials.get()'s answer, as JSON (AuthenticationResponseJSON). */
export const AuthenticationResponseSchema = Type.Object(
  {
    id: B64('credential id', 1400),
    rawId: B64('credential id', 1400),
    type: Type.Literal('public-key'),
    response: Type.Object(
      {
        clientDataJSON: B64('client data', 8192),
        authenticatorData: B64('authenticator data', 65_536),
        signature: B64('signature', 8192),
        userHandle: Type.Optional(B64('user handle', 1024)),
      },
      { additionalProperties: true },
    ),
    authenticatorAttachment: Type.Optional(Type.String({ maxLength: 32 })),
    clientExtensionResults: Extensions,
  },
  { additionalProperties: true, description: 'PublicKeyCredential.toJSON() of navigator.credentials.get()' },
);

export const PasskeySchema = Type.Object({
  id: Type.Integer(),
  name: Type.String(),
  created_at: Type.String({ format: 'date-time' }),
  last_used_at: Type.Union([Type.String({ format: 'date-time' }), Type.Null()]),
});

export function passkeyView(p: Passkey) {
  return {
    id: p.id,
    name: p.name,
    created_at: isoWithOffset(p.createdAt),
    last_used_at: p.lastUsedAt ? isoWithOffset(p.lastUsedAt) : null,
  };
}

/** A browser's get() answer, validated by AuthenticationResponseSchema, as the verifier takes it. */
export function asAuthenticationResponse(
  answer: Static<typeof AuthenticationResponseSchema>,
): AuthenticationResponseJSON {
  return { ...answer, clientExtensionResults: answer.clientExtensionResults ?? {} } as AuthenticationResponseJSON;
}

/** A browser's create() answer, validated by RegistrationResponseSchema, as the verifier takes it. */
export function asRegistrationResponse(answer: Static<typeof RegistrationResponseSchema>): RegistrationResponseJSON {
  return { ...answer, clientExtensionResults: answer.clientExtensionResults ?? {} } as RegistrationResponseJSON;
}

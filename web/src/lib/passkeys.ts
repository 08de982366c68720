// Passkeys in the browser (CONTRACT §11): the server's WebAuthn options (JSON, binary values in
// base64url) go to navigator.credentials.create()/get() through @simplewebauthn/browser, and the
// answer goes back as PublicKeyCredential.toJSON(). What the browser refuses is said in words
// here, once, for the three places that use a passkey (adding one, signing in, the second step).

import type { paths } from '@hostplane/sdk/schema';
import {
  browserSupportsWebAuthn,
  type PublicKeyCredentialCreationOptionsJSON,
  type PublicKeyCredentialRequestOptionsJSON,
  startAuthentication,
  startRegistration,
  WebAuthnError,
} from '@simplewebauthn/browser';
import { ApiError } from './api.ts';

type SecurityBody = NonNullable<
  paths['/api/v1/client/account/security/']['post']['requestBody']
>['content']['application/json'];
/** navigator.credentials.create()'s answer, as the server takes it (passkey_finish). */
export type RegistrationAnswer = NonNullable<SecurityBody['response']>;
type TwoFactorBody = NonNullable<
  paths['/api/v1/client/auth/2fa/']['post']['requestBody']
>['content']['application/json'];
/** navigator.credentials.get()'s answer, as the server takes it (auth/passkey/, auth/2fa/). */
export type AuthenticationAnswer = NonNullable<TwoFactorBody['passkey']>;

export function passkeysSupported(): boolean {
  return browserSupportsWebAuthn();
}

/** Make a passkey on this device (or a security key, or a phone) with the creation options. */
export async function createPasskey(options: unknown): Promise<RegistrationAnswer> {
  const answer = await startRegistration({ optionsJSON: options as PublicKeyCredentialCreationOptionsJSON });
  return answer as unknown as RegistrationAnswer;
}

/** Use a passkey with the request options (any of this site's passkeys, or those listed). */
export async function getPasskey(options: unknown): Promise<AuthenticationAnswer> {
  const answer = await startAuthentication({ optionsJSON: options as PublicKeyCredentialRequestOptionsJSON });
  return answer as unknown as AuthenticationAnswer;
}

/** Whether the browser's own prompt was closed or timed out (nothing to explain but "try again"). */
export function passkeyCancelled(error: unknown): boolean {
  return (
    (error instanceof WebAuthnError && error.code === 'ERROR_CEREMONY_ABORTED') ||
    (error instanceof Error && (error.name === 'NotAllowedError' || error.name === 'AbortError'))
  );
}

/**
 * What went wrong on the browser's side, in words; null when the error is the server's (an
 * ApiError, shown as the server put it) or the panel's own.
 */
export function passkeyProblem(error: unknown): string | null {
  if (error instanceof ApiError) return null;
  if (error instanceof WebAuthnError && error.code === 'ERROR_AUTHENTICATOR_PREVIOUSLY_REGISTERED') {
    return 'This device already holds a passkey for your account: it is in the list.';
  }
  if (passkeyCancelled(error)) {
    return 'The passkey prompt was closed or timed out. Try again when you are ready.';
  }
  if (error instanceof WebAuthnError || error instanceof DOMException) {
    return `Your browser could not use a passkey: ${error.message}`;
  }
  return null;
}

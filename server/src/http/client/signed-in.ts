// The answers of a sign-in (auth/login/, auth/otp-login/ verify, auth/2fa/, auth/passkey/): a signed-in session,
// or, when the account has two-factor sign-in on, a half session and the methods that complete it
// (CONTRACT §11). Shared by the route files that sign in.

import type { FastifyReply } from 'fastify';
import { Type } from 'typebox';
import type { SignedIn } from '../../core/auth/auth.service.ts';
import { csrfTokenFor } from '../../core/auth/sessions.ts';
import type { Deps } from '../../core/deps.ts';
import { isoWithOffset } from '../../core/time.ts';
import { AccountSchema, accountView } from '../views/account.view.ts';
import { setSessionCookie } from './context.ts';
import { okSchema } from './envelopes.ts';

export const SignedInSchema = okSchema({
  account: AccountSchema,
  csrf_token: Type.String({ description: 'CSRF token of the new session' }),
  session: Type.Object({ expires_at: Type.String({ format: 'date-time' }), remember: Type.Boolean() }),
});

export const TwoFactorRequiredSchema = okSchema({
  two_factor_required: Type.Literal(true),
  methods: Type.Array(Type.Union([Type.Literal('totp'), Type.Literal('recovery'), Type.Literal('passkey')]), {
    description:
      'totp: a code of the authenticator app; recovery: one of the recovery codes; passkey: one of the ' +
      'account\'s passkeys (listed only when it has one; options from POST auth/2fa/ {action:"passkey_options"})',
  }),
  csrf_token: Type.String({ description: 'CSRF token of the half session, for POST auth/2fa/' }),
});

/** Set a signed-in session's cookie and answer with the account and the session. */
export function signedInBody(deps: Deps, reply: FastifyReply, signedIn: SignedIn, message: string) {
  setSessionCookie(deps, reply, signedIn.session.id, signedIn.session.remember);
  return {
    success: true as const,
    message,
    account: accountView(signedIn.account),
    csrf_token: csrfTokenFor(deps.secretKey, signedIn.session.id),
    session: {
      expires_at: isoWithOffset(signedIn.session.expiresAt),
      remember: signedIn.session.remember,
    },
  };
}

/**
 * Set the new session's cookie and answer: signed in, or (two-factor sign-in on) that the second
 * step is needed. A half session's answer tells nothing about the account.
 */
export function signedInAnswer(deps: Deps, reply: FastifyReply, signedIn: SignedIn, message: string) {
  if (!signedIn.twoFactorRequired) return signedInBody(deps, reply, signedIn, message);
  setSessionCookie(deps, reply, signedIn.session.id, signedIn.session.remember);
  return {
    success: true as const,
    message: signedIn.methods.includes('passkey')
      ? 'Enter the code from your authenticator app or a recovery code, or use a passkey.'
      : 'Enter the code from your authenticator app, or a recovery code.',
    two_factor_required: true as const,
    methods: [...signedIn.methods],
    csrf_token: csrfTokenFor(deps.secretKey, signedIn.session.id),
  };
}

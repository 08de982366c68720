// CONTRACT §11: signing in with a passkey alone. GET /api/v1/client/auth/passkey/ gives the
// request options (any discoverable passkey; the challenge bound to this browser's session
// cookie, made here when it has none), POST answers them and, when right, signs in fully.

import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyInstance } from 'fastify';
import { Type } from 'typebox';
import { csrfTokenFor, newSessionId } from '../../core/auth/sessions.ts';
import { sha256Hex } from '../../core/crypto/secrets.ts';
import type { Deps } from '../../core/deps.ts';
import { AppError } from '../../core/errors.ts';
import { clientInfo, clientRateKey } from '../request-context.ts';
import { sessionErrors } from '../schemas.ts';
import { limit, setSessionCookie } from './context.ts';
import { mutationBody, okSchema } from './envelopes.ts';
import { SignedInSchema, signedInBody } from './signed-in.ts';
import { AuthenticationResponseSchema, asAuthenticationResponse, RequestOptionsSchema } from './webauthn-schemas.ts';

const tags = ['auth'];

export async function passkeyRoutes(root: FastifyInstance, { deps }: { deps: Deps }): Promise<void> {
  const app = root.withTypeProvider<TypeBoxTypeProvider>();

  app.get(
    '/passkey/',
    {
      config: { access: 'public' },
      schema: {
        operationId: 'getPasskeySignInOptions',
        tags,
        summary: 'Options to sign in with a passkey (navigator.credentials.get)',
        description:
          'No allowCredentials: the authenticator offers the passkeys it holds for this site (discoverable ' +
          'credentials); user verification required. The challenge is valid 5 minutes, once, and only for this ' +
          "browser's session cookie (set here when there is none, as auth/csrf/ does); asking again replaces it. " +
          "`csrf_token` is the session's token, for the POST.",
        response: {
          200: okSchema({ options: RequestOptionsSchema, csrf_token: Type.String() }),
          ...sessionErrors(429),
        },
      },
    },
    async (request, reply) => {
      await limit(deps, reply, [['csrf_ip', clientRateKey(request)]]);
      let id = request.clientSession.id;
      if (id === null) {
        id = newSessionId();
        setSessionCookie(deps, reply, id, false);
      }
      reply.header('Cache-Control', 'no-store');
      const options = await deps.passkeys.signInOptions(sha256Hex(id));
      return {
        success: true as const,
        message: 'Use a passkey with these options.',
        options,
        csrf_token: csrfTokenFor(deps.secretKey, id),
      };
    },
  );

  app.post(
    '/passkey/',
    {
      config: { access: 'public', csrf: true },
      schema: {
        operationId: 'signInWithPasskey',
        tags,
        summary: 'Sign in with a passkey alone',
        description:
          '`{response}`: PublicKeyCredential.toJSON() of navigator.credentials.get() with the options of GET ' +
          'auth/passkey/ (same session cookie; CSRF token as for login). A passkey with user verification is two ' +
          'factors: the session is signed in fully, with two-factor sign-in on too (no code asked). The session id is ' +
          'replaced; `remember` keeps it 30 days. A passkey that is unknown, deleted, or whose answer is wrong (other ' +
          'challenge, origin or RP id, a replayed or stale answer, no user verification) is 401 invalid_credentials, ' +
          "the same for all; failures of a known passkey count towards its account's lockout with wrong passwords " +
          '(429 locked_out). 403 account_suspended for a suspended account.',
        body: mutationBody({ response: AuthenticationResponseSchema, remember: Type.Optional(Type.Boolean()) }),
        response: { 200: SignedInSchema, ...sessionErrors(400, 401, 403, 422, 429) },
      },
    },
    async (request, reply) => {
      await limit(deps, reply, [['login_ip', clientRateKey(request)]]);
      const sessionId = request.clientSession.id;
      if (sessionId === null) throw new AppError('csrf_failed');
      const signed = await deps.auth.signInWithPasskey(
        { response: asAuthenticationResponse(request.body.response), remember: request.body.remember ?? false },
        clientInfo(request),
        sessionId,
      );
      return signedInBody(deps, reply, signed, 'Signed in.');
    },
  );
}

// Spec 4.3: /api/v1/client/auth/… — csrf bootstrap, register, login, otp-login, forgot, reset,
// verify, logout. Public routes except logout; login and logout check CSRF, and so does every
// public route whose body comes as a form rather than JSON (see plugin.ts).

import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyInstance } from 'fastify';
import { Type } from 'typebox';
import {
  loginCodeProblem,
  normalizeIdentifier,
  passwordProblem,
  registrationProblems,
} from '../../core/accounts/rules.ts';
import { csrfTokenFor, newSessionId } from '../../core/auth/sessions.ts';
import type { Deps } from '../../core/deps.ts';
import { AppError } from '../../core/errors.ts';
import { counted } from '../../core/words.ts';
import { clientInfo, clientRateKey, whoOf } from '../request-context.ts';
import { sessionErrors } from '../schemas.ts';
import { AccountSchema, accountView } from '../views/account.view.ts';
import { clearSessionCookie, limit, limited, setSessionCookie } from './context.ts';
import { mutationBody, okSchema } from './envelopes.ts';
import { SignedInSchema, signedInAnswer, TwoFactorRequiredSchema } from './signed-in.ts';

const tags = ['auth'];
const Str = (max: number, description?: string) =>
  Type.String({ maxLength: max, ...(description ? { description } : {}) });

/** A sign-in's answer: signed in, or the second step needed (two-factor sign-in on). */
const SignInAnswer = Type.Union([SignedInSchema, TwoFactorRequiredSchema]);

/** Login names its account by `identifier` or its alias `email`. */
function identifierProblem(body: Record<string, unknown>): Record<string, string> {
  const given = body.identifier ?? body.email;
  return typeof given === 'string' && given.trim() !== '' ? {} : { identifier: 'is required' };
}

/** Step 2 of a code sign-in needs the code, as mailed. */
function otpProblems(body: Record<string, unknown>): Record<string, string> {
  if (body.action !== 'verify') return {};
  if (body.code === undefined || body.code === '') return { code: 'is required' };
  const problem = typeof body.code === 'string' ? loginCodeProblem(body.code) : null;
  return problem ? { code: problem } : {};
}

function newPasswordProblem(body: Record<string, unknown>): Record<string, string> {
  const problem = typeof body.password === 'string' ? passwordProblem(body.password) : null;
  return problem ? { password: problem } : {};
}

export async function authRoutes(root: FastifyInstance, { deps }: { deps: Deps }): Promise<void> {
  const app = root.withTypeProvider<TypeBoxTypeProvider>();

  app.get(
    '/csrf/',
    {
      config: { access: 'public' },
      schema: {
        operationId: 'getCsrfToken',
        tags,
        summary: 'Start an anonymous session and get its CSRF token (needed by login)',
        response: { 200: okSchema({ csrf_token: Type.String() }), ...sessionErrors(429) },
      },
    },
    async (request, reply) => {
      await limit(deps, reply, [['csrf_ip', clientRateKey(request)]]);
      let id = request.clientSession.id;
      if (id === null) {
        id = newSessionId();
        setSessionCookie(deps, reply, id, false);
      }
      return { success: true as const, message: 'CSRF token issued.', csrf_token: csrfTokenFor(deps.secretKey, id) };
    },
  );

  app.post(
    '/register/',
    {
      config: { access: 'public', fieldRules: registrationProblems },
      schema: {
        operationId: 'register',
        tags,
        summary: 'Create an account; a verification link is e-mailed',
        description:
          'name 2–128 characters; email unique (case-insensitive); username 3–32 of a–z 0–9 _ . - (unique); ' +
          'password 8–128 characters with a letter and a digit. Every failing field is reported at once.',
        body: mutationBody({ name: Str(512), email: Str(320), username: Str(64), password: Str(1024) }),
        response: { 201: okSchema({ account: AccountSchema }), ...sessionErrors(400, 422, 429) },
      },
    },
    async (request, reply) => {
      const body = request.body;
      // A registration refused for the format of its fields (a typo) does not use up the allowance;
      // one refused because the e-mail or username is taken does (else probing for them is free).
      const account = await limited(deps, reply, [['register_ip', clientRateKey(request)]], () =>
        deps.accounts.register(body),
      );
      return reply.code(201).send({
        success: true as const,
        message: `Account created. We have sent a verification link to ${account.email}.`,
        account: accountView(account),
      });
    },
  );

  app.post(
    '/login/',
    {
      config: { access: 'public', csrf: true, fieldRules: identifierProblem },
      schema: {
        operationId: 'login',
        tags,
        summary: 'Sign in with e-mail or username and password',
        description:
          'Needs the CSRF token of the current (anonymous) session from GET auth/csrf/. The session id is replaced. ' +
          '`remember` keeps the session for 30 days. Failures: 401 invalid_credentials, 403 email_unverified or ' +
          'account_suspended (only with the right password), 429 locked_out after 5 failures in 15 minutes ' +
          '(wrong passwords and wrong second-factor codes together). With two-factor sign-in on, the answer is ' +
          '`{two_factor_required: true, methods}` and a half session that only POST auth/2fa/ (and logout) accept.',
        body: mutationBody({
          identifier: Type.Optional(Str(320, 'e-mail address or username')),
          email: Type.Optional(Str(320, 'alias of identifier')),
          password: Str(1024),
          remember: Type.Optional(Type.Boolean()),
        }),
        response: { 200: SignInAnswer, ...sessionErrors(400, 401, 403, 422, 429) },
      },
    },
    async (request, reply) => {
      await limit(deps, reply, [['login_ip', clientRateKey(request)]]);
      const body = request.body;
      const missing = identifierProblem(body);
      if (missing.identifier) throw AppError.fields(missing);
      const identifier = (body.identifier ?? body.email) as string;
      const signedIn = await deps.auth.login(
        { identifier, password: body.password, remember: body.remember ?? false },
        clientInfo(request),
        request.clientSession.id ?? undefined,
      );
      return signedInAnswer(deps, reply, signedIn, 'Signed in.');
    },
  );

  app.post(
    '/otp-login/',
    {
      config: { access: 'public', fieldRules: otpProblems },
      schema: {
        operationId: 'otpLogin',
        tags,
        summary: 'Sign in with a one-time code sent by e-mail',
        description:
          'Step 1 `{action:"request", identifier}` mails a 6-digit code (valid 10 minutes) if the account exists; ' +
          'the answer is the same either way. Step 2 `{action:"verify", identifier, code}` starts a session. ' +
          'A code works once; 5 wrong tries end it; a new request replaces it. With two-factor sign-in on, verify ' +
          'answers `{two_factor_required: true, methods}` and a half session, as login does.',
        body: mutationBody({
          action: Type.Union([Type.Literal('request'), Type.Literal('verify')]),
          identifier: Str(320),
          code: Type.Optional(Str(32)),
          remember: Type.Optional(Type.Boolean()),
        }),
        response: {
          200: Type.Union([SignedInSchema, TwoFactorRequiredSchema, okSchema({})]),
          ...sessionErrors(400, 401, 422, 429),
        },
      },
    },
    async (request, reply) => {
      const body = request.body;
      const key = normalizeIdentifier(body.identifier);
      if (body.action === 'request') {
        await limit(deps, reply, [
          ['otp_request_ip', clientRateKey(request)],
          ['otp_request_identifier', key],
        ]);
        await deps.auth.requestLoginCode(body.identifier);
        return {
          success: true as const,
          message: 'If an account matches, we have e-mailed it a 6-digit sign-in code.',
        };
      }
      // A malformed code is refused before it is counted or tried: it cannot be anyone's code.
      const malformed = otpProblems(body);
      if (malformed.code) throw AppError.fields(malformed);
      await limit(deps, reply, [
        ['otp_verify_ip', clientRateKey(request)],
        ['otp_verify_identifier', key],
      ]);
      const signedIn = await deps.auth.verifyLoginCode(
        { identifier: body.identifier, code: (body.code as string).trim(), remember: body.remember ?? false },
        clientInfo(request),
        request.clientSession.id ?? undefined,
      );
      return signedInAnswer(deps, reply, signedIn, 'Signed in.');
    },
  );

  app.post(
    '/forgot/',
    {
      config: { access: 'public' },
      schema: {
        operationId: 'forgotPassword',
        tags,
        summary: 'Mail a password-reset link (valid 1 hour); the same answer whether or not the account exists',
        body: mutationBody({ identifier: Str(320, 'e-mail address or username') }),
        response: { 200: okSchema({}), ...sessionErrors(400, 422, 429) },
      },
    },
    async (request, reply) => {
      const { identifier } = request.body;
      await limit(deps, reply, [
        ['forgot_ip', clientRateKey(request)],
        ['forgot_identifier', normalizeIdentifier(identifier)],
      ]);
      await deps.auth.forgotPassword(identifier);
      return {
        success: true as const,
        message: 'If an account matches, we have e-mailed it a link to reset the password.',
      };
    },
  );

  app.post(
    '/reset/',
    {
      config: { access: 'public', fieldRules: newPasswordProblem },
      schema: {
        operationId: 'resetPassword',
        tags,
        summary: 'Set a new password with the token from a reset link; ends every session',
        body: mutationBody({ token: Str(200), password: Str(1024) }),
        response: { 200: okSchema({}), ...sessionErrors(400, 422, 429) },
      },
    },
    async (request, reply) => {
      await limit(deps, reply, [['reset_ip', clientRateKey(request)]]);
      const { token, password } = request.body;
      const { revokedTokens } = await deps.auth.resetPassword(token, password, whoOf(request));
      return {
        success: true as const,
        message:
          revokedTokens > 0
            ? `Password changed; every session ended and ${counted(revokedTokens, 'API token')} revoked. Sign in with the new password.`
            : 'Password changed. Sign in with the new password.',
      };
    },
  );

  app.post(
    '/verify/',
    {
      config: { access: 'public' },
      schema: {
        operationId: 'verifyEmail',
        tags,
        summary: 'Verify the e-mail address with the token from the verification link',
        body: mutationBody({ token: Str(200) }),
        response: { 200: okSchema({ account: AccountSchema }), ...sessionErrors(400, 422, 429) },
      },
    },
    async (request, reply) => {
      await limit(deps, reply, [['verify_ip', clientRateKey(request)]]);
      const { token } = request.body;
      const account = await deps.accounts.verifyEmail(token);
      return {
        success: true as const,
        message: 'E-mail address verified. You can sign in now.',
        account: accountView(account),
      };
    },
  );

  app.post(
    '/logout/',
    {
      // A half session (second factor still to come) may be ended too.
      config: { access: 'client', halfSession: true },
      schema: {
        operationId: 'logout',
        tags,
        summary: 'End the session (server-side) and clear the cookie',
        response: { 200: okSchema({}), ...sessionErrors(401, 403) },
      },
    },
    async (request, reply) => {
      await deps.auth.logout(request.clientSession.id as string);
      clearSessionCookie(deps, reply);
      return { success: true as const, message: 'Signed out.' };
    },
  );
}

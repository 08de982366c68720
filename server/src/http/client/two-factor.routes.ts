// CONTRACT §11: two-factor sign-in. POST /api/v1/client/auth/2fa/ completes a half session (the
// only route besides logout a half session reaches); GET|POST /api/v1/client/account/security/
// shows and changes the account's TOTP and recovery codes.

import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyInstance } from 'fastify';
import QRCode from 'qrcode';
import { Type } from 'typebox';
import { RECOVERY_CODE_COUNT, secondFactorProblems } from '../../core/auth/two-factor.ts';
import type { Deps } from '../../core/deps.ts';
import { AppError } from '../../core/errors.ts';
import { clientInfo, clientRateKey, whoOf } from '../request-context.ts';
import { sessionErrors } from '../schemas.ts';
import { limit, signedIn } from './context.ts';
import { mutationBody, okSchema } from './envelopes.ts';
import { SignedInSchema, signedInBody } from './signed-in.ts';

const Code = Type.String({ maxLength: 32, description: 'the 6 digits the authenticator app shows' });
const RecoveryCode = Type.String({ maxLength: 64, description: 'one of the recovery codes (xxxxx-xxxxx)' });

const TwoFactorStatus = Type.Object({
  totp: Type.Boolean({ description: 'whether sign-in asks for a code of the authenticator app' }),
  recovery_codes_left: Type.Integer({ description: 'unused recovery codes (0 while two-factor sign-in is off)' }),
});

const PasskeySchema = Type.Object({
  id: Type.Integer(),
  name: Type.String(),
  created_at: Type.String({ format: 'date-time' }),
  last_used_at: Type.Union([Type.String({ format: 'date-time' }), Type.Null()]),
});

const RecoveryCodes = Type.Array(Type.String(), {
  minItems: RECOVERY_CODE_COUNT,
  maxItems: RECOVERY_CODE_COUNT,
  description: 'shown this once; each works once',
});

const SecurityAnswer = Type.Union([
  okSchema({
    secret: Type.String({ description: 'base32, for typing into the app' }),
    otpauth_url: Type.String({ description: 'otpauth://totp/… (what the QR code holds)' }),
    qr_svg: Type.String({ description: 'the QR code of otpauth_url, an SVG document' }),
  }),
  okSchema({ recovery_codes: RecoveryCodes }),
  okSchema({ two_factor: TwoFactorStatus }),
]);

async function status(deps: Deps, accountId: number) {
  const s = await deps.twoFactor.status(accountId);
  return { totp: s.totp, recovery_codes_left: s.recoveryCodesLeft };
}

export async function twoFactorRoutes(root: FastifyInstance, { deps }: { deps: Deps }): Promise<void> {
  const app = root.withTypeProvider<TypeBoxTypeProvider>();

  app.post(
    '/auth/2fa/',
    {
      config: { halfSession: true, fieldRules: secondFactorProblems },
      schema: {
        operationId: 'completeTwoFactor',
        tags: ['auth'],
        summary: 'Finish a sign-in with a code of the authenticator app, or a recovery code',
        description:
          'Only a half session (the answer `two_factor_required` of login or otp-login) may call it. `{code}` (6 digits; ' +
          'each code is accepted once) or `{recovery_code}` (each works once). A wrong one is 422 naming the field; ' +
          'wrong codes count with wrong passwords: 5 within 15 minutes lock the account (429 locked_out). The ' +
          'session id is replaced. A session already signed in gets 409 conflict.',
        body: mutationBody({ code: Type.Optional(Code), recovery_code: Type.Optional(RecoveryCode) }),
        response: { 200: SignedInSchema, ...sessionErrors(400, 401, 403, 409, 422, 429) },
      },
    },
    async (request, reply) => {
      const pending = request.clientSession.pending;
      if (pending === null) throw new AppError('conflict', { message: 'This session is already signed in.' });
      await limit(deps, reply, [['login_ip', clientRateKey(request)]]);
      const body = request.body;
      const signed = await deps.auth.completeTwoFactor(
        { idHash: pending.idHash, accountId: pending.account.id, remember: pending.remember },
        { code: body.code, recovery_code: body.recovery_code },
        clientInfo(request),
      );
      return signedInBody(deps, reply, signed, 'Signed in.');
    },
  );

  app.get(
    '/account/security/',
    {
      schema: {
        operationId: 'getAccountSecurity',
        tags: ['account'],
        summary: 'Two-factor sign-in and passkeys of the account',
        response: {
          200: okSchema({ two_factor: TwoFactorStatus, passkeys: Type.Array(PasskeySchema) }),
          ...sessionErrors(401),
        },
      },
    },
    async (request) => {
      const session = signedIn(request);
      return {
        success: true as const,
        message: 'Security settings loaded.',
        two_factor: await status(deps, session.account.id),
        passkeys: [] as { id: number; name: string; created_at: string; last_used_at: string | null }[],
      };
    },
  );

  app.post(
    '/account/security/',
    {
      schema: {
        operationId: 'changeAccountSecurity',
        tags: ['account'],
        summary: 'Turn two-factor sign-in on or off, or replace the recovery codes',
        description:
          '`{action:"totp_begin"}` → a new secret, its otpauth URL and QR code (SVG), pending until confirmed; ' +
          '`{action:"totp_enable", code}` confirms it with a code of the app and returns 10 recovery codes, shown ' +
          'once; `{action:"totp_disable", password, code | recovery_code}`; `{action:"recovery_regenerate", code}` ' +
          'replaces the recovery codes. A wrong code is 422 naming `code`; wrong codes and passwords of disable and ' +
          'regenerate count towards the sign-in lockout (429 locked_out).',
        body: mutationBody({
          action: Type.Union([
            Type.Literal('totp_begin'),
            Type.Literal('totp_enable'),
            Type.Literal('totp_disable'),
            Type.Literal('recovery_regenerate'),
          ]),
          code: Type.Optional(Code),
          recovery_code: Type.Optional(RecoveryCode),
          password: Type.Optional(Type.String({ maxLength: 1024 })),
        }),
        response: { 200: SecurityAnswer, ...sessionErrors(400, 401, 403, 409, 422, 429) },
      },
    },
    async (request, reply) => {
      const session = signedIn(request);
      const accountId = session.account.id;
      await limit(deps, reply, [['account_security', `account:${accountId}`]]);
      const body = request.body;
      // Secrets and recovery codes are shown once: no cache may keep them.
      reply.header('Cache-Control', 'no-store');
      switch (body.action) {
        case 'totp_begin': {
          const begun = await deps.twoFactor.begin(accountId, session.account.email);
          const qr_svg = await QRCode.toString(begun.otpauthUrl, { type: 'svg', errorCorrectionLevel: 'M', margin: 2 });
          return {
            success: true as const,
            message: 'Scan the QR code with your authenticator app, then confirm with a code (totp_enable).',
            secret: begun.secret,
            otpauth_url: begun.otpauthUrl,
            qr_svg,
          };
        }
        case 'totp_enable': {
          if (body.code === undefined || body.code === '') throw AppError.fields({ code: 'is required' });
          const recovery_codes = await deps.twoFactor.enable(accountId, body.code, whoOf(request));
          return {
            success: true as const,
            message: 'Two-factor sign-in is on. Keep these recovery codes somewhere safe: they are shown once.',
            recovery_codes,
          };
        }
        case 'totp_disable': {
          if (body.password === undefined || body.password === '') {
            throw AppError.fields({ password: 'is required', ...secondFactorProblems(body) });
          }
          const account = await deps.accounts.get(accountId);
          await deps.twoFactor.disable(
            accountId,
            account.password_hash,
            {
              password: body.password,
              code: body.code,
              recovery_code: body.recovery_code,
            },
            whoOf(request),
          );
          return {
            success: true as const,
            message: 'Two-factor sign-in is off.',
            two_factor: await status(deps, accountId),
          };
        }
        case 'recovery_regenerate': {
          if (body.code === undefined || body.code === '') throw AppError.fields({ code: 'is required' });
          const recovery_codes = await deps.twoFactor.regenerate(accountId, body.code, whoOf(request));
          return {
            success: true as const,
            message: 'New recovery codes; the old ones no longer work. They are shown once.',
            recovery_codes,
          };
        }
      }
    },
  );
}

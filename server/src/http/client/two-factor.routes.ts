// CONTRACT §11: two-factor sign-in and passkeys. POST /api/v1/client/auth/2fa/ completes a half
// session (the only route besides logout a half session reaches), with a code, a recovery code or
// a passkey (whose options it hands out too); GET|POST /api/v1/client/account/security/ shows and
// changes the account's TOTP, recovery codes and passkeys.

import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyInstance } from 'fastify';
import type QRCode from 'qrcode';
import { type Static, Type } from 'typebox';
import type { Who } from '../../core/activity/activity.ts';
import { MAX_PASSKEYS, PASSKEY_NAME_MAX, passkeyNameProblem } from '../../core/auth/passkeys.ts';
import type { LoadedSession } from '../../core/auth/sessions.ts';
import { RECOVERY_CODE_COUNT, secondFactorProblems, secondStepProblems } from '../../core/auth/two-factor.ts';
import type { Deps } from '../../core/deps.ts';
import { AppError } from '../../core/errors.ts';
import { onFirstUse } from '../../core/on-first-use.ts';
import { clientInfo, clientRateKey, whoOf } from '../request-context.ts';
import { sessionErrors } from '../schemas.ts';
import { limit, signedIn } from './context.ts';
import { mutationBody, okSchema } from './envelopes.ts';
import { SignedInSchema, signedInBody } from './signed-in.ts';
import {
  AuthenticationResponseSchema,
  asAuthenticationResponse,
  asRegistrationResponse,
  CreationOptionsSchema,
  PasskeySchema,
  passkeyView,
  RegistrationResponseSchema,
  RequestOptionsSchema,
} from './webauthn-schemas.ts';

/** qrcode, loaded at the first two-factor set-up (core/on-first-use.ts). */
const qrcode = onFirstUse<typeof QRCode>('qrcode');

const Code = Type.String({ maxLength: 32, description: 'the 6 digits the authenticator app shows' });
const RecoveryCode = Type.String({ maxLength: 64, description: 'one of the recovery codes (xxxxx-xxxxx)' });

const TwoFactorStatus = Type.Object({
  totp: Type.Boolean({ description: 'whether sign-in asks for a code of the authenticator app' }),
  recovery_codes_left: Type.Integer({ description: 'unused recovery codes (0 while two-factor sign-in is off)' }),
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
  okSchema({ options: CreationOptionsSchema }),
  okSchema({ passkey: PasskeySchema }),
  okSchema({ passkeys: Type.Array(PasskeySchema) }),
]);

/** The second step's fields, or (asking for a passkey's options) none. */
function secondStepRules(body: Record<string, unknown>): Record<string, string> {
  return body.action === 'passkey_options' ? {} : secondStepProblems(body);
}

async function status(deps: Deps, accountId: number) {
  const s = await deps.twoFactor.status(accountId);
  return { totp: s.totp, recovery_codes_left: s.recoveryCodesLeft };
}

const SecurityBody = mutationBody({
  action: Type.Union([
    Type.Literal('totp_begin'),
    Type.Literal('totp_enable'),
    Type.Literal('totp_disable'),
    Type.Literal('recovery_regenerate'),
    Type.Literal('passkey_begin'),
    Type.Literal('passkey_finish'),
    Type.Literal('passkey_delete'),
  ]),
  code: Type.Optional(Code),
  recovery_code: Type.Optional(RecoveryCode),
  password: Type.Optional(Type.String({ maxLength: 1024 })),
  name: Type.Optional(Type.String({ maxLength: 256, description: `passkey_finish: 1–${PASSKEY_NAME_MAX} characters` })),
  response: Type.Optional(RegistrationResponseSchema),
  id: Type.Optional(Type.Integer({ description: 'passkey_delete: the passkey' })),
});

type SecurityInput = Static<typeof SecurityBody>;

/** The passkey actions of POST account/security/. */
async function passkeyAction(deps: Deps, session: LoadedSession, body: SecurityInput, who: Who) {
  const accountId = session.account.id;
  switch (body.action) {
    case 'passkey_begin': {
      const options = await deps.passkeys.beginRegistration(session.account, session.idHash);
      return {
        success: true as const,
        message: 'Create the passkey with these options, then send the answer (passkey_finish).',
        options,
      };
    }
    case 'passkey_finish': {
      if (body.response === undefined) {
        throw AppError.fields({
          response: 'is required',
          ...(passkeyNameProblem(body.name) ? { name: passkeyNameProblem(body.name) as string } : {}),
        });
      }
      const passkey = await deps.passkeys.finishRegistration(
        accountId,
        session.idHash,
        body.name,
        asRegistrationResponse(body.response),
        who,
      );
      return { success: true as const, message: 'Passkey added.', passkey: passkeyView(passkey) };
    }
    default: {
      if (body.id === undefined) throw AppError.fields({ id: 'is required' });
      await deps.passkeys.remove(accountId, body.id, who);
      const passkeys = (await deps.passkeys.list(accountId)).map(passkeyView);
      return { success: true as const, message: 'Passkey deleted.', passkeys };
    }
  }
}

export async function twoFactorRoutes(root: FastifyInstance, { deps }: { deps: Deps }): Promise<void> {
  const app = root.withTypeProvider<TypeBoxTypeProvider>();

  app.post(
    '/auth/2fa/',
    {
      config: { halfSession: true, fieldRules: secondStepRules },
      schema: {
        operationId: 'completeTwoFactor',
        tags: ['auth'],
        summary: 'Finish a sign-in with a code of the authenticator app, a recovery code or a passkey',
        description:
          'Only a half session (the answer `two_factor_required` of login or otp-login) may call it. `{code}` (6 digits; ' +
          'each code is accepted once), `{recovery_code}` (each works once) or `{passkey}`: the answer of ' +
          'navigator.credentials.get() (PublicKeyCredential.toJSON()) to the options of `{action:"passkey_options"}`, ' +
          "which this route answers with `{options}` (the account's passkeys as allowCredentials; a challenge valid " +
          '5 minutes, once, for this session; 409 conflict when the account has no passkey). A wrong one is 422 naming ' +
          'the field; wrong ones count with wrong passwords: 5 within 15 minutes lock the account (429 locked_out). ' +
          'The session id is replaced. A session already signed in gets 409 conflict.',
        body: mutationBody({
          action: Type.Optional(
            Type.Literal('passkey_options', { description: 'ask for the options of a passkey (nothing else sent)' }),
          ),
          code: Type.Optional(Code),
          recovery_code: Type.Optional(RecoveryCode),
          passkey: Type.Optional(AuthenticationResponseSchema),
        }),
        response: {
          200: Type.Union([SignedInSchema, okSchema({ options: RequestOptionsSchema })]),
          ...sessionErrors(400, 401, 403, 409, 422, 429),
        },
      },
    },
    async (request, reply) => {
      const pending = request.clientSession.pending;
      if (pending === null) throw new AppError('conflict', { message: 'This session is already signed in.' });
      await limit(deps, reply, [['login_ip', clientRateKey(request)]]);
      const body = request.body;
      if (body.action === 'passkey_options') {
        reply.header('Cache-Control', 'no-store');
        const options = await deps.passkeys.secondFactorOptions(pending.idHash, pending.account.id);
        return { success: true as const, message: 'Use one of your passkeys with these options.', options };
      }
      const signed = await deps.auth.completeTwoFactor(
        { idHash: pending.idHash, accountId: pending.account.id, remember: pending.remember },
        {
          code: body.code,
          recovery_code: body.recovery_code,
          passkey: body.passkey === undefined ? undefined : asAuthenticationResponse(body.passkey),
        },
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
        passkeys: (await deps.passkeys.list(session.account.id)).map(passkeyView),
      };
    },
  );

  app.post(
    '/account/security/',
    {
      schema: {
        operationId: 'changeAccountSecurity',
        tags: ['account'],
        summary: 'Turn two-factor sign-in on or off, replace the recovery codes, add or delete passkeys',
        description:
          '`{action:"totp_begin"}` → a new secret, its otpauth URL and QR code (SVG), pending until confirmed; ' +
          '`{action:"totp_enable", code}` confirms it with a code of the app and returns 10 recovery codes, shown ' +
          'once; `{action:"totp_disable", password, code | recovery_code}`; `{action:"recovery_regenerate", code}` ' +
          'replaces the recovery codes. A wrong code is 422 naming `code`; wrong codes and passwords of disable and ' +
          'regenerate count towards the sign-in lockout (429 locked_out). Passkeys: `{action:"passkey_begin"}` → ' +
          '`{options}` for navigator.credentials.create() (a discoverable credential, user verification preferred, ' +
          "the account's passkeys excluded; the challenge is valid 5 minutes, once, for this session); " +
          '`{action:"passkey_finish", name, response}` (name 1–' +
          `${PASSKEY_NAME_MAX} characters; response: PublicKeyCredential.toJSON() of the created credential) → ` +
          '`{passkey}`, or 422 naming `name` or `response`; `{action:"passkey_delete", id}` → the remaining ' +
          `\`{passkeys}\` (404 not_owner for an id not the account's). At most ${MAX_PASSKEYS} passkeys (409 ` +
          'limit_reached). A passkey signs in alone (auth/passkey/) and, with two-factor sign-in on, is a second ' +
          'factor; it does not by itself add a second step to password sign-in.',
        body: SecurityBody,
        response: { 200: SecurityAnswer, ...sessionErrors(400, 401, 403, 404, 409, 422, 429) },
      },
    },
    async (request, reply) => {
      const session = signedIn(request);
      const accountId = session.account.id;
      await limit(deps, reply, [['account_security', `account:${accountId}`]]);
      const body = request.body;
      // Secrets, recovery codes and challenges are for this answer only: no cache may keep them.
      reply.header('Cache-Control', 'no-store');
      switch (body.action) {
        case 'totp_begin': {
          const begun = await deps.twoFactor.begin(accountId, session.account.email);
          const qr_svg = await qrcode().toString(begun.otpauthUrl, {
            type: 'svg',
            errorCorrectionLevel: 'M',
            margin: 2,
          });
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
        default:
          return passkeyAction(deps, session, body, whoOf(request));
      }
    },
  );
}

// Passkeys (CONTRACT §11): an account registers up to ten WebAuthn credentials, discoverable ones
// (the authenticator keeps the account, so sign-in needs no name typed), and may then sign in
// with one alone (user verification makes it two factors in one), or use one as the second
// factor after a password when two-factor sign-in (TOTP) is on. This file makes the ceremonies'
// options and registers and removes passkeys; the assertion's check is in ./webauthn.ts, signing
// in in ./auth.service.ts.
//
// Registering takes a fully signed-in session, and nothing more: a half session never reaches
// a signed-in route. A passkey does not by itself turn on a second step at password sign-in.

import type {
  PublicKeyCredentialCreationOptionsJSON,
  PublicKeyCredentialRequestOptionsJSON,
  RegistrationResponseJSON,
} from '@simplewebauthn/server';
import type { Kysely } from 'kysely';
import type { DB } from '../../db/tables.ts';
import { byClient, recordActivity, type Who } from '../activity/activity.ts';
import { AppError } from '../errors.ts';
import type { Clock } from '../time.ts';
import {
  CEREMONY_TIMEOUT_MS,
  putChallenge,
  type RelyingParty,
  simpleWebAuthn,
  takeChallenge,
  userHandleOf,
} from './webauthn.ts';

export const MAX_PASSKEYS = 10;
export const PASSKEY_NAME_MAX = 64;

export interface PasskeyOptions {
  db: Kysely<DB>;
  clock: Clock;
  secretKey: Buffer;
  rp: RelyingParty;
}

/** A passkey as its owner sees it. */
export interface Passkey {
  id: number;
  name: string;
  createdAt: Date;
  lastUsedAt: Date | null;
}

/** Why a passkey's name cannot be one (1–64 characters once trimmed), or null. */
export function passkeyNameProblem(name: unknown): string | null {
  if (typeof name !== 'string' || name.trim() === '') return 'is required';
  if (name.trim().length > PASSKEY_NAME_MAX) return `must be at most ${PASSKEY_NAME_MAX} characters`;
  return null;
}

const tooMany = () =>
  new AppError('limit_reached', {
    message: `An account can have at most ${MAX_PASSKEYS} passkeys; delete one first.`,
    details: { limit: MAX_PASSKEYS },
  });

const notVerified = (why: string) =>
  AppError.fields({ response: why }, 'The passkey could not be registered; start again (passkey_begin).');

async function passkeysOf(db: Kysely<DB>, accountId: number) {
  return db
    .selectFrom('passkeys')
    .select(['id', 'name', 'credential_id', 'transports', 'user_handle', 'created_at', 'last_used_at'])
    .where('account_id', '=', accountId)
    .orderBy('created_at')
    .orderBy('id')
    .execute();
}

/** What the registration answer proved, before it is stored. */
type Registered = { ok: true; passkey: Passkey } | { ok: false; why: string };

async function verifyRegistration(
  options: PasskeyOptions,
  expectedChallenge: string,
  response: RegistrationResponseJSON,
) {
  try {
    const verified = await simpleWebAuthn().verifyRegistrationResponse({
      response,
      expectedChallenge,
      expectedOrigin: options.rp.origin,
      expectedRPID: options.rp.id,
      // Verification is asked for ("preferred"), not required: as the second factor after a
      // password a passkey needs none; signing in with one alone requires it at that time.
      requireUserVerification: false,
    });
    return verified.verified ? verified.registrationInfo : null;
  } catch {
    return null;
  }
}

/** Step 2 of registering, in one transaction (see `finishRegistration`). */
async function register(
  options: PasskeyOptions,
  accountId: number,
  sessionHash: string,
  name: string,
  response: RegistrationResponseJSON,
  who: Who,
): Promise<Registered> {
  const { clock, secretKey } = options;
  return options.db.transaction().execute(async (trx) => {
    // One registration of an account at a time, so the limit holds.
    await trx.selectFrom('accounts').select('id').where('id', '=', accountId).forUpdate().executeTakeFirst();
    const existing = await passkeysOf(trx, accountId);
    if (existing.length >= MAX_PASSKEYS) throw tooMany();
    const taken = await takeChallenge(trx, clock, sessionHash, 'register');
    if (!taken || taken.accountId !== accountId) {
      return { ok: false, why: 'no registration is under way (or it expired); start with passkey_begin' };
    }
    const info = await verifyRegistration(options, taken.challenge, response);
    if (!info) return { ok: false, why: 'could not be verified' };
    const row = await trx
      .insertInto('passkeys')
      .values({
        account_id: accountId,
        name,
        credential_id: info.credential.id,
        public_key: Buffer.from(info.credential.publicKey).toString('base64url'),
        user_handle: existing[0]?.user_handle ?? userHandleOf(secretKey, accountId),
        counter: info.credential.counter,
        transports: info.credential.transports ?? response.response.transports ?? [],
        backed_up: info.credentialBackedUp,
        created_at: clock(),
      })
      .onConflict((oc) => oc.column('credential_id').doNothing())
      .returning(['id', 'name', 'created_at', 'last_used_at'])
      .executeTakeFirst();
    if (!row) return { ok: false, why: 'this passkey is already registered' };
    await recordActivity(trx, {
      accountId,
      type: 'passkey_added',
      who,
      summary: `Passkey "${row.name}" added`,
      details: { passkey_id: row.id, name: row.name },
      at: clock(),
    });
    return { ok: true, passkey: { id: row.id, name: row.name, createdAt: row.created_at, lastUsedAt: null } };
  });
}

export function createPasskeys(options: PasskeyOptions) {
  const { db, clock, secretKey, rp } = options;

  return {
    /** The account's passkeys, oldest first. */
    async list(accountId: number): Promise<Passkey[]> {
      const rows = await passkeysOf(db, accountId);
      return rows.map((r) => ({ id: r.id, name: r.name, createdAt: r.created_at, lastUsedAt: r.last_used_at }));
    },

    /** Whether the account has a passkey (then a half session may finish with one). */
    async has(accountId: number): Promise<boolean> {
      const row = await db.selectFrom('passkeys').select('id').where('account_id', '=', accountId).executeTakeFirst();
      return row !== undefined;
    },

    /**
     * Step 1 of registering: creation options for navigator.credentials.create() — a discoverable
     * credential, user verification preferred, the account's passkeys excluded — and the
     * challenge kept for this session.
     */
    async beginRegistration(
      account: { id: number; email: string; name: string },
      sessionHash: string,
    ): Promise<PublicKeyCredentialCreationOptionsJSON> {
      const existing = await passkeysOf(db, account.id);
      if (existing.length >= MAX_PASSKEYS) throw tooMany();
      const handle = existing[0]?.user_handle ?? userHandleOf(secretKey, account.id);
      const creation = await simpleWebAuthn().generateRegistrationOptions({
        rpName: rp.name,
        rpID: rp.id,
        userName: account.email,
        userID: Buffer.from(handle, 'base64url'),
        userDisplayName: account.name,
        timeout: CEREMONY_TIMEOUT_MS,
        attestationType: 'none',
        excludeCredentials: existing.map((p) => ({ id: p.credential_id, transports: p.transports })),
        authenticatorSelection: { residentKey: 'required', userVerification: 'preferred' },
      });
      await putChallenge(db, clock, sessionHash, 'register', creation.challenge, account.id);
      return creation;
    },

    /**
     * Step 2: the authenticator's answer to this session's challenge (taken, right or wrong) is
     * verified and the passkey stored under `name`. 422 `errors.name` or `errors.response` when
     * refused; 409 limit_reached past ten.
     */
    async finishRegistration(
      accountId: number,
      sessionHash: string,
      rawName: unknown,
      response: RegistrationResponseJSON,
      who: Who = byClient(null),
    ): Promise<Passkey> {
      const problem = passkeyNameProblem(rawName);
      if (problem) throw AppError.fields({ name: problem });
      const result = await register(options, accountId, sessionHash, (rawName as string).trim(), response, who);
      if (!result.ok) throw notVerified(result.why);
      return result.passkey;
    },

    /** Delete one of the account's passkeys; 404 not_owner when it has none such. */
    async remove(accountId: number, id: number, who: Who = byClient(null)): Promise<void> {
      await db.transaction().execute(async (trx) => {
        const removed = await trx
          .deleteFrom('passkeys')
          .where('account_id', '=', accountId)
          .where('id', '=', id)
          .returning('name')
          .executeTakeFirst();
        if (!removed) throw new AppError('not_owner');
        await recordActivity(trx, {
          accountId,
          type: 'passkey_removed',
          who,
          summary: `Passkey "${removed.name}" removed`,
          details: { passkey_id: id, name: removed.name },
          at: clock(),
        });
      });
    },

    /**
     * Request options to sign in with a passkey alone: no credentials listed (the authenticator
     * offers the discoverable ones it holds), user verification required.
     */
    async signInOptions(sessionHash: string): Promise<PublicKeyCredentialRequestOptionsJSON> {
      const request = await simpleWebAuthn().generateAuthenticationOptions({
        rpID: rp.id,
        userVerification: 'required',
        timeout: CEREMONY_TIMEOUT_MS,
      });
      await putChallenge(db, clock, sessionHash, 'sign_in', request.challenge, null);
      return request;
    },

    /** Request options for a half session to finish with one of its account's passkeys. */
    async secondFactorOptions(sessionHash: string, accountId: number): Promise<PublicKeyCredentialRequestOptionsJSON> {
      const existing = await passkeysOf(db, accountId);
      if (existing.length === 0) {
        throw new AppError('conflict', { message: 'This account has no passkey; use a code or a recovery code.' });
      }
      const request = await simpleWebAuthn().generateAuthenticationOptions({
        rpID: rp.id,
        allowCredentials: existing.map((p) => ({ id: p.credential_id, transports: p.transports })),
        userVerification: 'preferred',
        timeout: CEREMONY_TIMEOUT_MS,
      });
      await putChallenge(db, clock, sessionHash, 'second_factor', request.challenge, accountId);
      return request;
    },
  };
}

export type Passkeys = ReturnType<typeof createPasskeys>;

// The second step of signing in (CONTRACT §11): the password (or the mailed code) was right and
// the account has two-factor sign-in on, so the session is only half signed in until it posts
// auth/2fa/ a code of the authenticator app, one of the recovery codes, or (when the account has
// one) a passkey's answer to the options auth/2fa/ gives for it. Wrong codes count with
// wrong passwords (5 in 15 minutes lock the account); the half session lasts 10 minutes; Cancel
// signs the half session out, back to the first step.

import { useMutation } from '@tanstack/react-query';
import { type FormEvent, useEffect, useRef, useState } from 'react';
import { useLocation, useNavigate } from 'react-router';
import { AuthLayout } from '../../components/Layout.tsx';
import { Alert, Button, ErrorAlert, fieldError, TextField, waitWords } from '../../components/ui.tsx';
import { ApiError, api, unwrap } from '../../lib/api.ts';
import { getPasskey, passkeyCancelled, passkeyProblem, passkeysSupported } from '../../lib/passkeys.ts';
import { nextPath, type SecondFactorMethod, useSessionChanged } from '../../lib/session.tsx';

const TWO_FA = '/api/v1/client/auth/2fa/';

/** The method offered first: a passkey (one touch) when the account has one, then the app. */
function firstMethod(methods: SecondFactorMethod[]): SecondFactorMethod {
  if (methods.includes('passkey') && passkeysSupported()) return 'passkey';
  return methods.includes('totp') ? 'totp' : 'recovery';
}

const SWITCH_LABELS: Record<SecondFactorMethod, string> = {
  passkey: 'Use a passkey',
  totp: 'Use your authenticator app',
  recovery: 'Use a recovery code',
};

const INTRO: Record<SecondFactorMethod, string> = {
  passkey: 'use one of your passkeys (your browser asks for your fingerprint, face, screen lock or security key).',
  totp: 'open your authenticator app and enter the 6-digit code it shows for Hostplane.',
  recovery: 'enter one of the recovery codes you saved when you turned on two-factor sign-in.',
};

export function TwoFactorStep({ methods }: { methods: SecondFactorMethod[] }) {
  const [method, setMethod] = useState<SecondFactorMethod>(() => firstMethod(methods));
  const [code, setCode] = useState('');
  const [recovery, setRecovery] = useState('');
  const [local, setLocal] = useState<string | undefined>();
  const sessionChanged = useSessionChanged();
  const navigate = useNavigate();
  const location = useLocation();
  const field = useRef<HTMLInputElement>(null);
  const passkeyButton = useRef<HTMLButtonElement>(null);

  const complete = useMutation({
    meta: { ownRefusal: true },
    mutationFn: async () => {
      if (method === 'passkey') {
        const asked = await unwrap(api.POST(TWO_FA, { body: { action: 'passkey_options' } }));
        if (!('options' in asked)) throw new Error('The server did not answer the passkey options.');
        const passkey = await getPasskey(asked.options);
        return unwrap(api.POST(TWO_FA, { body: { passkey } }));
      }
      return unwrap(api.POST(TWO_FA, { body: method === 'totp' ? { code } : { recovery_code: recovery.trim() } }));
    },
    onSuccess: async () => {
      await sessionChanged();
      navigate(nextPath(location.search), { replace: true });
    },
  });
  const cancel = useMutation({
    mutationFn: () => unwrap(api.POST('/api/v1/client/auth/logout/', {})),
    onSettled: sessionChanged,
  });

  // The field (or the passkey button) takes the focus when the step opens and when the method changes.
  useEffect(() => {
    if (method === 'passkey') passkeyButton.current?.focus();
    else field.current?.focus();
  }, [method]);
  // A refused code is selected, so the next one typed replaces it.
  useEffect(() => {
    if (complete.error) field.current?.select();
  }, [complete.error]);

  const switchTo = (next: SecondFactorMethod) => {
    setMethod(next);
    setLocal(undefined);
    complete.reset();
  };
  const submit = (event: FormEvent) => {
    event.preventDefault();
    if (method === 'totp' && !/^\d{6}$/.test(code)) {
      setLocal('Enter the 6 digits your app shows.');
      return;
    }
    if (method === 'recovery' && recovery.trim() === '') {
      setLocal('Enter one of your recovery codes.');
      return;
    }
    setLocal(undefined);
    complete.mutate();
  };

  const error = complete.error;
  const browserProblem = passkeyProblem(error);
  const expired = error instanceof ApiError && error.status === 401;
  const locked = error instanceof ApiError && error.code === 'locked_out';

  return (
    <AuthLayout title="Two-factor sign-in">
      <p>One more step: {INTRO[method]}</p>
      <form onSubmit={submit} noValidate>
        {expired ? (
          <Alert kind="error">
            <p>This sign-in has expired: the second step must be finished within 10 minutes. Start again.</p>
          </Alert>
        ) : locked ? (
          <Alert kind="error">
            <p>
              <strong>Too many wrong codes or passwords.</strong> Signing in to this account is paused
              {error.retryAfter ? ` for ${waitWords(error.retryAfter)}` : ' for 15 minutes'}. Nothing else is needed:
              try again after that.
            </p>
          </Alert>
        ) : browserProblem ? (
          <Alert kind={passkeyCancelled(error) ? 'warning' : 'error'}>
            <p>{browserProblem}</p>
          </Alert>
        ) : (
          <ErrorAlert error={error} fields={['code', 'recovery_code', 'passkey']} />
        )}
        {method === 'passkey' ? null : method === 'totp' ? (
          <TextField
            ref={field}
            label="Authentication code"
            name="code"
            inputMode="numeric"
            autoComplete="one-time-code"
            pattern="[0-9]{6}"
            maxLength={6}
            required
            value={code}
            onChange={(e) => setCode(e.target.value.replace(/\D/g, '').slice(0, 6))}
            error={local ?? fieldError(error, 'code')}
            hint="A new code appears every 30 seconds; each works once."
          />
        ) : (
          <TextField
            ref={field}
            label="Recovery code"
            name="recovery_code"
            autoComplete="off"
            autoCapitalize="none"
            spellCheck={false}
            maxLength={64}
            required
            value={recovery}
            onChange={(e) => setRecovery(e.target.value)}
            error={local ?? fieldError(error, 'recovery_code')}
            hint="It looks like abcde-23456. Each recovery code works once."
          />
        )}
        {expired ? (
          <Button onClick={() => sessionChanged()}>Start again</Button>
        ) : method === 'passkey' ? (
          <Button ref={passkeyButton} type="submit" busy={complete.isPending}>
            Use a passkey
          </Button>
        ) : (
          <Button type="submit" busy={complete.isPending}>
            Verify and sign in
          </Button>
        )}
      </form>
      <div className="auth-links twofa-links">
        {(['passkey', 'totp', 'recovery'] as const)
          .filter(
            (other) => other !== method && methods.includes(other) && (other !== 'passkey' || passkeysSupported()),
          )
          .map((other) => (
            <Button key={other} variant="ghost" onClick={() => switchTo(other)}>
              {SWITCH_LABELS[other]}
            </Button>
          ))}
        <Button variant="ghost" busy={cancel.isPending} onClick={() => cancel.mutate()}>
          Cancel and sign out
        </Button>
      </div>
      <p className="hint">
        Lost your phone and your recovery codes? Contact support from the address you signed up with: after checking it
        is you, they can turn two-factor sign-in off.
      </p>
    </AuthLayout>
  );
}

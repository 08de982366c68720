// Account → Security (CONTRACT §11): passkeys (PasskeysCard) and two-factor sign-in (off: turn it
// on; on: the recovery codes left, new recovery codes, turn it off). Turning it off needs the password and a code (or a
// recovery code); new recovery codes need a code. Codes are shown once (RecoveryCodes).

import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { type FormEvent, type Ref, useEffect, useRef, useState } from 'react';
import { useTitle } from '../../components/Layout.tsx';
import {
  Alert,
  Button,
  ErrorAlert,
  fieldError,
  Loading,
  PageHeader,
  TextField,
  waitWords,
} from '../../components/ui.tsx';
import { ApiError, api, unwrap } from '../../lib/api.ts';
import { useAccount } from '../../lib/session.tsx';
import { AccountTabs } from './AccountPage.tsx';
import { PasskeysCard } from './PasskeysCard.tsx';
import { RecoveryCodes } from './RecoveryCodes.tsx';
import { TwoFactorSetup } from './TwoFactorSetup.tsx';
import '../dashboard/pages.css';
import './security.css';

const SECURITY = '/api/v1/client/account/security/';
export const SECURITY_KEY = ['security'] as const;
const RECOVERY_CODE_COUNT = 10;

export function useSecurity() {
  return useQuery({ queryKey: SECURITY_KEY, queryFn: () => unwrap(api.GET(SECURITY)) });
}

export default function SecurityPage() {
  useTitle('Security');
  const security = useSecurity();
  const account = useAccount();
  return (
    <div className="acct">
      <PageHeader title="Account" />
      <AccountTabs />
      <p className="acct-intro">
        Sign in with a passkey instead of a password, and protect your account with a second step at sign-in, so a
        stolen password alone is not enough.
      </p>
      {security.isPending || !account.data ? <Loading what="Loading your security settings" /> : null}
      {security.isError ? <ErrorAlert error={security.error} /> : null}
      {security.data && account.data ? (
        <TwoFactorCard
          totp={security.data.two_factor.totp}
          left={security.data.two_factor.recovery_codes_left}
          email={account.data.email}
        />
      ) : null}
      {security.data && account.data ? (
        <PasskeysCard passkeys={security.data.passkeys} securityKey={SECURITY_KEY} />
      ) : null}
    </div>
  );
}

type Stage = 'idle' | 'setup' | 'disable' | 'regenerate' | { codes: string[]; heading: string };

function TwoFactorCard({ totp, left, email }: { totp: boolean; left: number; email: string }) {
  const client = useQueryClient();
  const [stage, setStage] = useState<Stage>('idle');
  const heading = useRef<HTMLHeadingElement>(null);
  const opened = useRef(false);
  // Back from a form or the codes: the focus goes to the card's heading, not to the page's top.
  useEffect(() => {
    if (stage !== 'idle') opened.current = true;
    else if (opened.current) heading.current?.focus();
  }, [stage]);
  const refresh = () => client.invalidateQueries({ queryKey: SECURITY_KEY });
  const showCodes = (codes: string[], heading: string) => {
    setStage({ codes, heading });
    void refresh();
  };

  return (
    <section className="card sec-card" aria-labelledby="sec-2fa">
      <div className="card-head">
        <h2 id="sec-2fa" ref={heading} tabIndex={-1}>
          Two-factor sign-in
        </h2>
        {totp ? <span className="status status-good">on</span> : <span className="status status-off">off</span>}
      </div>
      {typeof stage === 'object' ? (
        <RecoveryCodes codes={stage.codes} email={email} heading={stage.heading} onDone={() => setStage('idle')} />
      ) : stage === 'setup' && !totp ? (
        <TwoFactorSetup
          email={email}
          onEnabled={(codes) => showCodes(codes, 'Two-factor sign-in is on. Save your recovery codes')}
          onCancel={() => setStage('idle')}
        />
      ) : totp ? (
        <>
          <p>
            Signing in asks for a code from your authenticator app after your password (or e-mailed code). If you lose
            the phone, a recovery code works instead.
          </p>
          <CodesLeft left={left} />
          {stage === 'regenerate' ? (
            <RegenerateForm
              onDone={(codes) => showCodes(codes, 'Your new recovery codes')}
              onCancel={() => setStage('idle')}
            />
          ) : stage === 'disable' ? (
            <DisableForm
              onDone={() => {
                setStage('idle');
                void refresh();
              }}
              onCancel={() => setStage('idle')}
            />
          ) : (
            <div className="row">
              <Button variant="secondary" onClick={() => setStage('regenerate')}>
                New recovery codes
              </Button>
              <Button variant="danger" onClick={() => setStage('disable')}>
                Turn off two-factor sign-in
              </Button>
            </div>
          )}
        </>
      ) : (
        <>
          <p>
            With two-factor sign-in on, signing in asks for a 6-digit code from an authenticator app on your phone as
            well as your password. You get 10 recovery codes for when the phone is lost.
          </p>
          <div className="row">
            <Button onClick={() => setStage('setup')}>Turn on two-factor sign-in</Button>
          </div>
        </>
      )}
    </section>
  );
}

function CodesLeft({ left }: { left: number }) {
  return (
    <>
      <p>
        <strong>Recovery codes:</strong> {left} of {RECOVERY_CODE_COUNT} left.
      </p>
      {left === 0 ? (
        <Alert kind="error">
          <p>You have no recovery codes left. Make new ones now, or a lost phone locks you out.</p>
        </Alert>
      ) : left <= 3 ? (
        <Alert kind="warning">
          <p>Only {left} recovery codes are left. Make new ones so you are not locked out if you lose your phone.</p>
        </Alert>
      ) : null}
    </>
  );
}

/** The lockout, in words, when the server answered 429 locked_out. */
function lockedMessage(error: unknown): string | null {
  if (!(error instanceof ApiError) || error.code !== 'locked_out') return null;
  return `Too many wrong codes or passwords: the account is locked for ${
    error.retryAfter ? waitWords(error.retryAfter) : '15 minutes'
  }, for signing in too.`;
}

/** A code of the app, or (when `allowRecovery`) a recovery code instead, with a switch between them. */
function SecondFactorFields({
  allowRecovery,
  code,
  setCode,
  recovery,
  setRecovery,
  useRecovery,
  setUseRecovery,
  error,
  fieldRef,
}: {
  fieldRef?: Ref<HTMLInputElement>;
  allowRecovery: boolean;
  code: string;
  setCode: (v: string) => void;
  recovery: string;
  setRecovery: (v: string) => void;
  useRecovery: boolean;
  setUseRecovery: (v: boolean) => void;
  error: unknown;
}) {
  return (
    <>
      {useRecovery ? (
        <TextField
          ref={fieldRef}
          label="Recovery code"
          name="recovery_code"
          autoComplete="off"
          autoCapitalize="none"
          spellCheck={false}
          maxLength={64}
          required
          value={recovery}
          onChange={(e) => setRecovery(e.target.value)}
          error={fieldError(error, 'recovery_code')}
          hint="One of the recovery codes you saved, like abcde-23456."
        />
      ) : (
        <TextField
          ref={fieldRef}
          label="Authentication code"
          name="code"
          inputMode="numeric"
          autoComplete="one-time-code"
          pattern="[0-9]{6}"
          maxLength={6}
          required
          value={code}
          onChange={(e) => setCode(e.target.value.replace(/\D/g, '').slice(0, 6))}
          error={fieldError(error, 'code')}
          hint="The 6 digits your authenticator app shows now."
        />
      )}
      {allowRecovery ? (
        <div>
          <Button variant="ghost" className="sec-switch" onClick={() => setUseRecovery(!useRecovery)}>
            {useRecovery ? 'Use your authenticator app instead' : 'Use a recovery code instead'}
          </Button>
        </div>
      ) : null}
    </>
  );
}

function DisableForm({ onDone, onCancel }: { onDone: () => void; onCancel: () => void }) {
  const [password, setPassword] = useState('');
  const [code, setCode] = useState('');
  const [recovery, setRecovery] = useState('');
  const [useRecovery, setUseRecovery] = useState(false);
  const first = useRef<HTMLInputElement>(null);
  useEffect(() => first.current?.focus(), []);
  const disable = useMutation({
    mutationFn: () =>
      unwrap(
        api.POST(SECURITY, {
          body: useRecovery
            ? { action: 'totp_disable', password, recovery_code: recovery.trim() }
            : { action: 'totp_disable', password, code },
        }),
      ),
    onSuccess: onDone,
  });
  const submit = (event: FormEvent) => {
    event.preventDefault();
    disable.mutate();
  };
  const locked = lockedMessage(disable.error);
  return (
    <form onSubmit={submit} noValidate className="confirm sec-form" aria-labelledby="sec-disable-title">
      <h3 id="sec-disable-title">Turn off two-factor sign-in</h3>
      <p>
        After this, your password alone signs you in, and your recovery codes stop working. Confirm with your password
        and a code.
      </p>
      <TextField
        ref={first}
        label="Password"
        name="password"
        type="password"
        autoComplete="current-password"
        required
        value={password}
        onChange={(e) => setPassword(e.target.value)}
        error={fieldError(disable.error, 'password')}
      />
      <SecondFactorFields
        allowRecovery
        code={code}
        setCode={setCode}
        recovery={recovery}
        setRecovery={setRecovery}
        useRecovery={useRecovery}
        setUseRecovery={(v) => {
          setUseRecovery(v);
          disable.reset();
        }}
        error={disable.error}
      />
      {locked ? (
        <Alert kind="error">
          <p>{locked}</p>
        </Alert>
      ) : (
        <ErrorAlert error={disable.error} fields={['password', 'code', 'recovery_code']} />
      )}
      <div className="row">
        <Button type="submit" variant="danger" busy={disable.isPending}>
          Turn off two-factor sign-in
        </Button>
        <Button variant="secondary" onClick={onCancel}>
          Cancel
        </Button>
      </div>
    </form>
  );
}

function RegenerateForm({ onDone, onCancel }: { onDone: (codes: string[]) => void; onCancel: () => void }) {
  const [code, setCode] = useState('');
  const first = useRef<HTMLInputElement>(null);
  useEffect(() => first.current?.focus(), []);
  const regenerate = useMutation({
    mutationFn: async () => {
      const data = await unwrap(api.POST(SECURITY, { body: { action: 'recovery_regenerate', code } }));
      if (!('recovery_codes' in data)) throw new Error('The server did not answer the recovery codes.');
      return data.recovery_codes;
    },
    onSuccess: onDone,
  });
  const submit = (event: FormEvent) => {
    event.preventDefault();
    regenerate.mutate();
  };
  const locked = lockedMessage(regenerate.error);
  return (
    <form onSubmit={submit} noValidate className="sec-box sec-form" aria-labelledby="sec-regen-title">
      <h3 id="sec-regen-title">Make new recovery codes</h3>
      <p>You get 10 new codes, and every code you have now stops working. Confirm with a code from your app.</p>
      <SecondFactorFields
        fieldRef={first}
        allowRecovery={false}
        code={code}
        setCode={setCode}
        recovery=""
        setRecovery={() => {}}
        useRecovery={false}
        setUseRecovery={() => {}}
        error={regenerate.error}
      />
      {locked ? (
        <Alert kind="error">
          <p>{locked}</p>
        </Alert>
      ) : (
        <ErrorAlert error={regenerate.error} fields={['code']} />
      )}
      <div className="row">
        <Button type="submit" busy={regenerate.isPending}>
          Make new recovery codes
        </Button>
        <Button variant="secondary" onClick={onCancel}>
          Cancel
        </Button>
      </div>
    </form>
  );
}

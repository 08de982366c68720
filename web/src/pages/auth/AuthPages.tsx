// Signing up, in (password or a mailed one-time code), out, verifying the e-mail address and
// resetting a forgotten password. The links in mail open /verify?token=… and /reset?token=…:
// the token is read once, taken out of the address bar, and posted to the session API.

import { useMutation } from '@tanstack/react-query';
import { type FormEvent, useEffect, useRef, useState } from 'react';
import { Link, useLocation, useNavigate } from 'react-router';
import { AuthLayout } from '../../components/Layout.tsx';
import { Alert, Button, Checkbox, ErrorAlert, fieldError, TextField } from '../../components/ui.tsx';
import { ApiError, api, unwrap } from '../../lib/api.ts';
import {
  nextPath,
  type SecondFactorMethod,
  useAccount,
  useSecondStepStarted,
  useSessionChanged,
  useSessionState,
} from '../../lib/session.tsx';
import { PasskeySignIn } from './PasskeySignIn.tsx';
import { TwoFactorStep } from './TwoFactorStep.tsx';

function useRedirectWhenSignedIn() {
  const account = useAccount();
  const navigate = useNavigate();
  const location = useLocation();
  useEffect(() => {
    if (account.data) navigate(nextPath(location.search), { replace: true });
  }, [account.data, navigate, location.search]);
  return account;
}

export function LoginPage() {
  useRedirectWhenSignedIn();
  const session = useSessionState();
  const secondStep = session.data?.secondStep;
  if (secondStep) return <TwoFactorStep methods={secondStep.methods} />;
  return <FirstStep />;
}

function FirstStep() {
  const [mode, setMode] = useState<'password' | 'code'>('password');
  const [identifier, setIdentifier] = useState('');
  const [password, setPassword] = useState('');
  const [code, setCode] = useState('');
  const [remember, setRemember] = useState(false);
  const [codeSent, setCodeSent] = useState(false);
  const sessionChanged = useSessionChanged();
  const secondStepStarted = useSecondStepStarted();
  const navigate = useNavigate();
  const location = useLocation();

  // A sign-in answers the account, or (two-factor sign-in on) a half session and its methods.
  const done = async (answer: object) => {
    if ('two_factor_required' in answer) {
      secondStepStarted('methods' in answer ? (answer.methods as SecondFactorMethod[]) : ['totp', 'recovery']);
      return;
    }
    await sessionChanged();
    navigate(nextPath(location.search), { replace: true });
  };
  const login = useMutation({
    mutationFn: () => unwrap(api.POST('/api/v1/client/auth/login/', { body: { identifier, password, remember } })),
    onSuccess: done,
  });
  const requestCode = useMutation({
    mutationFn: () => unwrap(api.POST('/api/v1/client/auth/otp-login/', { body: { action: 'request', identifier } })),
    onSuccess: () => setCodeSent(true),
  });
  const verifyCode = useMutation({
    mutationFn: () =>
      unwrap(api.POST('/api/v1/client/auth/otp-login/', { body: { action: 'verify', identifier, code, remember } })),
    onSuccess: done,
  });

  const submit = (event: FormEvent) => {
    event.preventDefault();
    if (mode === 'password') login.mutate();
    else if (!codeSent) requestCode.mutate();
    else verifyCode.mutate();
  };
  const error = login.error ?? requestCode.error ?? verifyCode.error;
  const unverified = error instanceof ApiError && error.code === 'email_unverified';

  return (
    <AuthLayout title="Sign in">
      <fieldset className="tabs">
        <legend className="sr-only">How to sign in</legend>
        <button type="button" aria-pressed={mode === 'password'} onClick={() => setMode('password')}>
          Password
        </button>
        <button
          type="button"
          aria-pressed={mode === 'code'}
          onClick={() => {
            setMode('code');
            setCodeSent(false);
          }}
        >
          E-mailed code
        </button>
      </fieldset>
      <form onSubmit={submit} noValidate>
        <ErrorAlert error={error} fields={['identifier', 'password', 'code']} />
        {unverified ? (
          <Alert kind="warning">Open the link in the mail we sent when you signed up, then sign in.</Alert>
        ) : null}
        <TextField
          label="Email or username"
          name="identifier"
          autoComplete="username"
          required
          value={identifier}
          onChange={(e) => setIdentifier(e.target.value)}
          error={fieldError(error, 'identifier')}
        />
        {mode === 'password' ? (
          <TextField
            label="Password"
            name="password"
            type="password"
            autoComplete="current-password"
            required
            value={password}
            onChange={(e) => setPassword(e.target.value)}
            error={fieldError(error, 'password')}
          />
        ) : codeSent ? (
          <>
            <Alert kind="success">If that account exists, a 6-digit code is on its way. It works for 10 minutes.</Alert>
            <TextField
              label="Code"
              name="code"
              inputMode="numeric"
              autoComplete="one-time-code"
              pattern="[0-9]{6}"
              maxLength={6}
              required
              value={code}
              onChange={(e) => setCode(e.target.value.replace(/\D/g, ''))}
              error={fieldError(error, 'code')}
            />
          </>
        ) : null}
        <Checkbox
          label="Keep me signed in for 30 days"
          checked={remember}
          onChange={(e) => setRemember(e.target.checked)}
        />
        <Button type="submit" busy={login.isPending || requestCode.isPending || verifyCode.isPending}>
          {mode === 'password' ? 'Sign in' : codeSent ? 'Sign in with the code' : 'E-mail me a code'}
        </Button>
      </form>
      <PasskeySignIn remember={remember} onSignedIn={() => done({})} />
      <p className="auth-links">
        <Link to="/forgot">Forgot your password?</Link> · <Link to="/register">Create an account</Link>
      </p>
    </AuthLayout>
  );
}

export function RegisterPage() {
  useRedirectWhenSignedIn();
  const [form, setForm] = useState({ name: '', email: '', username: '', password: '' });
  const register = useMutation({
    mutationFn: () => unwrap(api.POST('/api/v1/client/auth/register/', { body: form })),
  });
  const set = (key: keyof typeof form) => (e: { target: { value: string } }) =>
    setForm((f) => ({ ...f, [key]: e.target.value }));

  if (register.isSuccess) {
    return (
      <AuthLayout title="Check your e-mail">
        <Alert kind="success">
          We sent a link to <strong>{form.email}</strong>. Open it to confirm your address, then sign in.
        </Alert>
        <p>
          <Link to="/login">Go to sign in</Link>
        </p>
      </AuthLayout>
    );
  }
  return (
    <AuthLayout title="Create your account">
      <form
        onSubmit={(e) => {
          e.preventDefault();
          register.mutate();
        }}
        noValidate
      >
        <ErrorAlert error={register.error} fields={['name', 'email', 'username', 'password']} />
        <TextField
          label="Name"
          name="name"
          autoComplete="name"
          required
          value={form.name}
          onChange={set('name')}
          error={fieldError(register.error, 'name')}
        />
        <TextField
          label="Email"
          name="email"
          type="email"
          autoComplete="email"
          required
          value={form.email}
          onChange={set('email')}
          error={fieldError(register.error, 'email')}
        />
        <TextField
          label="Username"
          name="username"
          autoComplete="username"
          required
          value={form.username}
          onChange={set('username')}
          error={fieldError(register.error, 'username')}
          hint="3–32 letters, digits, dots, dashes or underscores."
        />
        <TextField
          label="Password"
          name="password"
          type="password"
          autoComplete="new-password"
          required
          value={form.password}
          onChange={set('password')}
          error={fieldError(register.error, 'password')}
          hint="At least 8 characters, with a letter and a number."
        />
        <Button type="submit" busy={register.isPending}>
          Create account
        </Button>
      </form>
      <p className="auth-links">
        Already have one? <Link to="/login">Sign in</Link>
      </p>
    </AuthLayout>
  );
}

/** The token of a mail link, read once and removed from the address bar (and history). */
function useLinkToken(): string {
  const [token] = useState(() => new URLSearchParams(window.location.search).get('token') ?? '');
  useEffect(() => {
    if (window.location.search) window.history.replaceState(null, '', window.location.pathname);
  }, []);
  return token;
}

export function VerifyPage() {
  const token = useLinkToken();
  const sent = useRef(false);
  const verify = useMutation({
    mutationFn: () => unwrap(api.POST('/api/v1/client/auth/verify/', { body: { token } })),
  });
  const account = useAccount();
  useEffect(() => {
    // Once the anonymous session (and its CSRF token) exists.
    if (!sent.current && token && account.isFetched) {
      sent.current = true;
      verify.mutate();
    }
  }, [token, account.isFetched, verify]);
  return (
    <AuthLayout title="Verify your e-mail address">
      {!token ? <Alert kind="error">This link has no token. Open the link from the e-mail again.</Alert> : null}
      {verify.isPending || (token && verify.isIdle) ? <p role="status">Checking your link…</p> : null}
      <ErrorAlert error={verify.error} />
      {verify.isSuccess ? <Alert kind="success">{verify.data.message}</Alert> : null}
      <p className="auth-links">
        <Link to="/login">Sign in</Link>
      </p>
    </AuthLayout>
  );
}

export function ForgotPage() {
  const [identifier, setIdentifier] = useState('');
  useAccount();
  const forgot = useMutation({
    mutationFn: () => unwrap(api.POST('/api/v1/client/auth/forgot/', { body: { identifier } })),
  });
  return (
    <AuthLayout title="Reset your password">
      {forgot.isSuccess ? (
        <Alert kind="success">
          If an account has that address or username, a reset link is on its way. It works for one hour.
        </Alert>
      ) : (
        <form
          onSubmit={(e) => {
            e.preventDefault();
            forgot.mutate();
          }}
          noValidate
        >
          <ErrorAlert error={forgot.error} fields={['identifier']} />
          <TextField
            label="Email or username"
            name="identifier"
            autoComplete="username"
            required
            value={identifier}
            onChange={(e) => setIdentifier(e.target.value)}
            error={fieldError(forgot.error, 'identifier')}
          />
          <Button type="submit" busy={forgot.isPending}>
            E-mail me a reset link
          </Button>
        </form>
      )}
      <p className="auth-links">
        <Link to="/login">Back to sign in</Link>
      </p>
    </AuthLayout>
  );
}

export function ResetPage() {
  const token = useLinkToken();
  const [password, setPassword] = useState('');
  useAccount();
  const reset = useMutation({
    mutationFn: () => unwrap(api.POST('/api/v1/client/auth/reset/', { body: { token, password } })),
  });
  return (
    <AuthLayout title="Choose a new password">
      {!token ? <Alert kind="error">This link has no token. Open the link from the e-mail again.</Alert> : null}
      {reset.isSuccess ? (
        <>
          <Alert kind="success">{reset.data.message}</Alert>
          <p>
            <Link to="/login">Sign in with your new password</Link>
          </p>
        </>
      ) : (
        <form
          onSubmit={(e) => {
            e.preventDefault();
            reset.mutate();
          }}
          noValidate
        >
          <ErrorAlert error={reset.error} fields={['password']} />
          <TextField
            label="New password"
            name="password"
            type="password"
            autoComplete="new-password"
            required
            value={password}
            onChange={(e) => setPassword(e.target.value)}
            error={fieldError(reset.error, 'password')}
            hint="At least 8 characters, with a letter and a number. Every other session of the account is signed out."
          />
          <Button type="submit" busy={reset.isPending} disabled={!token}>
            Set password
          </Button>
        </form>
      )}
    </AuthLayout>
  );
}

export function NotFoundPage() {
  return (
    <div className="page narrow">
      <h1>Page not found</h1>
      <p>There is nothing at this address. It may have moved, or the link may be mistyped.</p>
      <p>
        <Link to="/">Go to your dashboard</Link>
      </p>
    </div>
  );
}

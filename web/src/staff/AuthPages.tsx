// The signed-out side of the console: accepting an invitation (choose a password), sign-in, and
// the mandatory second factor — enrolling an authenticator app the first time (its key as text
// and as a QR code), its code on every later sign-in.

import { useMutation } from '@tanstack/react-query';
import { type FormEvent, type ReactNode, useEffect, useRef, useState } from 'react';
import { Link, Navigate, useNavigate, useSearchParams } from 'react-router';
import { Alert, Button, CopyButton, ErrorAlert, fieldError, Loading, TextField } from '../components/ui.tsx';
import { call, staffApi } from './api.ts';
import { useMe, useMeChanged } from './session.tsx';

export function useStaffTitle(title: string): void {
  useEffect(() => {
    document.title = `${title} · Hostplane staff`;
  }, [title]);
}

export function StaffAuthLayout({ title, children }: { title: string; children: ReactNode }) {
  useStaffTitle(title);
  return (
    <div className="auth-shell">
      <main id="main" className="auth-card">
        <Link to="/staff/login" className="brand">
          <img src="/favicon.svg" alt="" width="32" height="32" />
          <span>Hostplane staff</span>
        </Link>
        <h1>{title}</h1>
        {children}
      </main>
    </div>
  );
}

/** The server's rule (docs/STAFF.md): 12+ characters, a letter and a digit. */
function passwordProblem(password: string): string | undefined {
  if (password.length < 12) return 'Use at least 12 characters.';
  if (!/[A-Za-z]/.test(password) || !/\d/.test(password)) return 'Use at least one letter and one digit.';
  return undefined;
}

export function InvitePage() {
  const [params] = useSearchParams();
  const token = params.get('token') ?? '';
  const [password, setPassword] = useState('');
  const [again, setAgain] = useState('');
  const [local, setLocal] = useState<{ password?: string; again?: string }>({});
  const accept = useMutation({
    mutationFn: () => call(staffApi.POST('/api/v1/staff/auth/invite', { body: { token, password } })),
  });
  const submit = (event: FormEvent) => {
    event.preventDefault();
    const problems = {
      password: passwordProblem(password),
      again: password === again ? undefined : 'The two passwords differ.',
    };
    setLocal(problems);
    if (!problems.password && !problems.again) accept.mutate();
  };
  if (token === '') {
    return (
      <StaffAuthLayout title="Invitation">
        <Alert kind="error">This link has no invitation token. Ask an admin for a new invitation.</Alert>
      </StaffAuthLayout>
    );
  }
  if (accept.isSuccess) {
    return (
      <StaffAuthLayout title="Password set">
        <Alert kind="success">
          Your password is set, {accept.data.staff.name}. Sign in to enrol your authenticator app.
        </Alert>
        <p>
          <Link className="btn btn-primary" to={`/staff/login?email=${encodeURIComponent(accept.data.staff.email)}`}>
            Sign in
          </Link>
        </p>
      </StaffAuthLayout>
    );
  }
  return (
    <StaffAuthLayout title="Choose your password">
      <p className="muted">You were invited to the Hostplane staff console. The link works once, within 72 hours.</p>
      <form onSubmit={submit} noValidate>
        <ErrorAlert error={accept.error} fields={['password']} />
        <TextField
          label="New password"
          type="password"
          autoComplete="new-password"
          value={password}
          onChange={(e) => setPassword(e.target.value)}
          hint="At least 12 characters, with a letter and a digit."
          error={local.password ?? fieldError(accept.error, 'password')}
          required
        />
        <TextField
          label="Confirm password"
          type="password"
          autoComplete="new-password"
          value={again}
          onChange={(e) => setAgain(e.target.value)}
          error={local.again}
          required
        />
        <Button type="submit" busy={accept.isPending}>
          Set password
        </Button>
      </form>
    </StaffAuthLayout>
  );
}

export function LoginPage() {
  const [params] = useSearchParams();
  const navigate = useNavigate();
  const meChanged = useMeChanged();
  const [email, setEmail] = useState(params.get('email') ?? '');
  const [password, setPassword] = useState('');
  const login = useMutation({
    mutationFn: () => call(staffApi.POST('/api/v1/staff/auth/login', { body: { email, password } })),
    onSuccess: async () => {
      await meChanged();
      const next = params.get('next');
      navigate(`/staff/second-factor${next ? `?next=${encodeURIComponent(next)}` : ''}`);
    },
  });
  return (
    <StaffAuthLayout title="Staff sign-in">
      <form
        onSubmit={(event) => {
          event.preventDefault();
          login.mutate();
        }}
      >
        <ErrorAlert error={login.error} fields={['email', 'password']} />
        <TextField
          label="Email"
          type="email"
          autoComplete="username"
          value={email}
          onChange={(e) => setEmail(e.target.value)}
          error={fieldError(login.error, 'email')}
          required
        />
        <TextField
          label="Password"
          type="password"
          autoComplete="current-password"
          value={password}
          onChange={(e) => setPassword(e.target.value)}
          error={fieldError(login.error, 'password')}
          required
        />
        <Button type="submit" busy={login.isPending}>
          Sign in
        </Button>
      </form>
    </StaffAuthLayout>
  );
}

/** An otpauth:// URI drawn as a QR code (the qrcode package, loaded when needed). */
function OtpQr({ uri }: { uri: string }) {
  const [image, setImage] = useState<string | null>(null);
  useEffect(() => {
    let live = true;
    import('qrcode')
      .then((QRCode) => QRCode.toDataURL(uri, { errorCorrectionLevel: 'M', margin: 2, width: 220 }))
      .then((url) => {
        if (live) setImage(url);
      })
      .catch(() => undefined);
    return () => {
      live = false;
    };
  }, [uri]);
  return image ? (
    <img className="staff-qr" src={image} alt="QR code of the authenticator key" width={220} height={220} />
  ) : (
    <p className="muted">Drawing the QR code…</p>
  );
}

function CodeForm({ label, onDone, next }: { label: string; onDone: () => Promise<void>; next: string }) {
  const [code, setCode] = useState('');
  const [local, setLocal] = useState<string | undefined>();
  const navigate = useNavigate();
  const field = useRef<HTMLInputElement>(null);
  const verify = useMutation({
    mutationFn: () => call(staffApi.POST('/api/v1/staff/auth/totp', { body: { action: 'verify', code } })),
    onSuccess: async () => {
      await onDone();
      navigate(next);
    },
  });
  return (
    <form
      onSubmit={(event) => {
        event.preventDefault();
        if (!/^\d{6}$/.test(code)) {
          setLocal('Enter the 6 digits the app shows.');
          field.current?.focus();
          return;
        }
        setLocal(undefined);
        verify.mutate();
      }}
      noValidate
    >
      <ErrorAlert error={verify.error} fields={['code']} />
      <TextField
        ref={field}
        label={label}
        inputMode="numeric"
        autoComplete="one-time-code"
        maxLength={6}
        value={code}
        onChange={(e) => setCode(e.target.value.replace(/\D/g, ''))}
        error={local ?? fieldError(verify.error, 'code')}
        autoFocus
        required
      />
      <Button type="submit" busy={verify.isPending}>
        Verify
      </Button>
    </form>
  );
}

function Enrol({ next, onDone }: { next: string; onDone: () => Promise<void> }) {
  const begun = useRef(false);
  const begin = useMutation({
    mutationFn: async () => {
      const data = await call(staffApi.POST('/api/v1/staff/auth/totp', { body: { action: 'enrol' } }));
      if (!('secret' in data)) throw new Error('The server did not answer a new secret.');
      return data;
    },
  });
  // One secret per visit (StrictMode runs effects twice in development).
  // biome-ignore lint/correctness/useExhaustiveDependencies: once, when the page opens
  useEffect(() => {
    if (begun.current) return;
    begun.current = true;
    begin.mutate();
  }, []);
  if (begin.isError) return <ErrorAlert error={begin.error} />;
  if (!begin.data) return <Loading what="Making a new key" />;
  const key = begin.data.secret.replace(/(.{4})(?=.)/g, '$1 ');
  return (
    <>
      <p>The console needs a second factor. Scan this code with an authenticator app, or type its key.</p>
      <div className="staff-enrol">
        <OtpQr uri={begin.data.otpauth_url} />
        <div>
          <p>
            Key: <code className="secret mono">{key}</code>
          </p>
          <CopyButton text={begin.data.secret} label="Copy key" />
          <details>
            <summary>The otpauth URI</summary>
            <code className="secret mono staff-uri">{begin.data.otpauth_url}</code>
          </details>
        </div>
      </div>
      <CodeForm label="Code from the app" next={next} onDone={onDone} />
    </>
  );
}

export function SecondFactorPage() {
  const me = useMe();
  const meChanged = useMeChanged();
  const [params] = useSearchParams();
  const next = params.get('next')?.startsWith('/staff') ? (params.get('next') as string) : '/staff';
  if (me.isPending) return <Loading what="Checking your session" />;
  if (!me.data) return <Navigate to="/staff/login" replace />;
  if (me.data.stage === 'full') return <Navigate to={next} replace />;
  return me.data.stage === 'enrol' ? (
    <StaffAuthLayout title="Enrol an authenticator app">
      <Enrol next={next} onDone={meChanged} />
    </StaffAuthLayout>
  ) : (
    <StaffAuthLayout title="Enter your code">
      <p>Open your authenticator app and enter the code it shows for Hostplane staff.</p>
      <CodeForm label="Code from the app" next={next} onDone={meChanged} />
    </StaffAuthLayout>
  );
}

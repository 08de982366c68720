// Turning two-factor sign-in on (CONTRACT §11): totp_begin gives a new secret, its QR code and
// otpauth URL; the customer scans the code (or types the key) into an authenticator app and
// confirms with a code it shows (totp_enable), which answers the 10 recovery codes, shown once.
// The QR code is the server's SVG document shown as an <img> of a data: URL: the panel's CSP
// (img-src 'self' data: blob:) allows it, and an image runs no script and takes no page style.

import { useMutation } from '@tanstack/react-query';
import { type FormEvent, useEffect, useRef, useState } from 'react';
import { Button, CopyButton, ErrorAlert, fieldError, Loading, TextField } from '../../components/ui.tsx';
import { api, unwrap } from '../../lib/api.ts';

const SECURITY = '/api/v1/client/account/security/';

/** An SVG document as a data: URL (base64 of its UTF-8 bytes). */
function svgDataUrl(svg: string): string {
  const bytes = new TextEncoder().encode(svg);
  let binary = '';
  for (const byte of bytes) binary += String.fromCharCode(byte);
  return `data:image/svg+xml;base64,${btoa(binary)}`;
}

/** "JBSWY3DPEHPK3PXP" → "JBSW Y3DP EHPK 3PXP": easier to type from. */
function grouped(secret: string): string {
  return secret.replace(/(.{4})(?=.)/g, '$1 ');
}

export function TwoFactorSetup({
  email,
  onEnabled,
  onCancel,
}: {
  email: string;
  onEnabled: (codes: string[]) => void;
  onCancel: () => void;
}) {
  const [code, setCode] = useState('');
  const [local, setLocal] = useState<string | undefined>();
  const begun = useRef(false);
  const firstStep = useRef<HTMLHeadingElement>(null);

  const begin = useMutation({
    mutationFn: async () => {
      const data = await unwrap(api.POST(SECURITY, { body: { action: 'totp_begin' } }));
      if (!('secret' in data)) throw new Error('The server did not answer a new secret.');
      return { secret: data.secret, url: data.otpauth_url, qr: svgDataUrl(data.qr_svg) };
    },
  });
  const enable = useMutation({
    mutationFn: async () => {
      const data = await unwrap(api.POST(SECURITY, { body: { action: 'totp_enable', code } }));
      if (!('recovery_codes' in data)) throw new Error('The server did not answer the recovery codes.');
      return data.recovery_codes;
    },
    onSuccess: onEnabled,
  });

  // One new secret per setup (StrictMode runs effects twice in development).
  // biome-ignore lint/correctness/useExhaustiveDependencies: once, when the setup opens
  useEffect(() => {
    if (begun.current) return;
    begun.current = true;
    begin.mutate();
  }, []);
  // The focus goes to the first step, not to the code field below the QR code: on a phone that
  // would scroll the QR code and the key out of sight.
  useEffect(() => {
    if (begin.isSuccess) firstStep.current?.focus();
  }, [begin.isSuccess]);

  const submit = (event: FormEvent) => {
    event.preventDefault();
    if (!/^\d{6}$/.test(code)) {
      setLocal('Enter the 6 digits the app shows.');
      return;
    }
    setLocal(undefined);
    enable.mutate();
  };

  if (begin.isPending || begin.isIdle) return <Loading what="Making a new secret" />;
  if (begin.isError) {
    return (
      <div className="sec-setup">
        <ErrorAlert error={begin.error} />
        <div className="row">
          <Button onClick={() => begin.mutate()}>Try again</Button>
          <Button variant="secondary" onClick={onCancel}>
            Cancel
          </Button>
        </div>
      </div>
    );
  }
  const { secret, url, qr } = begin.data;
  return (
    <div className="sec-setup">
      <ol className="sec-steps">
        <li>
          <h3 ref={firstStep} tabIndex={-1}>
            Scan this QR code with your authenticator app
          </h3>
          <p className="hint">
            Any authenticator app works: Google Authenticator, Microsoft Authenticator, 1Password, Bitwarden, Authy, …
          </p>
          <div className="sec-qr-row">
            <img
              className="sec-qr"
              src={qr}
              width={200}
              height={200}
              alt={`QR code that adds Hostplane (${email}) to an authenticator app`}
            />
            <div className="sec-manual">
              <p>
                On the phone with the app? <a href={url}>Open it in your authenticator app</a>.
              </p>
              <p>Cannot scan it? Choose “enter a setup key” in the app and type this key:</p>
              <p className="secret sec-key">{grouped(secret)}</p>
              <CopyButton text={secret} label="Copy key" />
              <p className="hint">Account: {email}. Type: time-based, 6 digits, every 30 seconds.</p>
            </div>
          </div>
        </li>
        <li>
          <h3>Enter the code the app now shows</h3>
          <form onSubmit={submit} noValidate className="sec-form">
            <TextField
              label="Authentication code"
              name="code"
              inputMode="numeric"
              autoComplete="one-time-code"
              pattern="[0-9]{6}"
              maxLength={6}
              required
              value={code}
              onChange={(e) => setCode(e.target.value.replace(/\D/g, '').slice(0, 6))}
              error={local ?? fieldError(enable.error, 'code')}
              hint="If it is refused, check that the time on your phone is set automatically."
            />
            <ErrorAlert error={enable.error} fields={['code']} />
            <div className="row">
              <Button type="submit" busy={enable.isPending}>
                Turn on two-factor sign-in
              </Button>
              <Button variant="secondary" onClick={onCancel}>
                Cancel
              </Button>
            </div>
          </form>
        </li>
      </ol>
    </div>
  );
}

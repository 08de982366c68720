// The 10 recovery codes, shown once (after two-factor sign-in is turned on, and after new ones are
// made): copy them, download them as a text file, and say they are saved before the panel lets
// them go. Leaving the page before that asks first.

import { useEffect, useRef, useState } from 'react';
import { Alert, Button, Checkbox, CopyButton } from '../../components/ui.tsx';
import { when } from '../../lib/format.ts';

function textFile(codes: string[], email: string, madeAt: string): string {
  return [
    `Hostplane recovery codes for ${email}`,
    `Made ${when(madeAt)}`,
    '',
    'Each code signs you in once when you cannot use your authenticator app.',
    'Keep them somewhere safe, away from your phone. Making new codes ends these.',
    '',
    ...codes,
    '',
  ].join('\r\n');
}

export function RecoveryCodes({
  codes,
  email,
  heading,
  onDone,
}: {
  codes: string[];
  email: string;
  heading: string;
  onDone: () => void;
}) {
  const [saved, setSaved] = useState(false);
  const [madeAt] = useState(() => new Date().toISOString());
  const ref = useRef<HTMLElement>(null);
  useEffect(() => ref.current?.focus(), []);

  // Until the codes are saved, leaving the page asks first: they cannot be shown again.
  useEffect(() => {
    if (saved) return;
    const warn = (event: BeforeUnloadEvent) => event.preventDefault();
    window.addEventListener('beforeunload', warn);
    return () => window.removeEventListener('beforeunload', warn);
  }, [saved]);

  const download = () => {
    const url = URL.createObjectURL(new Blob([textFile(codes, email, madeAt)], { type: 'text/plain;charset=utf-8' }));
    const link = document.createElement('a');
    link.href = url;
    link.download = 'hostplane-recovery-codes.txt';
    document.body.append(link);
    link.click();
    link.remove();
    setTimeout(() => URL.revokeObjectURL(url), 10_000);
  };

  return (
    <section className="sec-codes" ref={ref} tabIndex={-1} aria-labelledby="sec-codes-title">
      <h3 id="sec-codes-title">{heading}</h3>
      <Alert kind="warning">
        <p>
          <strong>Save these recovery codes now: this is the only time they are shown.</strong> If you lose your phone,
          each code signs you in once instead of a code from the app. Keep them in a password manager or on paper, not
          on the phone itself.
        </p>
      </Alert>
      <ol className="sec-code-list" aria-label="Recovery codes">
        {codes.map((code) => (
          <li key={code} className="mono">
            {code}
          </li>
        ))}
      </ol>
      <div className="row">
        <CopyButton text={codes.join('\n')} label="Copy codes" />
        <Button variant="secondary" onClick={download}>
          Download as text
        </Button>
      </div>
      <Checkbox
        label="I have saved these codes somewhere safe"
        checked={saved}
        onChange={(e) => setSaved(e.target.checked)}
      />
      <div className="row">
        <Button onClick={onDone} disabled={!saved}>
          Done
        </Button>
      </div>
    </section>
  );
}

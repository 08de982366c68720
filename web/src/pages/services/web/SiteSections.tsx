// The site's runtime and security: PHP version, HTTPS (the AutoSSL certificate and forcing
// HTTPS once it is valid), and the hosting account's password.

import { type FormEvent, useState } from 'react';
import { Alert, Button, ErrorAlert, fieldError, Loading, SelectField } from '../../../components/ui.tsx';
import { day, when } from '../../../lib/format.ts';
import { Done, FormError, PasswordField, passwordError } from './parts.tsx';
import { type HttpsState, phpLabel, useWeb, useWebMutation } from './webApi.ts';

export function PhpSection({ serviceId, domain }: { serviceId: number; domain: string }) {
  const query = useWeb(serviceId, 'php');
  const [choice, setChoice] = useState<string | null>(null);
  const set = useWebMutation(serviceId, 'php_set', ['php']);
  if (query.isPending) return <Loading what="Loading PHP versions" />;
  if (query.isError) return <ErrorAlert error={query.error} />;
  const { version, installed } = query.data.php;
  const selected = choice ?? version;
  const options = installed.includes(version) || version === 'inherit' ? installed : [version, ...installed];
  function submit(event: FormEvent) {
    event.preventDefault();
    set.mutate({ version: selected }, { onSuccess: () => setChoice(null) });
  }
  return (
    <section className="card web-section" aria-labelledby="web-php">
      <h3 id="web-php">PHP version of {domain}</h3>
      <p>
        Now: <strong>{phpLabel(version)}</strong> <span className="muted mono">({version})</span>
      </p>
      <form onSubmit={submit} className="web-narrow">
        <Done message={set.data?.message} />
        <SelectField
          label="PHP version"
          value={selected}
          onChange={(e) => {
            set.reset();
            setChoice(e.target.value);
          }}
          error={fieldError(set.error, 'version')}
          hint="Check that your site (WordPress, plugins, your own code) supports the version before you switch. You can switch back at any time."
        >
          <option value="inherit">Server default (inherit)</option>
          {options.map((v) => (
            <option key={v} value={v}>
              {phpLabel(v)} ({v})
            </option>
          ))}
        </SelectField>
        <FormError error={set.error} fields={['version']} />
        <div className="row">
          <Button type="submit" busy={set.isPending} disabled={selected === version}>
            Switch PHP version
          </Button>
          {selected === version ? <span className="muted">Choose another version to switch.</span> : null}
        </div>
      </form>
    </section>
  );
}

/** The certificate in words: valid, self-signed while AutoSSL works, or none. */
function certificateState(https: HttpsState): 'none' | 'self-signed' | 'expired' | 'valid' {
  const cert = https.certificate;
  if (!cert) return 'none';
  if (cert.self_signed) return 'self-signed';
  if (new Date(cert.not_after).getTime() < Date.now()) return 'expired';
  return 'valid';
}

function needsWatching(https: HttpsState | undefined): boolean {
  return !!https && (https.autossl_in_progress || !https.certificate || https.certificate.self_signed);
}

export function HttpsSection({ serviceId, domain }: { serviceId: number; domain: string }) {
  const query = useWeb(serviceId, 'https_status', {
    // While AutoSSL is still working, look again every 5 s (it issues within seconds to minutes).
    refetchInterval: (data) => (needsWatching(data?.https) ? 5000 : false),
  });
  const force = useWebMutation(serviceId, 'https_force', ['https_status']);
  const unforce = useWebMutation(serviceId, 'https_unforce', ['https_status']);
  if (query.isPending) return <Loading what="Loading HTTPS status" />;
  if (query.isError) return <ErrorAlert error={query.error} />;
  const https = query.data.https;
  const cert = https.certificate;
  const state = certificateState(https);
  const valid = state === 'valid';
  return (
    <div className="web-section">
      <section className="card" aria-labelledby="web-cert">
        <h3 id="web-cert">Certificate</h3>
        <p className="web-cert-state">
          <span className={`status status-${valid ? 'good' : state === 'expired' ? 'bad' : 'wait'}`}>
            {valid ? 'Valid certificate' : state === 'expired' ? 'Expired' : 'No valid certificate yet'}
          </span>
          {https.autossl_in_progress ? (
            <span className="muted" role="status">
              <span className="spinner" aria-hidden="true" /> AutoSSL is checking the domain…
            </span>
          ) : null}
        </p>
        {!valid ? (
          <p className="muted">
            AutoSSL issues a free certificate for {domain} shortly after the account is created, once the domain points
            at this server (see Overview for the nameservers). This page checks again every few seconds.
          </p>
        ) : null}
        {cert ? (
          <dl className="facts">
            <dt>Issuer</dt>
            <dd>
              {cert.issuer}
              {cert.self_signed ? ' (self-signed: browsers will warn)' : ''}
            </dd>
            <dt>Valid until</dt>
            <dd>
              <time dateTime={cert.not_after} title={when(cert.not_after)}>
                {day(cert.not_after)}
              </time>
            </dd>
            <dt>Covers</dt>
            <dd>
              <ul className="web-plain-list">
                {cert.domains.map((d) => (
                  <li key={d} className="mono">
                    {d}
                  </li>
                ))}
              </ul>
            </dd>
          </dl>
        ) : null}
        {https.problems.length > 0 ? (
          <Alert kind="warning">
            <p>
              <strong>AutoSSL reported problems:</strong>
            </p>
            <ul>
              {https.problems.map((problem) => (
                <li key={problem}>{problem}</li>
              ))}
            </ul>
          </Alert>
        ) : null}
      </section>
      <section className="card" aria-labelledby="web-force">
        <h3 id="web-force">Force HTTPS</h3>
        <p>Redirect every visitor from http:// to https://, so nothing is sent unencrypted.</p>
        <p>
          Now: <span className={`status status-${https.forced ? 'good' : 'off'}`}>{https.forced ? 'on' : 'off'}</span>{' '}
          {https.forced ? 'every visit uses HTTPS.' : 'plain HTTP still works.'}
        </p>
        <Done message={(https.forced ? force.data?.message : unforce.data?.message) ?? null} />
        {https.forced ? (
          <>
            <ErrorAlert error={unforce.error} />
            <div className="row">
              <Button
                variant="secondary"
                busy={unforce.isPending}
                onClick={() => {
                  force.reset();
                  unforce.mutate({});
                }}
              >
                Stop forcing HTTPS
              </Button>
            </div>
          </>
        ) : (
          <>
            {!valid ? (
              <p className="muted" id="web-force-why">
                Available once the domain has a valid certificate.
              </p>
            ) : null}
            <ErrorAlert error={force.error} />
            <div className="row">
              <Button
                busy={force.isPending}
                disabled={!valid}
                aria-describedby={!valid ? 'web-force-why' : undefined}
                onClick={() => {
                  unforce.reset();
                  force.mutate({});
                }}
              >
                Force HTTPS
              </Button>
            </div>
          </>
        )}
      </section>
    </div>
  );
}

export function PasswordSection({ serviceId, username }: { serviceId: number; username: string }) {
  const [password, setPassword] = useState('');
  const [repeat, setRepeat] = useState('');
  const [mismatch, setMismatch] = useState(false);
  const change = useWebMutation(serviceId, 'password_change', []);
  function submit(event: FormEvent) {
    event.preventDefault();
    if (password !== repeat) {
      change.reset();
      setMismatch(true);
      return;
    }
    setMismatch(false);
    change.mutate(
      { password },
      {
        onSuccess: () => {
          setPassword('');
          setRepeat('');
        },
      },
    );
  }
  return (
    <section className="card web-section" aria-labelledby="web-password">
      <h3 id="web-password">Hosting account password</h3>
      <p>
        The password of the cPanel account <strong className="mono">{username}</strong> (cPanel, FTP and its MySQL
        login). Open cPanel signs you in without it.
      </p>
      <Alert kind="info">
        <p>
          Applications that connect to MySQL as <span className="mono">{username}</span> itself (not as a database user)
          need the new password too.
        </p>
      </Alert>
      <form onSubmit={submit} className="web-narrow">
        <Done message={change.data ? `${change.data.message} It is stored encrypted with your service.` : null} />
        <PasswordField
          label="New password"
          value={password}
          onChange={(value) => {
            setPassword(value);
            setMismatch(false);
          }}
          onGenerate={(value) => {
            setPassword(value);
            setRepeat(value);
            setMismatch(false);
          }}
          error={passwordError(change.error)}
          hint="At least 8 characters. The hosting panel refuses weak passwords; Generate makes a strong one (and fills both fields: copy it somewhere safe)."
        />
        <PasswordField
          label="Repeat the new password"
          value={repeat}
          onChange={(value) => {
            setRepeat(value);
            setMismatch(false);
          }}
          error={mismatch ? 'does not match the new password' : undefined}
          canGenerate={false}
          hint="Type it again (or paste it) to make sure it is the one you mean."
        />
        <FormError error={change.error} fields={['password']} />
        <div className="row">
          <Button type="submit" busy={change.isPending}>
            Change password
          </Button>
        </div>
      </form>
    </section>
  );
}

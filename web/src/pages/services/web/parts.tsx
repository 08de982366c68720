// Small pieces the web hosting sections share: a usage meter that says its numbers, a password
// field with show and generate, the plan-limit note beside a create form, and an inline confirm.

import { type InputHTMLAttributes, useState } from 'react';
import { Alert, Button, ErrorAlert, TextField } from '../../../components/ui.tsx';
import { ApiError } from '../../../lib/api.ts';
import { bytes } from '../../../lib/format.ts';
import { limitOf } from './webApi.ts';

const count = new Intl.NumberFormat('en-IN');

/** A value as the meter writes it: bytes in KiB/MiB/GiB, anything else as a plain number. */
export function amount(value: number, unit: string | null): string {
  return unit === 'bytes' ? bytes(value) : count.format(value);
}

/**
 * Used against a limit: a bar (decoration only) and the numbers in words, with "Almost full"
 * from 90 % and "Full" at the limit, so colour is never the only signal.
 */
export function Meter({
  label,
  used,
  limit,
  unit,
  unlimitedText = 'no limit on your plan',
}: {
  label: string;
  used: number;
  limit: number | null;
  unit: string | null;
  unlimitedText?: string;
}) {
  const hasLimit = limit !== null && limit > 0;
  const percent = hasLimit ? Math.min(100, (used / limit) * 100) : 0;
  const level = !hasLimit ? 'none' : percent >= 100 ? 'full' : percent >= 90 ? 'high' : 'ok';
  const note = level === 'full' ? 'Full' : level === 'high' ? 'Almost full' : null;
  return (
    <div className={`web-meter web-meter-${level}`}>
      <div className="web-meter-head">
        <span className="web-meter-label">{label}</span>
        {note ? <span className="web-meter-note">⚠ {note}</span> : null}
      </div>
      <div className="web-meter-bar" aria-hidden="true">
        <span style={{ width: `${hasLimit ? Math.max(percent, used > 0 ? 1 : 0) : 0}%` }} />
      </div>
      <p className="web-meter-text">
        {limit === 0 ? (
          'Not included in your plan'
        ) : hasLimit ? (
          <>
            {amount(used, unit)} of {amount(limit, unit)} used{' '}
            <span className="muted">({percent < 1 && used > 0 ? '<1' : Math.round(percent)} %)</span>
          </>
        ) : (
          <>
            {amount(used, unit)} used <span className="muted">· {unlimitedText}</span>
          </>
        )}
      </p>
    </div>
  );
}

const ALPHABET = {
  lower: 'abcdefghijkmnopqrstuvwxyz',
  upper: 'ABCDEFGHJKLMNPQRSTUVWXYZ',
  digit: '23456789',
  symbol: '-_.!@#%+=',
};

function pick(set: string, random: number): string {
  return set[random % set.length] as string;
}

/** A random 20-character password with every kind of character (the panel rates strength). */
export function generatePassword(length = 20): string {
  const all = ALPHABET.lower + ALPHABET.upper + ALPHABET.digit + ALPHABET.symbol;
  const random = new Uint32Array(length + 4);
  crypto.getRandomValues(random);
  const chars = [
    pick(ALPHABET.lower, random[0] as number),
    pick(ALPHABET.upper, random[1] as number),
    pick(ALPHABET.digit, random[2] as number),
    pick(ALPHABET.symbol, random[3] as number),
  ];
  for (let i = 4; i < length; i++) chars.push(pick(all, random[i] as number));
  // Shuffle so the fixed kinds are not always first.
  for (let i = chars.length - 1; i > 0; i--) {
    const j = (random[length + (i % 4)] as number) % (i + 1);
    [chars[i], chars[j]] = [chars[j] as string, chars[i] as string];
  }
  return chars.join('');
}

/**
 * The error for a password field. cPanel's strength refusal masks the word "password" as
 * "***" (it masks anything that looks like one); it reads better with the word back.
 */
export function passwordError(error: unknown): string | undefined {
  if (!(error instanceof ApiError)) return undefined;
  const message = error.field('password');
  if (!message) return undefined;
  const readable = message.replace(/\*\*\*/g, 'password');
  return error.code === 'weak_password' ? `${readable} Make it longer, or press Generate.` : readable;
}

/** The error for a database or user name field, with the schema's pattern said in words. */
export function nameError(error: unknown, field: string): string | undefined {
  if (!(error instanceof ApiError)) return undefined;
  const message = error.field(field);
  if (message?.startsWith('must match pattern')) return 'may contain only lowercase letters (a–z), digits and _';
  return message;
}

/**
 * A form's error: the server's message, or, when every problem it names is already shown beside
 * its field, a short pointer to them (the same words twice help nobody).
 */
export function FormError({ error, fields }: { error: unknown; fields: string[] }) {
  if (!error) return null;
  if (error instanceof ApiError) {
    const named = Object.keys(error.errors);
    if (named.length > 0 && named.every((name) => fields.includes(name))) {
      return (
        <Alert kind="error">
          <p>{named.length === 1 ? 'Check the field marked ⚠.' : 'Check the fields marked ⚠.'}</p>
        </Alert>
      );
    }
  }
  return <ErrorAlert error={error} fields={fields} />;
}

/** A new password: hidden by default, a Show/Hide toggle, and Generate (which shows what it made). */
export function PasswordField({
  label,
  value,
  onChange,
  error,
  hint = 'At least 8 characters. The hosting panel refuses weak passwords; Generate makes a strong one.',
  canGenerate = true,
  onGenerate,
  ...rest
}: {
  label: string;
  value: string;
  onChange: (value: string) => void;
  error?: string | undefined;
  hint?: string;
  canGenerate?: boolean;
  /** Called with a generated password instead of onChange (e.g. to fill a repeat field too). */
  onGenerate?: (value: string) => void;
} & Omit<InputHTMLAttributes<HTMLInputElement>, 'value' | 'onChange'>) {
  const [shown, setShown] = useState(false);
  return (
    <div className="web-password">
      <TextField
        label={label}
        type={shown ? 'text' : 'password'}
        value={value}
        onChange={(e) => onChange(e.target.value)}
        autoComplete="new-password"
        spellCheck={false}
        autoCapitalize="off"
        minLength={8}
        maxLength={128}
        required
        error={error}
        hint={hint}
        className={shown ? 'mono' : undefined}
        {...rest}
      />
      <div className="row">
        <Button variant="secondary" onClick={() => setShown((s) => !s)} aria-pressed={shown}>
          {shown ? 'Hide password' : 'Show password'}
        </Button>
        {canGenerate ? (
          <Button
            variant="secondary"
            onClick={() => {
              (onGenerate ?? onChange)(generatePassword());
              setShown(true);
            }}
          >
            Generate
          </Button>
        ) : null}
      </div>
    </div>
  );
}

/**
 * How many of the plan's allowance are used, next to a create form; at the limit (or when the
 * server answered 409 limit_reached) a warning that says the limit and what to do.
 */
export function LimitNote({ used, limit, what, error }: { used: number; limit: number; what: string; error: unknown }) {
  const refused = limitOf(error);
  const reached = refused !== null || used >= limit;
  const shownLimit = refused ?? limit;
  return (
    <div className="web-limit">
      <p className="muted">
        {used} of {limit} {what} used on your plan.
      </p>
      {reached ? (
        <Alert kind="warning">
          <p>
            <strong>Plan limit reached:</strong> your plan allows {shownLimit} {what}. Delete one first, or upgrade the
            plan to add more.
          </p>
        </Alert>
      ) : null}
    </div>
  );
}

/** The success message of the last change, announced politely. */
export function Done({ message }: { message: string | null | undefined }) {
  if (!message) return null;
  return <Alert kind="success">{message}</Alert>;
}

/** A one-step confirmation shown in place (for changes that lose nothing that cannot be remade). */
export function ConfirmInline({
  children,
  action,
  busy,
  onConfirm,
  onCancel,
}: {
  children: React.ReactNode;
  action: string;
  busy?: boolean;
  onConfirm: () => void;
  onCancel: () => void;
}) {
  return (
    <fieldset className="confirm">
      <legend className="sr-only">{action}</legend>
      {children}
      <div className="row">
        <Button variant="danger" busy={busy} onClick={onConfirm}>
          {action}
        </Button>
        <Button variant="secondary" onClick={onCancel}>
          Cancel
        </Button>
      </div>
    </fieldset>
  );
}

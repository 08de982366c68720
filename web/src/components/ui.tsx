// The panel's small component layer: labelled fields that show the server's message for their
// field, buttons that say what they do and show when they are busy, alerts, empty states,
// status badges that carry a word (never colour alone), and a typed confirmation.

import {
  type ButtonHTMLAttributes,
  type InputHTMLAttributes,
  type ReactNode,
  type Ref,
  type SelectHTMLAttributes,
  type TextareaHTMLAttributes,
  useEffect,
  useId,
  useRef,
  useState,
} from 'react';
import { ApiError } from '../lib/api.ts';

export function Button({
  busy = false,
  variant = 'primary',
  children,
  ...rest
}: ButtonHTMLAttributes<HTMLButtonElement> & {
  ref?: Ref<HTMLButtonElement>;
  busy?: boolean;
  variant?: 'primary' | 'secondary' | 'danger' | 'ghost';
}) {
  return (
    <button
      type="button"
      {...rest}
      className={`btn btn-${variant} ${rest.className ?? ''}`}
      disabled={rest.disabled || busy}
      aria-busy={busy || undefined}
    >
      {busy ? <span className="spinner" aria-hidden="true" /> : null}
      {children}
    </button>
  );
}

interface FieldProps {
  label: string;
  /** The server's message for this field (ApiError.errors[name]) or a local one. */
  error?: string | undefined;
  hint?: ReactNode;
}

export function TextField({
  label,
  error,
  hint,
  ...input
}: FieldProps & InputHTMLAttributes<HTMLInputElement> & { ref?: Ref<HTMLInputElement> }) {
  const id = useId();
  const hintId = `${id}-hint`;
  const errorId = `${id}-error`;
  return (
    <div className={`field${error ? ' has-error' : ''}`}>
      <label htmlFor={id}>{label}</label>
      <input
        id={id}
        {...input}
        aria-invalid={error ? true : undefined}
        aria-describedby={[hint ? hintId : '', error ? errorId : ''].filter(Boolean).join(' ') || undefined}
      />
      {hint ? (
        <p className="hint" id={hintId}>
          {hint}
        </p>
      ) : null}
      {error ? (
        <p className="field-error" id={errorId}>
          {error}
        </p>
      ) : null}
    </div>
  );
}

export function TextArea({ label, error, hint, ...input }: FieldProps & TextareaHTMLAttributes<HTMLTextAreaElement>) {
  const id = useId();
  return (
    <div className={`field${error ? ' has-error' : ''}`}>
      <label htmlFor={id}>{label}</label>
      <textarea
        id={id}
        {...input}
        aria-invalid={error ? true : undefined}
        aria-describedby={error ? `${id}-error` : undefined}
      />
      {hint ? <p className="hint">{hint}</p> : null}
      {error ? (
        <p className="field-error" id={`${id}-error`}>
          {error}
        </p>
      ) : null}
    </div>
  );
}

export function SelectField({
  label,
  error,
  hint,
  children,
  ...select
}: FieldProps & SelectHTMLAttributes<HTMLSelectElement> & { children: ReactNode }) {
  const id = useId();
  return (
    <div className={`field${error ? ' has-error' : ''}`}>
      <label htmlFor={id}>{label}</label>
      <select
        id={id}
        {...select}
        aria-invalid={error ? true : undefined}
        aria-describedby={error ? `${id}-error` : undefined}
      >
        {children}
      </select>
      {hint ? <p className="hint">{hint}</p> : null}
      {error ? (
        <p className="field-error" id={`${id}-error`}>
          {error}
        </p>
      ) : null}
    </div>
  );
}

export function Checkbox({
  label,
  hint,
  ...input
}: { label: string; hint?: ReactNode } & InputHTMLAttributes<HTMLInputElement>) {
  const id = useId();
  return (
    <div className="checkbox">
      <input id={id} type="checkbox" {...input} aria-describedby={hint ? `${id}-hint` : undefined} />
      <label htmlFor={id}>{label}</label>
      {hint ? (
        <p className="hint" id={`${id}-hint`}>
          {hint}
        </p>
      ) : null}
    </div>
  );
}

/**
 * The message of a failed request, for the form as a whole. Field errors the form shows beside
 * its fields are listed here only when no field on the form has that name.
 */
export function ErrorAlert({ error, fields = [] }: { error: unknown; fields?: string[] }) {
  if (!error) return null;
  const message = error instanceof Error ? error.message : String(error);
  const others =
    error instanceof ApiError ? Object.entries(error.errors).filter(([name]) => !fields.includes(name)) : [];
  return (
    <div className="alert alert-error" role="alert">
      <p>{message}</p>
      {others.length > 0 ? (
        <ul>
          {others.map(([name, reason]) => (
            <li key={name}>
              {name}: {reason}
            </li>
          ))}
        </ul>
      ) : null}
      {error instanceof ApiError && error.retryAfter ? <p>Try again in {waitWords(error.retryAfter)}.</p> : null}
    </div>
  );
}

/** A Retry-After in words: "45 seconds", "15 minutes". */
export function waitWords(seconds: number): string {
  if (seconds < 90) return `${Math.ceil(seconds)} second${Math.ceil(seconds) === 1 ? '' : 's'}`;
  const minutes = Math.ceil(seconds / 60);
  return `${minutes} minute${minutes === 1 ? '' : 's'}`;
}

export function Alert({
  kind = 'info',
  children,
}: {
  kind?: 'info' | 'success' | 'warning' | 'error';
  children: ReactNode;
}) {
  return (
    <div className={`alert alert-${kind}`} role={kind === 'error' ? 'alert' : 'status'}>
      {children}
    </div>
  );
}

/** The field error of an ApiError, for <TextField error=…>. */
export function fieldError(error: unknown, name: string): string | undefined {
  return error instanceof ApiError ? error.field(name) : undefined;
}

export function Empty({ title, children }: { title: string; children?: ReactNode }) {
  return (
    <div className="empty">
      <h3>{title}</h3>
      {children}
    </div>
  );
}

export function Loading({ what = 'Loading' }: { what?: string }) {
  return (
    <p className="loading" role="status">
      <span className="spinner" aria-hidden="true" /> {what}…
    </p>
  );
}

const TONES: Record<string, string> = {
  active: 'good',
  running: 'good',
  succeeded: 'good',
  approved: 'good',
  paid: 'good',
  pending: 'wait',
  provisioning: 'wait',
  queued: 'wait',
  building: 'wait',
  ready: 'good',
  expired: 'off',
  starting: 'wait',
  stopping: 'wait',
  unpaid: 'wait',
  suspended: 'bad',
  overdue: 'bad',
  offline: 'off',
  failed: 'bad',
  rejected: 'bad',
  stopped: 'off',
  terminated: 'off',
  cancelled: 'off',
  unknown: 'off',
};

/** A state in words, with a shape and colour that repeat it. */
export function Status({ value }: { value: string | null | undefined }) {
  const text = value ?? 'unknown';
  return <span className={`status status-${TONES[text] ?? 'off'}`}>{text}</span>;
}

/** A confirmation that asks the user to type a word (the service label, "DELETE") first. */
export function TypedConfirm({
  word,
  action,
  busy,
  onConfirm,
  onCancel,
  children,
}: {
  word: string;
  action: string;
  busy?: boolean;
  onConfirm: () => void;
  onCancel: () => void;
  children?: ReactNode;
}) {
  const [typed, setTyped] = useState('');
  return (
    <fieldset className="confirm">
      <legend className="sr-only">{action}</legend>
      {children}
      <TextField
        label={`Type ${word} to confirm`}
        value={typed}
        onChange={(e) => setTyped(e.target.value)}
        autoComplete="off"
        spellCheck={false}
      />
      <div className="row">
        <Button variant="danger" disabled={typed !== word} busy={busy} onClick={onConfirm}>
          {action}
        </Button>
        <Button variant="secondary" onClick={onCancel}>
          Cancel
        </Button>
      </div>
    </fieldset>
  );
}

/**
 * Focus for an inline confirmation: when it opens, its first button takes the focus; when it
 * closes, the button that opened it gets it back (a keyboard user keeps their place).
 */
export function useConfirmFocus(open: boolean) {
  const confirm = useRef<HTMLButtonElement>(null);
  const trigger = useRef<HTMLButtonElement>(null);
  const wasOpen = useRef(open);
  useEffect(() => {
    if (open) confirm.current?.focus();
    else if (wasOpen.current) trigger.current?.focus();
    wasOpen.current = open;
  }, [open]);
  return { confirm, trigger };
}

export function CopyButton({ text, label = 'Copy' }: { text: string; label?: string }) {
  const [done, setDone] = useState(false);
  return (
    <Button
      variant="secondary"
      onClick={async () => {
        try {
          await navigator.clipboard.writeText(text);
          setDone(true);
          setTimeout(() => setDone(false), 2000);
        } catch {
          setDone(false);
        }
      }}
    >
      {done ? 'Copied' : label}
    </Button>
  );
}

export function PageHeader({ title, children }: { title: string; children?: ReactNode }) {
  return (
    <div className="page-header">
      <h1>{title}</h1>
      {children ? <div className="page-actions">{children}</div> : null}
    </div>
  );
}

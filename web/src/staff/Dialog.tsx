// The console's confirmations: a modal <dialog> holding one form (Enter sends it). While it is
// open the rest of the page is inert (the browser keeps Tab inside it); Escape or Cancel closes
// it, and the focus goes back to what opened it (or to the page's main area when that is gone —
// a Suspend button that became Unsuspend). The server's refusal is shown inside it, by its fields.

import { type FormEvent, type ReactNode, useEffect, useId, useRef } from 'react';
import { Button, ErrorAlert, fieldError, TextField } from '../components/ui.tsx';

export function ActionDialog({
  title,
  children,
  submitLabel,
  variant = 'primary',
  busy = false,
  error,
  fields = [],
  submitDisabled = false,
  onSubmit,
  onClose,
}: {
  title: string;
  children?: ReactNode;
  submitLabel: string;
  variant?: 'primary' | 'danger';
  busy?: boolean;
  /** The failed request's error: its message above the fields, field errors beside them. */
  error?: unknown;
  /** Fields the form shows itself (their errors are not listed again in the message). */
  fields?: string[];
  submitDisabled?: boolean;
  onSubmit: () => void;
  onClose: () => void;
}) {
  const dialog = useRef<HTMLDialogElement>(null);
  const titleId = useId();
  useEffect(() => {
    const element = dialog.current;
    const opener = document.activeElement as HTMLElement | null;
    if (element && !element.open) element.showModal();
    element?.querySelector<HTMLElement>('input:not([type=hidden]), select, textarea, button[type=submit]')?.focus();
    return () => {
      if (element?.open) element.close();
      const back = opener?.isConnected ? opener : document.getElementById('main');
      back?.focus();
    };
  }, []);
  const submit = (event: FormEvent) => {
    event.preventDefault();
    if (!busy && !submitDisabled) onSubmit();
  };
  return (
    <dialog
      ref={dialog}
      className="staff-dialog"
      aria-labelledby={titleId}
      onCancel={(event) => {
        event.preventDefault();
        onClose();
      }}
      // Closed by the browser itself (an Escape without a cancel event): the page forgets it too.
      onClose={() => {
        if (!dialog.current?.open) onClose();
      }}
    >
      <form onSubmit={submit} className="staff-dialog-form">
        <h2 id={titleId}>{title}</h2>
        <ErrorAlert error={error} fields={fields} />
        {children}
        <div className="row">
          <Button type="submit" variant={variant} busy={busy} disabled={submitDisabled}>
            {submitLabel}
          </Button>
          <Button variant="secondary" onClick={onClose}>
            Cancel
          </Button>
        </div>
      </form>
    </dialog>
  );
}

/** The reason an action keeps in the audit log (the API asks for at least 3 characters). */
export function ReasonField({
  value,
  onChange,
  error,
  label = 'Reason (kept in the audit log)',
}: {
  value: string;
  onChange: (value: string) => void;
  error: unknown;
  label?: string;
}) {
  return (
    <TextField
      label={label}
      value={value}
      maxLength={500}
      autoComplete="off"
      onChange={(e) => onChange(e.target.value)}
      error={fieldError(error, 'reason')}
    />
  );
}

/** Rupees as typed ("1250", "1,250.50") → integer paise, or null when it is not an amount. */
export function paiseOf(text: string): number | null {
  const match = /^(\d{1,9})(?:\.(\d{1,2}))?$/.exec(text.trim().replace(/[,₹\s]/g, ''));
  if (!match) return null;
  const paise = Number(match[1]) * 100 + Number((match[2] ?? '').padEnd(2, '0'));
  return paise > 0 ? paise : null;
}

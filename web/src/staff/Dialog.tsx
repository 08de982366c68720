// The console's confirmations: a modal <dialog> holding one form (Enter sends it). While it is
// open the rest of the page is inert (the browser keeps Tab inside it); Escape or Cancel closes
// it, and the focus goes back to what opened it (or to the page's main area when that is gone —
// a Suspend button that became Unsuspend). The server's refusal is shown inside it, by its fields,
// until the form is edited.
// A page opens its dialogs with useActionDialog; a dialog's form binds its text fields with formFields.

import { type QueryKey, useMutation, useQueryClient } from '@tanstack/react-query';
import { type FormEvent, type InputHTMLAttributes, type ReactNode, useEffect, useId, useRef, useState } from 'react';
import { Button, ErrorAlert, fieldError, TextField } from '../components/ui.tsx';

/**
 * Which dialog of a page is open (`open`: what it is about) and what the last one did (`done`, the
 * success message the page shows). `ask` opens one (the old message goes); `finish` closes it, keeps
 * its message and refetches the page's queries (`keys`).
 */
export function useActionDialog<T>(...keys: QueryKey[]) {
  const client = useQueryClient();
  const [open, setOpen] = useState<T | null>(null);
  const [done, setDone] = useState<string | null>(null);
  return {
    open,
    done,
    ask: (next: T) => {
      setDone(null);
      setOpen(next);
    },
    close: () => setOpen(null),
    finish: async (message: string) => {
      setOpen(null);
      setDone(message);
      await Promise.all(keys.map((queryKey) => client.invalidateQueries({ queryKey })));
    },
  };
}

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
  // A refusal is shown until the form is edited (then it describes what is no longer there), and
  // again for the next refusal.
  const [editedPast, setEditedPast] = useState<unknown>(null);
  const shown = error !== undefined && error !== null && error !== editedPast ? error : null;
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
      <form
        onSubmit={submit}
        onInput={() => {
          if (shown !== null) setEditedPast(error);
        }}
        className="staff-dialog-form"
      >
        <h2 id={titleId}>{title}</h2>
        <ErrorAlert error={shown} fields={fields} />
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

/**
 * The text fields of a dialog's form (one string per field): `field(name, label)` is a TextField
 * showing `form[name]`, changing it, and showing the API's error for `name` beside it.
 */
export function formFields<F extends Record<string, string>>(form: F, setForm: (form: F) => void, error: unknown) {
  return (
    name: keyof F & string,
    label: string,
    extra: Omit<InputHTMLAttributes<HTMLInputElement>, 'value' | 'onChange'> = {},
  ) => (
    <TextField
      label={label}
      autoComplete="off"
      value={form[name]}
      onChange={(e) => setForm({ ...form, [name]: e.target.value })}
      error={fieldError(error, name)}
      {...extra}
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

/**
 * A confirmation that turns something off or back on (retire an OS template, close a location):
 * its text, an optional reason for the audit log, and `send(reason)` (the API call, whose answer's
 * message the page shows). `off`: the change takes it out of use (a danger button).
 */
export function OnOffDialog({
  off,
  title,
  submitLabel,
  text,
  send,
  onClose,
  onDone,
}: {
  off: boolean;
  title: string;
  submitLabel: string;
  text: string;
  send: (reason: string | undefined) => Promise<{ message: string }>;
  onClose: () => void;
  onDone: (message: string) => Promise<void>;
}) {
  const [reason, setReason] = useState('');
  const change = useMutation({
    mutationFn: () => send(reason.trim() || undefined),
    onSuccess: (data) => onDone(data.message),
  });
  return (
    <ActionDialog
      title={title}
      submitLabel={submitLabel}
      variant={off ? 'danger' : 'primary'}
      busy={change.isPending}
      error={change.error}
      fields={['reason']}
      onSubmit={() => change.mutate()}
      onClose={onClose}
    >
      <p>{text}</p>
      <ReasonField
        label="Reason (optional; kept in the audit log)"
        value={reason}
        onChange={setReason}
        error={change.error}
      />
    </ActionDialog>
  );
}

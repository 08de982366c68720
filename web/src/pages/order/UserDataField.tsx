// The order form's optional cloud-init user data (virtual servers), folded under "Advanced":
// a textarea with a byte counter against the server's 64 KiB limit (counted in UTF-8 bytes,
// as the server counts them). What is typed is sent once with the order and never shown again.

import { TextArea } from '../../components/ui.tsx';

export const USER_DATA_MAX_BYTES = 65_536;

export const userDataBytes = (text: string): number => new TextEncoder().encode(text).length;

export function UserDataField({
  value,
  onChange,
  error,
}: {
  value: string;
  onChange: (value: string) => void;
  error: string | undefined;
}) {
  const bytes = userDataBytes(value);
  return (
    <details className="order-advanced" open={error !== undefined || undefined}>
      <summary>Advanced</summary>
      <TextArea
        label="Cloud-init user data (optional)"
        name="user_data"
        value={value}
        onChange={(e) => onChange(e.target.value)}
        rows={8}
        spellCheck={false}
        autoCapitalize="none"
        className="mono"
        placeholder={'#cloud-config\npackages:\n  - nginx'}
        hint={
          <>
            A <span className="mono">#cloud-config</span> document or a script (<span className="mono">#!/bin/sh</span>)
            run on the first boot, after your root password and SSH keys are set. {bytes.toLocaleString('en-IN')} of{' '}
            {USER_DATA_MAX_BYTES.toLocaleString('en-IN')} bytes (64 KiB). It is not shown again after ordering.
          </>
        }
        error={error}
      />
    </details>
  );
}

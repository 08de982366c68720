// The staff directory (admin): every member with their role and state; invite a new member (the
// invitation is mailed), mail a new invitation, change a role, disable a member (their sessions
// end at once). The server refuses changing one's own role or disabling oneself (409).

import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { type FormEvent, useState } from 'react';
import {
  Alert,
  Button,
  ErrorAlert,
  fieldError,
  Loading,
  PageHeader,
  SelectField,
  TextField,
} from '../components/ui.tsx';
import { day } from '../lib/format.ts';
import { useStaffTitle } from './AuthPages.tsx';
import { call, staffApi } from './api.ts';
import { ForbiddenOr } from './Forbidden.tsx';
import { type StaffRole, useMe } from './session.tsx';

const DIRECTORY_KEY = ['staff', 'directory'] as const;
const ROLES: StaffRole[] = ['support', 'billing', 'admin'];

type Change =
  | { action: 'add'; email: string; name?: string; role: StaffRole }
  | { action: 'invite'; id: number }
  | { action: 'disable'; id: number; reason?: string }
  | { action: 'role'; id: number; role: StaffRole };

export default function DirectoryPage() {
  useStaffTitle('Staff');
  const me = useMe();
  const client = useQueryClient();
  const list = useQuery({
    queryKey: DIRECTORY_KEY,
    queryFn: async () => (await call(staffApi.GET('/api/v1/staff/staff'))).staff,
  });
  const [email, setEmail] = useState('');
  const [name, setName] = useState('');
  const [role, setRole] = useState<StaffRole>('support');
  const [done, setDone] = useState<string | null>(null);
  const change = useMutation({
    mutationFn: (body: Change) => call(staffApi.POST('/api/v1/staff/staff', { body })),
    onSuccess: async (data, body) => {
      setDone(`${data.message} (${data.staff.email})`);
      if (body.action === 'add') {
        setEmail('');
        setName('');
      }
      await client.invalidateQueries({ queryKey: DIRECTORY_KEY });
    },
  });
  const add = (event: FormEvent) => {
    event.preventDefault();
    change.mutate({ action: 'add', email, role, ...(name.trim() ? { name: name.trim() } : {}) });
  };
  const addError = change.variables?.action === 'add' ? change.error : null;
  const rowError = change.variables?.action !== 'add' ? change.error : null;

  return (
    <ForbiddenOr error={list.error}>
      <PageHeader title="Staff" />
      {done ? <Alert kind="success">{done}</Alert> : null}
      <ErrorAlert error={rowError} />
      {list.isPending ? (
        <Loading what="Loading the staff" />
      ) : list.isError ? (
        <ErrorAlert error={list.error} />
      ) : (
        <div className="table-wrap">
          <table>
            <caption className="sr-only">Staff members</caption>
            <thead>
              <tr>
                <th scope="col">Name</th>
                <th scope="col">Email</th>
                <th scope="col">Role</th>
                <th scope="col">State</th>
                <th scope="col">Since</th>
                <th scope="col">Actions</th>
              </tr>
            </thead>
            <tbody>
              {list.data.map((m) => {
                const self = m.id === me.data?.staff.id;
                const disabled = m.status === 'disabled';
                return (
                  <tr key={m.id}>
                    <td>{m.name}</td>
                    <td>{m.email}</td>
                    <td>
                      {self || disabled ? (
                        m.role
                      ) : (
                        <select
                          aria-label={`Role of ${m.email}`}
                          value={m.role}
                          onChange={(e) =>
                            change.mutate({ action: 'role', id: m.id, role: e.target.value as StaffRole })
                          }
                        >
                          {ROLES.map((r) => (
                            <option key={r} value={r}>
                              {r}
                            </option>
                          ))}
                        </select>
                      )}
                    </td>
                    <td>
                      {m.status}
                      {m.status === 'active' && !m.totp ? ' (no authenticator yet)' : ''}
                    </td>
                    <td>{day(m.created_at)}</td>
                    <td>
                      <div className="staff-row-actions">
                        {self ? (
                          <span className="muted">you</span>
                        ) : disabled ? null : (
                          <>
                            {m.status === 'invited' ? (
                              <Button variant="secondary" onClick={() => change.mutate({ action: 'invite', id: m.id })}>
                                Mail a new invitation
                              </Button>
                            ) : null}
                            <Button
                              variant="danger"
                              onClick={() => {
                                if (window.confirm(`Disable ${m.email}? They are signed out at once.`)) {
                                  change.mutate({ action: 'disable', id: m.id });
                                }
                              }}
                            >
                              Disable
                            </Button>
                          </>
                        )}
                      </div>
                    </td>
                  </tr>
                );
              })}
            </tbody>
          </table>
        </div>
      )}
      <section className="card staff-invite-card" aria-labelledby="invite-title">
        <h2 id="invite-title">Invite a member</h2>
        <p className="muted">They get a mail with a link to choose a password; it works once, within 72 hours.</p>
        <form onSubmit={add} className="staff-invite">
          <ErrorAlert error={addError} fields={['email', 'role', 'name']} />
          <TextField
            label="Email"
            type="email"
            value={email}
            onChange={(e) => setEmail(e.target.value)}
            error={fieldError(addError, 'email')}
            required
          />
          <TextField label="Name (optional)" value={name} onChange={(e) => setName(e.target.value)} />
          <SelectField label="Role" value={role} onChange={(e) => setRole(e.target.value as StaffRole)}>
            {ROLES.map((r) => (
              <option key={r} value={r}>
                {r}
              </option>
            ))}
          </SelectField>
          <Button type="submit" busy={change.isPending && change.variables?.action === 'add'}>
            Invite
          </Button>
        </form>
      </section>
    </ForbiddenOr>
  );
}

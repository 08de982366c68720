// The nodes (admin; GET nodes): each one's health at its last check, what that check said when it
// failed, its capacity and how many services it carries, and whether it is drained. Draining (a
// reason kept in the audit log) keeps new services off a node; those on it keep running.

import { useMutation, useQuery } from '@tanstack/react-query';
import { useState } from 'react';
import { Alert, Button, Empty, ErrorAlert, Loading, PageHeader } from '../components/ui.tsx';
import { relative } from '../lib/format.ts';
import { useStaffTitle } from './AuthPages.tsx';
import { call, staffApi } from './api.ts';
import { ActionDialog, ReasonField, useActionDialog } from './Dialog.tsx';
import { ForbiddenOr } from './Forbidden.tsx';
import { Health } from './Health.tsx';
import { StaffTable } from './StaffTable.tsx';

const NODES_KEY = ['staff', 'nodes'] as const;

interface Target {
  id: number;
  name: string;
  action: 'drain' | 'undrain';
}

export default function NodesPage() {
  useStaffTitle('Nodes');
  const nodes = useQuery({
    queryKey: NODES_KEY,
    queryFn: async () => (await call(staffApi.GET('/api/v1/staff/nodes'))).nodes,
    refetchInterval: 60_000,
  });
  const dialog = useActionDialog<Target>(NODES_KEY);
  const target = dialog.open;
  const [reason, setReason] = useState('');
  const change = useMutation({
    mutationFn: (t: Target) =>
      call(staffApi.POST('/api/v1/staff/nodes', { body: { action: t.action, id: t.id, reason } })),
    onSuccess: (data) => dialog.finish(`${data.node.name}: ${data.message}`),
  });
  const ask = (t: Target) => {
    setReason('');
    change.reset();
    dialog.ask(t);
  };

  return (
    <ForbiddenOr error={nodes.error}>
      <PageHeader title="Nodes" />
      {dialog.done ? <Alert kind="success">{dialog.done}</Alert> : null}
      {nodes.isPending ? (
        <Loading what="Loading the nodes" />
      ) : nodes.isError ? (
        <ErrorAlert error={nodes.error} />
      ) : nodes.data.length === 0 ? (
        <Empty title="No nodes">Add one with the admin CLI: npm run admin -- nodes add.</Empty>
      ) : (
        <StaffTable
          caption="Every node"
          columns={['Node', 'Health', { label: 'Used / capacity', num: true }, 'Placement', 'Last error', 'Action']}
        >
          {nodes.data.map((n) => (
            <tr key={n.id} className={n.trouble ? 'staff-trouble' : undefined}>
              <td data-label="Node" className="staff-wrap">
                <strong>{n.name}</strong>
                <div className="muted">
                  {n.kind} · location {n.location_id}
                </div>
              </td>
              <td data-label="Health">
                <Health value={n.health} />
                <div className="muted">{n.checked_at ? `checked ${relative(n.checked_at)}` : 'never checked'}</div>
              </td>
              <td data-label="Used / capacity" className="num">
                {n.used} / {n.capacity}
                {n.used > n.capacity ? <div className="staff-over">over capacity</div> : null}
              </td>
              <td data-label="Placement">{n.active ? 'open' : 'drained'}</td>
              <td data-label="Last error" className="staff-wrap">
                {n.last_error ?? '—'}
              </td>
              <td data-label="Action">
                <Button
                  variant={n.active ? 'danger' : 'secondary'}
                  aria-label={`${n.active ? 'Drain' : 'Undrain'} ${n.name}`}
                  onClick={() => ask({ id: n.id, name: n.name, action: n.active ? 'drain' : 'undrain' })}
                >
                  {n.active ? 'Drain' : 'Undrain'}
                </Button>
              </td>
            </tr>
          ))}
        </StaffTable>
      )}
      {target ? (
        <ActionDialog
          title={`${target.action === 'drain' ? 'Drain' : 'Undrain'} ${target.name}?`}
          submitLabel={target.action === 'drain' ? 'Drain' : 'Undrain'}
          variant={target.action === 'drain' ? 'danger' : 'primary'}
          busy={change.isPending}
          error={change.error}
          fields={['reason']}
          onSubmit={() => change.mutate(target)}
          onClose={dialog.close}
        >
          <p>
            {target.action === 'drain'
              ? 'No new service is placed on this node; the services on it keep running.'
              : 'New services may be placed on this node again.'}
          </p>
          <ReasonField value={reason} onChange={setReason} error={change.error} />
        </ActionDialog>
      ) : null}
    </ForbiddenOr>
  );
}

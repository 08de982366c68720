// One service of any account (GET services/{id}): its state, its latest 20 events and 20 jobs
// (with what the node said when one failed). Billing and admin suspend, unsuspend and queue a
// failed job again; only an admin terminates, after typing the service's label. Each asks for the
// reason the audit log keeps (POST services), and each starts a job.

import { useMutation, useQuery } from '@tanstack/react-query';
import { useState } from 'react';
import { Link, useParams } from 'react-router';
import { Alert, Button, ErrorAlert, Loading, PageHeader, Status, TextField } from '../components/ui.tsx';
import { day, rupees, when } from '../lib/format.ts';
import { useStaffTitle } from './AuthPages.tsx';
import { call, staffApi } from './api.ts';
import { ActionDialog, ReasonField, useActionDialog } from './Dialog.tsx';
import { ForbiddenOr } from './Forbidden.tsx';
import { StaffTable } from './StaffTable.tsx';
import { mayUse, useMe } from './session.tsx';

type Action = 'suspend' | 'unsuspend' | 'terminate' | 'retry_job';
type Open = { action: Action; jobId?: number };

const LABELS: Record<Action, string> = {
  suspend: 'Suspend',
  unsuspend: 'Unsuspend',
  terminate: 'Terminate',
  retry_job: 'Retry',
};

export default function ServicePage() {
  const id = Number(useParams().id);
  const me = useMe();
  const role = me.data?.staff.role;
  const key = ['staff', 'service', id];
  const detail = useQuery({
    queryKey: key,
    queryFn: () => call(staffApi.GET('/api/v1/staff/services/{id}', { params: { path: { id } } })),
  });
  useStaffTitle(detail.data ? detail.data.service.label : 'Service');
  const dialog = useActionDialog<Open>(key);

  if (detail.isPending) return <Loading what="Loading the service" />;
  if (detail.isError)
    return (
      <ForbiddenOr error={detail.error}>
        <PageHeader title="Service" />
        <ErrorAlert error={detail.error} />
        <Link to="/staff/services">Back to the services</Link>
      </ForbiddenOr>
    );
  const { service, events, jobs } = detail.data;
  const billing = mayUse(role, 'billing');

  return (
    <>
      <p className="staff-back">
        <Link to="/staff/services">Services</Link>
      </p>
      <PageHeader title={service.label}>
        {billing && service.status === 'active' ? (
          <Button variant="danger" onClick={() => dialog.ask({ action: 'suspend' })}>
            Suspend
          </Button>
        ) : null}
        {billing && service.status === 'suspended' ? (
          <Button variant="secondary" onClick={() => dialog.ask({ action: 'unsuspend' })}>
            Unsuspend
          </Button>
        ) : null}
        {mayUse(role, 'admin') && service.status !== 'terminated' ? (
          <Button variant="danger" onClick={() => dialog.ask({ action: 'terminate' })}>
            Terminate
          </Button>
        ) : null}
      </PageHeader>
      {dialog.done ? <Alert kind="success">{dialog.done}</Alert> : null}
      <section className="card" aria-labelledby="state-title">
        <h2 id="state-title">State</h2>
        <dl className="staff-facts">
          <dt>Service</dt>
          <dd>
            #{service.id} · {service.type}
          </dd>
          <dt>Status</dt>
          <dd>
            <Status value={service.status} />
            {service.suspend_reason ? <span className="muted"> ({service.suspend_reason})</span> : null}
          </dd>
          <dt>Owner</dt>
          <dd>
            <Link to={`/staff/accounts/${service.account.id}`}>{service.account.email}</Link>
          </dd>
          <dt>Node</dt>
          <dd>{service.node_id === null ? 'none yet' : `node ${service.node_id}`}</dd>
          <dt>Price a month</dt>
          <dd>{rupees(service.price)}</dd>
          <dt>Paid until</dt>
          <dd>{day(service.paid_until)}</dd>
          <dt>Created</dt>
          <dd>{when(service.created_at)}</dd>
        </dl>
      </section>
      {dialog.open ? (
        <ServiceActionDialog open={dialog.open} service={service} onClose={dialog.close} onDone={dialog.finish} />
      ) : null}

      <h2>Jobs</h2>
      {jobs.length === 0 ? (
        <p className="muted">No jobs.</p>
      ) : (
        <StaffTable
          caption="The latest 20 jobs of this service, newest first"
          columns={['Job', 'Status', 'Error', 'Started', billing && 'Action']}
        >
          {jobs.map((j) => (
            <tr key={j.id}>
              <td data-label="Job">
                {j.type} <span className="muted">#{j.id}</span>
              </td>
              <td data-label="Status">
                <Status value={j.status} />
                {j.attempts > 1 ? <span className="muted"> {j.attempts} tries</span> : null}
              </td>
              <td data-label="Error" className="staff-wrap">
                {j.error_message ?? '—'}
                {j.error_detail ? <div className="mono muted">{j.error_detail}</div> : null}
              </td>
              <td data-label="Started">{when(j.created_at)}</td>
              {billing ? (
                <td data-label="Action">
                  {j.status === 'failed' ? (
                    <Button
                      variant="secondary"
                      aria-label={`Retry job ${j.id}`}
                      onClick={() => dialog.ask({ action: 'retry_job', jobId: j.id })}
                    >
                      Retry
                    </Button>
                  ) : null}
                </td>
              ) : null}
            </tr>
          ))}
        </StaffTable>
      )}

      <h2>Events</h2>
      {events.length === 0 ? (
        <p className="muted">No events.</p>
      ) : (
        <ol className="list staff-events" aria-label="The latest 20 events, newest first">
          {events.map((e, i) => (
            // biome-ignore lint/suspicious/noArrayIndexKey: events have no id; the list is replaced whole
            <li key={`${e.at}-${i}`}>
              <span className="muted">{when(e.at)}</span> <span className="mono">{e.kind}</span>
              <div className="staff-wrap">{e.message}</div>
            </li>
          ))}
        </ol>
      )}
    </>
  );
}

function ServiceActionDialog({
  open,
  service,
  onClose,
  onDone,
}: {
  open: Open;
  service: { id: number; label: string };
  onClose: () => void;
  onDone: (message: string) => Promise<void>;
}) {
  const { action, jobId } = open;
  const [reason, setReason] = useState('');
  const [typed, setTyped] = useState('');
  const change = useMutation({
    mutationFn: () =>
      call(
        staffApi.POST('/api/v1/staff/services', {
          body: { action, id: service.id, reason, ...(jobId ? { job_id: jobId } : {}) },
        }),
      ),
    onSuccess: (data) => onDone(data.message),
  });
  const what: Record<Action, string> = {
    suspend: `${service.label} is stopped and its owner cannot use it; paying does not lift a suspension by staff.`,
    unsuspend: `${service.label} starts again.`,
    terminate: `${service.label} and its data are deleted for good. This cannot be undone.`,
    retry_job: `Job ${jobId} of ${service.label} is queued again.`,
  };
  const terminate = action === 'terminate';
  return (
    <ActionDialog
      title={`${LABELS[action]} ${action === 'retry_job' ? `job ${jobId}` : service.label}?`}
      submitLabel={LABELS[action]}
      variant={action === 'suspend' || terminate ? 'danger' : 'primary'}
      busy={change.isPending}
      error={change.error}
      fields={['reason']}
      submitDisabled={terminate && typed !== service.label}
      onSubmit={() => change.mutate()}
      onClose={onClose}
    >
      <p>{what[action]}</p>
      {terminate ? (
        <TextField
          label={`Type ${service.label} to confirm`}
          value={typed}
          onChange={(e) => setTyped(e.target.value)}
          autoComplete="off"
          spellCheck={false}
        />
      ) : null}
      <ReasonField value={reason} onChange={setReason} error={change.error} />
    </ActionDialog>
  );
}

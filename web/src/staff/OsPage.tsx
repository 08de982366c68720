// OS templates (admin; GET os): what customers install, each with the hypervisor's template VM and
// the install image bare-metal servers boot (none: virtual servers only). Add one (POST os
// {action: add}), set or remove a template's install image (POST os {action: image}), or retire a
// template (no new orders or reinstalls pick it; installed servers keep running) and offer it again
// (POST os {action: retire|unretire}, after a confirmation), each with an optional reason kept in
// the audit log.

import { useMutation, useQuery } from '@tanstack/react-query';
import { useState } from 'react';
import {
  Alert,
  Button,
  Checkbox,
  Empty,
  ErrorAlert,
  fieldError,
  Loading,
  PageHeader,
  TextField,
} from '../components/ui.tsx';
import { useStaffTitle } from './AuthPages.tsx';
import { call, staffApi } from './api.ts';
import { ActionDialog, formFields, OnOffDialog, ReasonField, useActionDialog } from './Dialog.tsx';
import { ForbiddenOr } from './Forbidden.tsx';
import { StaffTable } from './StaffTable.tsx';

const OS_KEY = ['staff', 'os'] as const;

interface Os {
  slug: string;
  name: string;
  image_url: string | null;
  active: boolean;
}

export default function OsPage() {
  useStaffTitle('OS templates');
  const list = useQuery({
    queryKey: OS_KEY,
    queryFn: async () => (await call(staffApi.GET('/api/v1/staff/os'))).os,
  });
  // Adding a template, or the install image of one.
  const dialog = useActionDialog<'add' | Os>(OS_KEY);
  // Retiring a template, or offering a retired one again.
  const retire = useActionDialog<Os>(OS_KEY);

  return (
    <ForbiddenOr error={list.error}>
      <PageHeader title="OS templates">
        <Button variant="secondary" onClick={() => dialog.ask('add')}>
          Add an OS template
        </Button>
      </PageHeader>
      {dialog.done ? <Alert kind="success">{dialog.done}</Alert> : null}
      {retire.done ? <Alert kind="success">{retire.done}</Alert> : null}
      {list.isPending ? (
        <Loading what="Loading the OS templates" />
      ) : list.isError ? (
        <ErrorAlert error={list.error} />
      ) : list.data.length === 0 ? (
        <Empty title="No OS templates">Add the first one.</Empty>
      ) : (
        <StaffTable
          caption="Every OS template"
          columns={[
            'Template',
            'Template VM',
            { label: 'Min. disk', num: true },
            'Bare-metal install image',
            'Offered',
            'Action',
          ]}
        >
          {list.data.map((o) => (
            <tr key={o.id}>
              <td data-label="Template" className="staff-wrap">
                <strong>{o.name}</strong>
                <div className="muted mono">{o.slug}</div>
              </td>
              <td data-label="Template VM" className="mono">
                {o.template_vmid}
              </td>
              <td data-label="Min. disk" className="num">
                {o.min_disk_gb} GB
              </td>
              <td data-label="Install image" className="staff-wrap">
                {o.image_url ? (
                  <span className="mono">{o.image_url}</span>
                ) : (
                  <span className="muted">none (virtual servers only)</span>
                )}
              </td>
              <td data-label="Offered">{o.active ? 'yes' : 'no (retired)'}</td>
              <td data-label="Action">
                <div className="row">
                  <Button variant="secondary" aria-label={`Install image of ${o.slug}`} onClick={() => dialog.ask(o)}>
                    Install image
                  </Button>
                  <Button
                    variant={o.active ? 'danger' : 'secondary'}
                    aria-label={`${o.active ? 'Retire' : 'Unretire'} ${o.slug}`}
                    onClick={() => {
                      dialog.close();
                      retire.ask(o);
                    }}
                  >
                    {o.active ? 'Retire' : 'Unretire'}
                  </Button>
                </div>
              </td>
            </tr>
          ))}
        </StaffTable>
      )}
      {dialog.open === 'add' ? <AddOs onClose={dialog.close} onDone={dialog.finish} /> : null}
      {dialog.open && dialog.open !== 'add' ? (
        <SetImage os={dialog.open} onClose={dialog.close} onDone={dialog.finish} />
      ) : null}
      {retire.open ? <Retire os={retire.open} onClose={retire.close} onDone={retire.finish} /> : null}
    </ForbiddenOr>
  );
}

const EMPTY = { slug: '', name: '', family: '', version: '', template_vmid: '', min_disk_gb: '10', image_url: '' };

function AddOs({ onClose, onDone }: { onClose: () => void; onDone: (message: string) => Promise<void> }) {
  const [form, setForm] = useState(EMPTY);
  const [reason, setReason] = useState('');
  const whole = (text: string) => (/^\d{1,9}$/.test(text.trim()) ? Number(text.trim()) : undefined);
  const add = useMutation({
    mutationFn: () => {
      const vmid = whole(form.template_vmid);
      const disk = whole(form.min_disk_gb);
      return call(
        staffApi.POST('/api/v1/staff/os', {
          body: {
            action: 'add',
            slug: form.slug.trim(),
            name: form.name.trim(),
            family: form.family.trim(),
            version: form.version.trim(),
            ...(vmid === undefined ? {} : { template_vmid: vmid }),
            ...(disk === undefined ? {} : { min_disk_gb: disk }),
            ...(form.image_url.trim() ? { image_url: form.image_url.trim() } : {}),
            ...(reason.trim() ? { reason: reason.trim() } : {}),
          },
        }),
      );
    },
    onSuccess: (data) => onDone(data.message),
  });
  const field = formFields(form, setForm, add.error);
  return (
    <ActionDialog
      title="Add an OS template"
      submitLabel="Add the template"
      busy={add.isPending}
      error={add.error}
      fields={[...Object.keys(EMPTY), 'reason']}
      onSubmit={() => add.mutate()}
      onClose={onClose}
    >
      {field('slug', 'Slug', { placeholder: 'e.g. ubuntu-24.04' })}
      {field('name', 'Name', { placeholder: 'e.g. Ubuntu 24.04 LTS' })}
      {field('family', 'Family', { placeholder: 'e.g. ubuntu' })}
      {field('version', 'Version', { placeholder: 'e.g. 24.04' })}
      {field('template_vmid', "The hypervisor's template VM id", { inputMode: 'numeric', placeholder: 'e.g. 9000' })}
      {field('min_disk_gb', 'Minimum disk (GB)', { inputMode: 'numeric' })}
      {field('image_url', 'Install image URL for bare metal (optional)', { inputMode: 'url' })}
      <ReasonField
        label="Reason (optional; kept in the audit log)"
        value={reason}
        onChange={setReason}
        error={add.error}
      />
    </ActionDialog>
  );
}

function SetImage({
  os,
  onClose,
  onDone,
}: {
  os: Os;
  onClose: () => void;
  onDone: (message: string) => Promise<void>;
}) {
  const [url, setUrl] = useState(os.image_url ?? '');
  const [none, setNone] = useState(false);
  const [reason, setReason] = useState('');
  const set = useMutation({
    mutationFn: () =>
      call(
        staffApi.POST('/api/v1/staff/os', {
          body: {
            action: 'image',
            slug: os.slug,
            image_url: none ? null : url.trim(),
            ...(reason.trim() ? { reason: reason.trim() } : {}),
          },
        }),
      ),
    onSuccess: (data) => onDone(data.message),
  });
  return (
    <ActionDialog
      title={`Install image of ${os.slug}`}
      submitLabel="Save the image"
      busy={set.isPending}
      error={set.error}
      fields={['image_url', 'reason']}
      onSubmit={() => set.mutate()}
      onClose={onClose}
    >
      <p>What a bare-metal server boots to install {os.name}. Without one, the template is for virtual servers only.</p>
      <TextField
        label="Install image URL (http or https)"
        inputMode="url"
        autoComplete="off"
        value={url}
        disabled={none}
        onChange={(e) => setUrl(e.target.value)}
        error={fieldError(set.error, 'image_url')}
      />
      <Checkbox
        label="No install image (virtual servers only)"
        checked={none}
        onChange={(e) => setNone(e.target.checked)}
      />
      <ReasonField
        label="Reason (optional; kept in the audit log)"
        value={reason}
        onChange={setReason}
        error={set.error}
      />
    </ActionDialog>
  );
}

/** Retire a template (or offer a retired one again), after a confirmation. */
function Retire({ os, onClose, onDone }: { os: Os; onClose: () => void; onDone: (message: string) => Promise<void> }) {
  const retiring = os.active;
  return (
    <OnOffDialog
      off={retiring}
      title={retiring ? `Retire ${os.slug}?` : `Offer ${os.slug} again?`}
      submitLabel={retiring ? 'Retire the template' : 'Offer it again'}
      text={
        retiring
          ? `New orders and reinstalls can no longer choose ${os.name}; servers already installed from it keep running.`
          : `New orders and reinstalls can choose ${os.name} again.`
      }
      send={(reason) =>
        call(
          staffApi.POST('/api/v1/staff/os', {
            body: { action: retiring ? 'retire' : 'unretire', slug: os.slug, ...(reason ? { reason } : {}) },
          }),
        )
      }
      onClose={onClose}
      onDone={onDone}
    />
  );
}

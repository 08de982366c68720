// Locations and their IPv4 ranges (admin; GET locations, GET ip-ranges): each location with its free
// addresses and free service slots per node kind, and the pool range by range with how many
// addresses are free, allocated or reserved. Add a location (POST locations) or a range to a
// location's pool (POST ip-ranges: network, broadcast and gateway excluded; a range another
// location holds adds nothing), or close a location to new orders (its services keep running) and
// reopen it (POST locations {action: close|open}, after a confirmation), each with an optional
// reason kept in the audit log.

import { useMutation, useQuery } from '@tanstack/react-query';
import { useState } from 'react';
import {
  Alert,
  Button,
  Empty,
  ErrorAlert,
  fieldError,
  Loading,
  PageHeader,
  SelectField,
  TextField,
} from '../components/ui.tsx';
import { useStaffTitle } from './AuthPages.tsx';
import { call, staffApi } from './api.ts';
import { ActionDialog, formFields, OnOffDialog, ReasonField, useActionDialog } from './Dialog.tsx';
import { ForbiddenOr } from './Forbidden.tsx';
import { StaffTable } from './StaffTable.tsx';

const LOCATIONS_KEY = ['staff', 'locations'] as const;
const RANGES_KEY = ['staff', 'ip-ranges'] as const;

interface Place {
  code: string;
  name: string;
  active: boolean;
}

export default function LocationsPage() {
  useStaffTitle('Locations and IP ranges');
  const locations = useQuery({
    queryKey: LOCATIONS_KEY,
    queryFn: async () => (await call(staffApi.GET('/api/v1/staff/locations'))).locations,
  });
  const ranges = useQuery({
    queryKey: RANGES_KEY,
    queryFn: async () => (await call(staffApi.GET('/api/v1/staff/ip-ranges'))).ranges,
  });
  const dialog = useActionDialog<'location' | 'range'>(LOCATIONS_KEY, RANGES_KEY);
  // Closing a location to new orders, or reopening it.
  const closing = useActionDialog<Place>(LOCATIONS_KEY);

  return (
    <ForbiddenOr error={locations.error ?? ranges.error}>
      <PageHeader title="Locations and IP ranges" />
      {dialog.done ? <Alert kind="success">{dialog.done}</Alert> : null}
      {closing.done ? <Alert kind="success">{closing.done}</Alert> : null}
      <section aria-labelledby="locations-title">
        <div className="staff-section-head">
          <h2 id="locations-title">Locations</h2>
          <Button variant="secondary" onClick={() => dialog.ask('location')}>
            Add a location
          </Button>
        </div>
        {locations.isPending ? (
          <Loading what="Loading the locations" />
        ) : locations.isError ? (
          <ErrorAlert error={locations.error} />
        ) : locations.data.length === 0 ? (
          <Empty title="No locations">Add the first one.</Empty>
        ) : (
          <StaffTable
            caption="Every location"
            columns={['Location', 'Where', 'Open', { label: 'Free IPv4', num: true }, 'Free slots', 'Action']}
          >
            {locations.data.map((l) => (
              <tr key={l.id}>
                <td data-label="Location" className="staff-wrap">
                  <strong>{l.name}</strong>
                  <div className="muted mono">{l.code}</div>
                </td>
                <td data-label="Where">
                  {l.city}, {l.country}
                </td>
                <td data-label="Open">{l.active ? 'yes' : 'closed'}</td>
                <td data-label="Free IPv4" className="num">
                  {l.ipv4_free}
                </td>
                <td data-label="Free slots" className="staff-wrap">
                  {Object.entries(l.slots)
                    .map(([kind, n]) => `${kind} ${n}`)
                    .join(', ') || 'no usable node'}
                </td>
                <td data-label="Action">
                  <Button
                    variant={l.active ? 'danger' : 'secondary'}
                    aria-label={`${l.active ? 'Close' : 'Reopen'} ${l.code}`}
                    onClick={() => {
                      dialog.close();
                      closing.ask(l);
                    }}
                  >
                    {l.active ? 'Close' : 'Reopen'}
                  </Button>
                </td>
              </tr>
            ))}
          </StaffTable>
        )}
      </section>

      <section aria-labelledby="ranges-title">
        <div className="staff-section-head">
          <h2 id="ranges-title">IPv4 ranges</h2>
          <Button variant="secondary" onClick={() => dialog.ask('range')} disabled={!locations.data?.length}>
            Add a range
          </Button>
        </div>
        {ranges.isPending ? (
          <Loading what="Loading the IPv4 pool" />
        ) : ranges.isError ? (
          <ErrorAlert error={ranges.error} />
        ) : ranges.data.length === 0 ? (
          <Empty title="No IPv4 ranges">Virtual servers need a free address: add a range to a location.</Empty>
        ) : (
          <StaffTable
            caption="The IPv4 pool by range"
            columns={[
              'Location',
              'Range',
              'Gateway',
              { label: 'Free', num: true },
              { label: 'Allocated', num: true },
              { label: 'Reserved', num: true },
            ]}
          >
            {ranges.data.map((r) => (
              <tr key={`${r.location}-${r.cidr}-${r.gateway}`}>
                <td data-label="Location" className="mono">
                  {r.location}
                </td>
                <td data-label="Range" className="mono">
                  {r.cidr}
                </td>
                <td data-label="Gateway" className="mono">
                  {r.gateway}
                </td>
                <td data-label="Free" className="num">
                  {r.free}
                </td>
                <td data-label="Allocated" className="num">
                  {r.allocated}
                </td>
                <td data-label="Reserved" className="num">
                  {r.reserved}
                </td>
              </tr>
            ))}
          </StaffTable>
        )}
      </section>
      {dialog.open === 'location' ? <AddLocation onClose={dialog.close} onDone={dialog.finish} /> : null}
      {closing.open ? <CloseLocation place={closing.open} onClose={closing.close} onDone={closing.finish} /> : null}
      {dialog.open === 'range' && locations.data ? (
        <AddRange codes={locations.data.map((l) => l.code)} onClose={dialog.close} onDone={dialog.finish} />
      ) : null}
    </ForbiddenOr>
  );
}

function AddLocation({ onClose, onDone }: { onClose: () => void; onDone: (message: string) => Promise<void> }) {
  const [form, setForm] = useState({ code: '', name: '', city: '', country: 'IN' });
  const [reason, setReason] = useState('');
  const add = useMutation({
    mutationFn: () =>
      call(
        staffApi.POST('/api/v1/staff/locations', {
          body: {
            action: 'add',
            code: form.code.trim(),
            name: form.name.trim(),
            city: form.city.trim(),
            ...(form.country.trim() ? { country: form.country.trim().toUpperCase() } : {}),
            ...(reason.trim() ? { reason: reason.trim() } : {}),
          },
        }),
      ),
    onSuccess: (data) => onDone(data.message),
  });
  const field = formFields(form, setForm, add.error);
  return (
    <ActionDialog
      title="Add a location"
      submitLabel="Add the location"
      busy={add.isPending}
      error={add.error}
      fields={['code', 'name', 'city', 'country', 'reason']}
      onSubmit={() => add.mutate()}
      onClose={onClose}
    >
      <p>A new zone. Plans are offered there once they list it; orders need a node and IPv4 addresses there.</p>
      {field('code', 'Code (a–z, 0–9, "-")', { placeholder: 'e.g. mum2', maxLength: 32 })}
      {field('name', 'Name', { placeholder: 'e.g. Mumbai 2', maxLength: 100 })}
      {field('city', 'City', { maxLength: 100 })}
      {field('country', 'Country (ISO code)', { maxLength: 2 })}
      <ReasonField
        label="Reason (optional; kept in the audit log)"
        value={reason}
        onChange={setReason}
        error={add.error}
      />
    </ActionDialog>
  );
}

function AddRange({
  codes,
  onClose,
  onDone,
}: {
  codes: string[];
  onClose: () => void;
  onDone: (message: string) => Promise<void>;
}) {
  const [location, setLocation] = useState(codes[0] ?? '');
  const [cidr, setCidr] = useState('');
  const [gateway, setGateway] = useState('');
  const [reason, setReason] = useState('');
  const add = useMutation({
    mutationFn: () =>
      call(
        staffApi.POST('/api/v1/staff/ip-ranges', {
          body: {
            action: 'add',
            location,
            cidr: cidr.trim(),
            ...(gateway.trim() ? { gateway: gateway.trim() } : {}),
            ...(reason.trim() ? { reason: reason.trim() } : {}),
          },
        }),
      ),
    onSuccess: (data) => onDone(data.message),
  });
  return (
    <ActionDialog
      title="Add an IPv4 range"
      submitLabel="Add the range"
      busy={add.isPending}
      error={add.error}
      fields={['location', 'cidr', 'gateway', 'reason']}
      onSubmit={() => add.mutate()}
      onClose={onClose}
    >
      <p>Every host of the range joins the location's pool, but the network, broadcast and gateway addresses.</p>
      <SelectField
        label="Location"
        value={location}
        onChange={(e) => setLocation(e.target.value)}
        error={fieldError(add.error, 'location')}
      >
        {codes.map((code) => (
          <option key={code} value={code}>
            {code}
          </option>
        ))}
      </SelectField>
      <TextField
        label="Range (CIDR, /20 to /30)"
        placeholder="e.g. 203.0.113.0/26"
        autoComplete="off"
        value={cidr}
        onChange={(e) => setCidr(e.target.value)}
        error={fieldError(add.error, 'cidr')}
      />
      <TextField
        label="Gateway (empty: the first host)"
        autoComplete="off"
        value={gateway}
        onChange={(e) => setGateway(e.target.value)}
        error={fieldError(add.error, 'gateway')}
      />
      <ReasonField
        label="Reason (optional; kept in the audit log)"
        value={reason}
        onChange={setReason}
        error={add.error}
      />
    </ActionDialog>
  );
}

/** Close a location to new orders (or reopen it), after a confirmation. */
function CloseLocation({
  place,
  onClose,
  onDone,
}: {
  place: Place;
  onClose: () => void;
  onDone: (message: string) => Promise<void>;
}) {
  const closing = place.active;
  return (
    <OnOffDialog
      off={closing}
      title={closing ? `Close ${place.code} to new orders?` : `Reopen ${place.code}?`}
      submitLabel={closing ? 'Close the location' : 'Reopen it'}
      text={
        closing
          ? `No new orders in ${place.name}: the catalog shows it closed. Services already there keep running.`
          : `${place.name} takes new orders again.`
      }
      send={(reason) =>
        call(
          staffApi.POST('/api/v1/staff/locations', {
            body: { action: closing ? 'close' : 'open', code: place.code, ...(reason ? { reason } : {}) },
          }),
        )
      }
      onClose={onClose}
      onDone={onDone}
    />
  );
}

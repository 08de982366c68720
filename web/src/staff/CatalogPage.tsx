// The catalog (admin; GET plans): every plan, listed or not, with its monthly price and regions.
// Editing a plan (POST plans {action: update}) changes its price — for new orders and plan changes
// to it; running services keep the price they were sold at — and whether it is listed and sold.

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
import { rupees } from '../lib/format.ts';
import { useStaffTitle } from './AuthPages.tsx';
import { call, staffApi } from './api.ts';
import { ActionDialog, paiseOf, ReasonField, useActionDialog } from './Dialog.tsx';
import { ForbiddenOr } from './Forbidden.tsx';
import { StaffTable } from './StaffTable.tsx';

const PLANS_KEY = ['staff', 'plans'] as const;

interface Plan {
  id: number;
  label: string;
  name: string;
  type: string;
  price_paise: number;
  price: string;
  active: boolean;
  regions: string[];
}

export default function CatalogPage() {
  useStaffTitle('Catalog');
  const plans = useQuery({
    queryKey: PLANS_KEY,
    queryFn: async () => (await call(staffApi.GET('/api/v1/staff/plans'))).plans,
  });
  const dialog = useActionDialog<Plan>(PLANS_KEY);

  return (
    <ForbiddenOr error={plans.error}>
      <PageHeader title="Catalog" />
      <p className="muted">
        A new price applies to new orders and plan changes; running services keep the price they were sold at.
      </p>
      {dialog.done ? <Alert kind="success">{dialog.done}</Alert> : null}
      {plans.isPending ? (
        <Loading what="Loading the plans" />
      ) : plans.isError ? (
        <ErrorAlert error={plans.error} />
      ) : plans.data.length === 0 ? (
        <Empty title="No plans">The catalog is empty.</Empty>
      ) : (
        <StaffTable
          caption="Every plan"
          columns={['Plan', 'Regions', { label: 'Price a month', num: true }, 'Listed', 'Action']}
        >
          {plans.data.map((p) => (
            <tr key={p.id}>
              <td data-label="Plan" className="staff-wrap">
                <strong>{p.name}</strong>
                <div className="muted">
                  <span className="mono">{p.label}</span> · {p.type}
                </div>
              </td>
              <td data-label="Regions">{p.regions.join(', ') || '—'}</td>
              <td data-label="Price" className="num">
                {rupees(p.price)}
              </td>
              <td data-label="Listed">{p.active ? 'yes' : 'no'}</td>
              <td data-label="Action">
                <Button variant="secondary" aria-label={`Edit ${p.label}`} onClick={() => dialog.ask(p)}>
                  Edit
                </Button>
              </td>
            </tr>
          ))}
        </StaffTable>
      )}
      {dialog.open ? (
        <EditPlan
          plan={dialog.open}
          onClose={dialog.close}
          onDone={(plan) =>
            dialog.finish(`${plan.label}: ${rupees(plan.price)} a month, ${plan.active ? 'listed' : 'not listed'}.`)
          }
        />
      ) : null}
    </ForbiddenOr>
  );
}

function EditPlan({ plan, onClose, onDone }: { plan: Plan; onClose: () => void; onDone: (plan: Plan) => void }) {
  const [price, setPrice] = useState(plan.price);
  const [active, setActive] = useState(plan.active);
  const [reason, setReason] = useState('');
  const [local, setLocal] = useState<string | undefined>();
  const [unchanged, setUnchanged] = useState(false);
  const change = useMutation({
    mutationFn: (body: { action: 'update'; id: number; price_paise?: number; active?: boolean; reason?: string }) =>
      call(staffApi.POST('/api/v1/staff/plans', { body })),
    onSuccess: (data) => onDone(data.plan),
  });
  const submit = () => {
    const paise = paiseOf(price);
    if (paise === null) {
      setLocal('Enter the monthly price in rupees, e.g. 499.00.');
      return;
    }
    const body = {
      action: 'update' as const,
      id: plan.id,
      ...(paise !== plan.price_paise ? { price_paise: paise } : {}),
      ...(active !== plan.active ? { active } : {}),
      ...(reason.trim() ? { reason: reason.trim() } : {}),
    };
    setLocal(undefined);
    setUnchanged(body.price_paise === undefined && body.active === undefined);
    if (body.price_paise === undefined && body.active === undefined) return;
    change.mutate(body);
  };
  return (
    <ActionDialog
      title={`Edit ${plan.label}`}
      submitLabel="Save the plan"
      busy={change.isPending}
      error={unchanged ? new Error('Nothing changed: give a new price or change the listing.') : change.error}
      fields={['price_paise', 'reason']}
      onSubmit={submit}
      onClose={onClose}
    >
      <p>{plan.name}</p>
      <TextField
        label="Price a month, in rupees"
        inputMode="decimal"
        autoComplete="off"
        value={price}
        onChange={(e) => setPrice(e.target.value)}
        error={local ?? fieldError(change.error, 'price_paise')}
      />
      <Checkbox label="Listed and sold" checked={active} onChange={(e) => setActive(e.target.checked)} />
      <ReasonField
        label="Reason (optional; kept in the audit log)"
        value={reason}
        onChange={setReason}
        error={change.error}
      />
    </ActionDialog>
  );
}

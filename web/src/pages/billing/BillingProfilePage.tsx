// Billing details (CONTRACT §12): the name, address, GST state and optional GSTIN the account's
// tax invoices are made out to. The state is chosen from the GST states the server lists (the
// same answer carries the profile); what the server refuses is shown beside the field it names,
// and the first such field gets the focus. Invoices copy the details when issued, so a change
// applies to the next invoice only: the page says so.

import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { type FormEvent, useEffect, useRef, useState } from 'react';
import { Link } from 'react-router';
import { useTitle } from '../../components/Layout.tsx';
import {
  Alert,
  Button,
  ErrorAlert,
  fieldError,
  Loading,
  PageHeader,
  SelectField,
  TextField,
} from '../../components/ui.tsx';
import { ApiError, api, unwrap } from '../../lib/api.ts';
import { when } from '../../lib/format.ts';
import { AccountTabs } from '../account/AccountPage.tsx';
import '../dashboard/pages.css';
import './billing.css';

export const PROFILE_KEY = ['billing-profile'] as const;

type Fields = {
  legal_name: string;
  address_line1: string;
  address_line2: string;
  city: string;
  state_code: string;
  pincode: string;
  gstin: string;
};
type FieldName = keyof Fields;
const FIELD_ORDER: FieldName[] = [
  'legal_name',
  'address_line1',
  'address_line2',
  'city',
  'state_code',
  'pincode',
  'gstin',
];
const LABELS: Record<FieldName, string> = {
  legal_name: 'Legal name',
  address_line1: 'Address line 1',
  address_line2: 'Address line 2 (optional)',
  city: 'City',
  state_code: 'State',
  pincode: 'PIN code',
  gstin: 'GSTIN (optional)',
};
const EMPTY: Fields = {
  legal_name: '',
  address_line1: '',
  address_line2: '',
  city: '',
  state_code: '',
  pincode: '',
  gstin: '',
};

export function useBillingProfile() {
  return useQuery({
    queryKey: PROFILE_KEY,
    queryFn: () => unwrap(api.GET('/api/v1/client/account/billing-profile/')),
  });
}

export default function BillingProfilePage() {
  useTitle('Billing details');
  const query = useBillingProfile();
  return (
    <div className="acct">
      <PageHeader title="Account" />
      <AccountTabs />
      {query.isPending ? <Loading what="Loading your billing details" /> : null}
      {query.isError ? <ErrorAlert error={query.error} /> : null}
      {query.data ? <ProfileForm data={query.data} /> : null}
    </div>
  );
}

type Answer = NonNullable<ReturnType<typeof useBillingProfile>['data']>;

function ProfileForm({ data }: { data: Answer }) {
  const client = useQueryClient();
  const saved = data.profile;
  const fromSaved = (): Fields =>
    saved
      ? {
          legal_name: saved.legal_name,
          address_line1: saved.address_line1,
          address_line2: saved.address_line2 ?? '',
          city: saved.city,
          state_code: saved.state_code,
          pincode: saved.pincode,
          gstin: saved.gstin ?? '',
        }
      : EMPTY;
  const [values, setValues] = useState<Fields>(fromSaved);
  const [edited, setEdited] = useState<Set<FieldName>>(new Set());
  const form = useRef<HTMLFormElement>(null);
  const stateName = (code: string) => data.states.find((s) => s.code === code)?.name;

  const save = useMutation({
    mutationFn: () =>
      unwrap(
        api.POST('/api/v1/client/account/billing-profile/', {
          body: {
            legal_name: values.legal_name,
            address_line1: values.address_line1,
            address_line2: values.address_line2.trim() === '' ? null : values.address_line2,
            city: values.city,
            state_code: values.state_code,
            pincode: values.pincode.replace(/\s/g, ''),
            gstin: values.gstin.trim() === '' ? null : values.gstin,
          },
        }),
      ),
    onSuccess: (answer) => {
      client.setQueryData(PROFILE_KEY, { ...data, profile: answer.profile });
      setEdited(new Set());
    },
  });

  // After a refusal, the first field the server named gets the focus.
  useEffect(() => {
    if (save.isError) form.current?.querySelector<HTMLElement>('[aria-invalid="true"]')?.focus();
  }, [save.isError]);

  function message(name: FieldName): string | undefined {
    if (edited.has(name)) return undefined;
    const reason = fieldError(save.error, name);
    if (!reason) return undefined;
    // The GSTIN's "starts with state code 29, but the state is 27": the codes with their names.
    const named =
      name === 'gstin'
        ? reason.replace(/\b(\d\d)\b/g, (code) => {
            const state = stateName(code);
            return state ? `${code} (${state})` : code;
          })
        : reason;
    return `${LABELS[name].replace(' (optional)', '')} ${named}.`;
  }

  function set(name: FieldName, value: string) {
    setValues((v) => ({ ...v, [name]: value }));
    setEdited((e) => new Set(e).add(name));
    if (save.isSuccess) save.reset();
  }

  function submit(event: FormEvent) {
    event.preventDefault();
    if (save.isPending) return;
    setEdited(new Set());
    save.mutate();
  }

  const changed = FIELD_ORDER.some((name) => values[name] !== fromSaved()[name]);
  const gstinWithoutState = values.gstin.trim() !== '' && values.state_code === '';

  return (
    <div className="grid two acct-grid billing-grid">
      <section className="card" aria-labelledby="billing-title">
        <h2 id="billing-title">Billing details</h2>
        <p className="muted">
          Your tax invoices are made out to these details, and your state decides how GST is split (CGST + SGST in the
          seller's state, IGST elsewhere). A business registered for GST adds its GSTIN to claim the input tax credit.
        </p>
        {saved === null ? (
          <Alert kind="info">
            <p>
              You have not set billing details yet. Until you do, invoices carry your account name and no address or
              GSTIN.
            </p>
          </Alert>
        ) : null}
        <form ref={form} onSubmit={submit} noValidate className="acct-form billing-form">
          <TextField
            label={LABELS.legal_name}
            name="legal_name"
            value={values.legal_name}
            onChange={(e) => set('legal_name', e.target.value)}
            autoComplete="organization"
            maxLength={100}
            required
            error={message('legal_name')}
            hint="Your own name, or your business's registered name: 2–100 characters."
          />
          <TextField
            label={LABELS.address_line1}
            name="address_line1"
            value={values.address_line1}
            onChange={(e) => set('address_line1', e.target.value)}
            autoComplete="address-line1"
            maxLength={120}
            required
            error={message('address_line1')}
          />
          <TextField
            label={LABELS.address_line2}
            name="address_line2"
            value={values.address_line2}
            onChange={(e) => set('address_line2', e.target.value)}
            autoComplete="address-line2"
            maxLength={120}
            error={message('address_line2')}
          />
          <div className="billing-pair">
            <TextField
              label={LABELS.city}
              name="city"
              value={values.city}
              onChange={(e) => set('city', e.target.value)}
              autoComplete="address-level2"
              maxLength={60}
              required
              error={message('city')}
            />
            <TextField
              label={LABELS.pincode}
              name="pincode"
              value={values.pincode}
              onChange={(e) => set('pincode', e.target.value)}
              autoComplete="postal-code"
              inputMode="numeric"
              maxLength={7}
              required
              error={message('pincode')}
              hint="6 digits"
            />
          </div>
          <SelectField
            label={LABELS.state_code}
            name="state_code"
            value={values.state_code}
            onChange={(e) => set('state_code', e.target.value)}
            autoComplete="address-level1"
            required
            error={message('state_code')}
          >
            <option value="">Choose your state or union territory</option>
            {data.states.map((s) => (
              <option key={s.code} value={s.code}>
                {s.name}
              </option>
            ))}
          </SelectField>
          <TextField
            label={LABELS.gstin}
            name="gstin"
            value={values.gstin}
            onChange={(e) => set('gstin', e.target.value.toUpperCase())}
            autoComplete="off"
            autoCapitalize="characters"
            spellCheck={false}
            maxLength={15}
            className="mono"
            error={message('gstin')}
            hint={
              gstinWithoutState
                ? 'Choose the state first: a GSTIN begins with its state code.'
                : `15 characters, as on your GST registration, beginning with your state's code${values.state_code ? ` (${values.state_code})` : ''}. Leave it empty if you are not registered.`
            }
          />
          <ErrorAlert error={save.error} fields={FIELD_ORDER} />
          {save.error instanceof ApiError && Object.keys(save.error.errors).length > 0 ? (
            <p className="sr-only" role="alert">
              {Object.keys(save.error.errors).length === 1
                ? 'One field needs a change; it is marked.'
                : `${Object.keys(save.error.errors).length} fields need a change; they are marked.`}
            </p>
          ) : null}
          {save.isSuccess ? (
            <Alert kind="success">
              <p>Billing details saved. Your next invoice uses them; invoices already issued stay as they were.</p>
            </Alert>
          ) : null}
          <div className="row">
            <Button type="submit" busy={save.isPending} disabled={!changed && saved !== null}>
              {saved === null ? 'Save billing details' : 'Save changes'}
            </Button>
          </div>
        </form>
      </section>

      <section className="card" aria-labelledby="billing-saved-title">
        <h2 id="billing-saved-title">On your invoices</h2>
        {saved ? (
          <>
            <address className="billing-address">
              <strong>{saved.legal_name}</strong>
              <span>{saved.address_line1}</span>
              {saved.address_line2 ? <span>{saved.address_line2}</span> : null}
              <span>
                {saved.city} {saved.pincode}
              </span>
              <span>
                {saved.state_name} (state code {saved.state_code})
              </span>
              {saved.gstin ? (
                <span>
                  GSTIN <span className="mono">{saved.gstin}</span>
                </span>
              ) : (
                <span className="muted">No GSTIN: invoices are for an unregistered buyer (B2C).</span>
              )}
            </address>
            <p className="muted">Last changed {when(saved.updated_at)}.</p>
          </>
        ) : (
          <p className="muted">Nothing saved yet.</p>
        )}
        <p>
          <Link to="/invoices">See your invoices</Link>
        </p>
      </section>
    </div>
  );
}

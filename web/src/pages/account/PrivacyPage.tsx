// Account → Privacy (CONTRACT §11): download a copy of everything we keep about the account (an
// export is built in the background, mailed about, and downloadable here for 24 hours; one an
// hour), and delete the account: confirmed with the password, refused with what to settle first
// (each reason as the server words it, with a link to where it is settled), scheduled 7 days ahead
// with the date shown and a cancel button. What is erased and what is kept (and why) is said before
// anything is asked.

import type { paths } from '@hostplane/sdk/schema';
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { type FormEvent, useState } from 'react';
import { Link } from 'react-router';
import { useCancelDeletion } from '../../components/DeletionBanner.tsx';
import { useTitle } from '../../components/Layout.tsx';
import {
  Alert,
  Button,
  Checkbox,
  Empty,
  ErrorAlert,
  fieldError,
  Loading,
  PageHeader,
  Status,
  TextField,
} from '../../components/ui.tsx';
import { ApiError, api, unwrap } from '../../lib/api.ts';
import { bytes, when } from '../../lib/format.ts';
import { type Account, useAccount, useSetAccount } from '../../lib/session.tsx';
import { AccountTabs } from './AccountPage.tsx';
import '../dashboard/pages.css';
import './privacy.css';

const EXPORTS_KEY = ['account', 'exports'] as const;
/** One export an hour (the server decides; this only says when). */
const EXPORT_INTERVAL_MS = 3600 * 1000;

/** An export as the API shows it (the answer of POST account/export/). */
type Export =
  paths['/api/v1/client/account/export/']['post']['responses'][202]['content']['application/json']['export'];

async function fetchExports(): Promise<Export[]> {
  // The same GET answers the archive itself with ?id=: without it, always the list.
  const data = await unwrap(api.GET('/api/v1/client/account/export/'));
  if (!('exports' in data) || !Array.isArray(data.exports)) {
    throw new Error('The server answered with something else than the list of exports.');
  }
  return data.exports as Export[];
}

export default function PrivacyPage() {
  useTitle('Privacy');
  const account = useAccount();
  return (
    <div className="acct">
      <PageHeader title="Account" />
      <AccountTabs />
      <p className="acct-intro">
        Take a copy of everything we keep about you, or close your account for good. Both are yours to do at any time.
      </p>
      {account.data ? (
        <div className="grid two acct-grid">
          <ExportCard />
          <DeleteCard account={account.data} />
        </div>
      ) : (
        <Loading what="Loading your account" />
      )}
    </div>
  );
}

function ExportCard() {
  const client = useQueryClient();
  const [proofs, setProofs] = useState(false);
  const exports = useQuery({
    queryKey: EXPORTS_KEY,
    queryFn: fetchExports,
    // While one is being built, look again every few seconds.
    refetchInterval: (query) =>
      (query.state.data ?? []).some((e) => e.status === 'queued' || e.status === 'building') ? 3000 : false,
  });
  const request = useMutation({
    mutationFn: () =>
      unwrap(api.POST('/api/v1/client/account/export/', { body: proofs ? { include_proofs: true } : {} })),
    onSuccess: () => client.invalidateQueries({ queryKey: EXPORTS_KEY }),
  });
  const submit = (event: FormEvent) => {
    event.preventDefault();
    request.mutate();
  };
  const limited = request.error instanceof ApiError && request.error.code === 'rate_limited';
  const list = exports.data ?? [];
  const building = list.some((e) => e.status === 'queued' || e.status === 'building');
  // One an hour (failed ones do not count): the list is newest first.
  const latest = list.find((e) => e.status !== 'failed');
  const nextAt = latest ? Date.parse(latest.created_at) + EXPORT_INTERVAL_MS : 0;
  const waiting = nextAt > Date.now();
  return (
    <section className="card" aria-labelledby="priv-export">
      <h2 id="priv-export">Download your data</h2>
      <p>
        One JSON file with your profile, billing details, services, orders, invoices and credit notes, wallet history,
        deposits, API tokens and SSH keys, sessions, notifications and the mail we sent you. Passwords, token secrets
        and server passwords are never in it.
      </p>
      <p className="hint">
        We build it in the background and e-mail you when it is ready. It can be downloaded here, while you are signed
        in, for 24 hours. You can ask for one export an hour.
      </p>
      <form onSubmit={submit} noValidate className="acct-form">
        <Checkbox
          label="Include payment proof files"
          checked={proofs}
          onChange={(e) => setProofs(e.target.checked)}
          hint="The screenshots you uploaded with deposits, inside the file (it gets larger)."
        />
        {limited ? (
          <Alert kind="warning">
            <p>{request.error?.message}</p>
          </Alert>
        ) : (
          <ErrorAlert error={request.error} />
        )}
        {request.isSuccess && building ? (
          <Alert kind="success">
            <p>{request.data.message}</p>
          </Alert>
        ) : null}
        <div className="row">
          <Button
            type="submit"
            busy={request.isPending}
            disabled={waiting}
            aria-describedby={waiting ? 'priv-next' : undefined}
          >
            Request export
          </Button>
          {waiting ? (
            <span className="hint" id="priv-next">
              You can ask for the next export after {when(new Date(nextAt).toISOString())}.
            </span>
          ) : null}
        </div>
      </form>
      <h3 className="priv-sub">Your exports</h3>
      {exports.isPending ? (
        <Loading what="Loading your exports" />
      ) : exports.isError ? (
        <ErrorAlert error={exports.error} />
      ) : list.length === 0 ? (
        <Empty title="No export yet">
          <p>Request one above.</p>
        </Empty>
      ) : (
        <ul className="priv-exports">
          {list.map((e) => (
            <ExportRow key={e.id} item={e} />
          ))}
        </ul>
      )}
    </section>
  );
}

const STATE_WORDS: Record<Export['status'], string> = {
  queued: 'Waiting to be built…',
  building: 'Being built…',
  ready: '',
  failed: 'We could not build this one. Ask for another; if it fails again, contact support.',
  expired: 'No longer available: exports are kept 24 hours. Ask for a new one.',
};

function ExportRow({ item }: { item: Export }) {
  return (
    <li className="priv-export">
      <div className="priv-export-head">
        <span>
          Requested {when(item.created_at)}
          {item.include_proofs ? ', with proof files' : ''}
        </span>
        <Status value={item.status} />
      </div>
      {item.status === 'ready' && item.download_url ? (
        <div className="priv-export-ready">
          <a className="btn btn-secondary" href={item.download_url} download>
            Download ({bytes(item.bytes)})
          </a>
          <span className="hint">Available until {when(item.expires_at)}</span>
        </div>
      ) : (
        <p className="hint">{STATE_WORDS[item.status]}</p>
      )}
    </li>
  );
}

/** Where each reason the server gives is settled. */
const SETTLE_AT: Record<string, { to: string; label: string }> = {
  services: { to: '/services', label: 'Go to your services' },
  unpaid_orders: { to: '/', label: 'See unpaid orders on the dashboard' },
  pending_deposits: { to: '/wallet', label: 'See your deposits' },
  wallet_balance: { to: '/wallet', label: 'See your wallet' },
};

interface Reason {
  code: string;
  message: string;
}

function reasonsOf(error: unknown): Reason[] {
  if (!(error instanceof ApiError) || error.code !== 'deletion_blocked') return [];
  const reasons = error.details.reasons;
  return Array.isArray(reasons) ? (reasons as Reason[]) : [];
}

function DeleteCard({ account }: { account: NonNullable<Account> }) {
  const setAccount = useSetAccount();
  const cancel = useCancelDeletion();
  const [open, setOpen] = useState(false);
  const [password, setPassword] = useState('');
  const remove = useMutation({
    mutationFn: () => unwrap(api.POST('/api/v1/client/account/', { body: { action: 'delete', password } })),
    onSuccess: (data) => {
      setPassword('');
      setOpen(false);
      setAccount(data.account);
    },
  });
  const submit = (event: FormEvent) => {
    event.preventDefault();
    remove.mutate();
  };
  const reasons = reasonsOf(remove.error);
  const scheduled = account.deletion_scheduled_for;
  return (
    <section className="card priv-delete" aria-labelledby="priv-delete">
      <h2 id="priv-delete">Delete your account</h2>
      {scheduled ? (
        <>
          <Alert kind="warning">
            <p>
              <strong>Your account will be deleted on {when(scheduled)}.</strong> Until then you can change your mind:
              cancel here, or simply sign in again.
            </p>
          </Alert>
          <ErrorAlert error={cancel.error} />
          <div className="row">
            <Button busy={cancel.isPending} onClick={() => cancel.mutate()}>
              Cancel deletion
            </Button>
          </div>
        </>
      ) : null}
      <h3 className="priv-sub">What we erase</h3>
      <p>
        Your name, e-mail address and username, your password and two-factor settings, sessions, API tokens, SSH keys,
        billing details, payment proof files, notifications and the mail we sent you. You will not be able to sign in
        again, and your e-mail address can be used for a new account.
      </p>
      <h3 className="priv-sub">What we keep, and why</h3>
      <p>
        Indian tax law (CGST Act, section 36) requires us to keep tax invoices and credit notes for 8 years, exactly as
        they were issued, with the name and address they were made out to. We also keep your orders and wallet history
        (the amounts only) so the accounts add up. None of it lets anyone sign in.
      </p>
      {scheduled ? null : (
        <>
          <h3 className="priv-sub">Before you delete</h3>
          <ul className="priv-before">
            <li>Terminate your services (each service's page, "Request termination…").</li>
            <li>Pay any unpaid orders, and wait for deposits under review.</li>
            <li>Ask support to refund what is left in your wallet: we refund money, we never delete it.</li>
            <li>Download your data first if you want a copy: after the deletion we cannot send it.</li>
          </ul>
          {reasons.length > 0 ? (
            <div className="alert alert-warning" role="alert">
              <p>
                <strong>Your account cannot be deleted yet.</strong> Settle these first:
              </p>
              <ul>
                {reasons.map((r) => (
                  <li key={r.code}>
                    {r.message}{' '}
                    {SETTLE_AT[r.code] ? (
                      <Link to={SETTLE_AT[r.code]?.to ?? '/'}>{SETTLE_AT[r.code]?.label}</Link>
                    ) : null}
                  </li>
                ))}
              </ul>
            </div>
          ) : null}
          {!open ? (
            <div className="row">
              <Button variant="danger" onClick={() => setOpen(true)}>
                Delete my account…
              </Button>
            </div>
          ) : (
            <form onSubmit={submit} noValidate className="acct-form confirm">
              <p>
                We will erase your account <strong>7 days</strong> after you confirm, and e-mail you the date. Signing
                in before then cancels it.
              </p>
              <TextField
                label="Your password"
                type="password"
                value={password}
                onChange={(e) => setPassword(e.target.value)}
                autoComplete="current-password"
                required
                error={fieldError(remove.error, 'password')}
              />
              {reasons.length === 0 ? <ErrorAlert error={remove.error} fields={['password']} /> : null}
              <div className="row">
                <Button type="submit" variant="danger" busy={remove.isPending} disabled={password === ''}>
                  Delete my account in 7 days
                </Button>
                <Button
                  variant="secondary"
                  onClick={() => {
                    setOpen(false);
                    setPassword('');
                    remove.reset();
                  }}
                >
                  Keep my account
                </Button>
              </div>
            </form>
          )}
        </>
      )}
    </section>
  );
}

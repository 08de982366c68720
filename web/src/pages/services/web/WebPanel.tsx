// Web hosting management (spec 4.10, CONTRACT §6), shown inside the service page for a web
// service: a one-click "Open cPanel" (a one-time sign-in link opened in a new tab, never kept),
// then the sections as keyboard-usable tabs (arrow keys, Home, End), the chosen one in the URL
// (?section=) so it survives a reload and can be linked. Only the open section asks the panel.

import { type KeyboardEvent, useId, useRef, useState } from 'react';
import { Link, useSearchParams } from 'react-router';
import { Alert, Button, ErrorAlert, Loading } from '../../../components/ui.tsx';
import { ApiError, api, unwrap } from '../../../lib/api.ts';
import { DatabasesSection } from './DatabasesSection.tsx';
import { ActivitySection, DnsSection, OverviewSection, UsageSection } from './InfoSections.tsx';
import { MailSection } from './MailSection.tsx';
import { HttpsSection, PasswordSection, PhpSection } from './SiteSections.tsx';
import { BLOCKING_CODES, useWeb, type WebAccount } from './webApi.ts';
import './web.css';

const SECTIONS = [
  { id: 'overview', label: 'Overview' },
  { id: 'databases', label: 'Databases' },
  { id: 'mail', label: 'Email' },
  { id: 'php', label: 'PHP' },
  { id: 'https', label: 'HTTPS' },
  { id: 'usage', label: 'Usage' },
  { id: 'dns', label: 'DNS' },
  { id: 'password', label: 'Password' },
  { id: 'activity', label: 'Activity' },
] as const;

type SectionId = (typeof SECTIONS)[number]['id'];

function isSection(value: string | null): value is SectionId {
  return SECTIONS.some((s) => s.id === value);
}

export default function WebPanel({ serviceId }: { serviceId: number }) {
  const overview = useWeb(serviceId, 'overview', {
    // While the account is still being created, look again every 5 s.
    refetchInterval: (_data, error) =>
      error instanceof ApiError && error.code !== 'suspended' && BLOCKING_CODES.includes(error.code) ? 5000 : false,
  });
  const blocked =
    overview.error instanceof ApiError && BLOCKING_CODES.includes(overview.error.code) ? overview.error : null;

  return (
    <div className="web-panel">
      <CpanelButton serviceId={serviceId} disabled={blocked !== null} domain={overview.data?.account.domain} />
      {overview.isPending ? <Loading what="Loading the hosting account" /> : null}
      {blocked ? <Blocked error={blocked} onRetry={() => overview.refetch()} /> : null}
      {overview.isError && !blocked ? (
        <div className="web-section">
          <ErrorAlert error={overview.error} />
          <div className="row">
            <Button variant="secondary" busy={overview.isFetching} onClick={() => overview.refetch()}>
              Try again
            </Button>
          </div>
        </div>
      ) : null}
      {overview.data ? <Sections serviceId={serviceId} account={overview.data.account} /> : null}
      {blocked ? <ActivitySection serviceId={serviceId} /> : null}
    </div>
  );
}

function Blocked({ error, onRetry }: { error: ApiError; onRetry: () => void }) {
  const suspended = error.code === 'suspended';
  const settingUp = !suspended && (error.code !== 'no_panel_user' || /being created/.test(error.message));
  return (
    <div className="web-section">
      <Alert kind={settingUp ? 'info' : 'warning'}>
        {suspended ? (
          <>
            <p>
              <strong>This hosting account is suspended.</strong> Your site, mail and databases are offline.
            </p>
            <p>
              If it was suspended for an unpaid renewal, add money to your wallet and pay the order: the suspension is
              lifted at once.
            </p>
          </>
        ) : settingUp ? (
          <>
            <p>
              <strong>Your hosting account is being set up.</strong> {error.message}
            </p>
            <p>It is usually ready within a minute of ordering; this page checks by itself every few seconds.</p>
          </>
        ) : (
          <p>
            <strong>This hosting account cannot be managed.</strong> {error.message}
          </p>
        )}
      </Alert>
      <div className="row web-blocked-actions">
        <Button variant="secondary" onClick={onRetry}>
          Check again
        </Button>
        {suspended ? (
          <Link className="btn btn-secondary" to="/wallet">
            Go to wallet
          </Link>
        ) : null}
      </div>
    </div>
  );
}

/**
 * Open cPanel: the one-time sign-in link (five minutes) from `services/?id=&action=sso`. The tab
 * is opened synchronously with the click (so pop-up blockers allow it) and sent to the link when
 * it arrives; the link is never logged, cached or written anywhere. When the browser refuses the
 * tab, the link is offered as a button for one click, then forgotten.
 */
function CpanelButton({
  serviceId,
  disabled,
  domain,
}: {
  serviceId: number;
  disabled: boolean;
  domain: string | undefined;
}) {
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<unknown>(null);
  const [fallback, setFallback] = useState<string | null>(null);
  const [opened, setOpened] = useState(false);

  async function open() {
    setError(null);
    setFallback(null);
    setOpened(false);
    setBusy(true);
    const tab = window.open('', '_blank');
    if (tab) {
      try {
        tab.opener = null;
        tab.document.title = 'Opening cPanel…';
        tab.document.body.textContent = 'Opening cPanel…';
      } catch {
        // A browser that does not let us write into the blank tab still lets us navigate it.
      }
    }
    try {
      const data = await unwrap(
        api.GET('/api/v1/client/services/', { params: { query: { id: serviceId, action: 'sso' } } }),
      );
      const url = (data as { sso?: { url?: unknown } }).sso?.url;
      if (typeof url !== 'string' || !/^https?:\/\//.test(url)) {
        throw new Error('The sign-in link could not be made. Try again in a minute.');
      }
      if (tab && !tab.closed) {
        tab.location.replace(url);
        setOpened(true);
      } else {
        setFallback(url);
      }
    } catch (caught) {
      tab?.close();
      setError(caught);
    } finally {
      setBusy(false);
    }
  }

  return (
    <section className="card web-cpanel" aria-labelledby="web-cpanel-title">
      <div className="web-cpanel-text">
        <h2 id="web-cpanel-title">cPanel{domain ? ` for ${domain}` : ''}</h2>
        <p className="muted">
          Files, Webmail, WordPress installer, backups and everything else: signs you in with one click, in a new tab.
        </p>
      </div>
      <div className="web-cpanel-action">
        <Button onClick={open} busy={busy} disabled={disabled} className="web-cpanel-button">
          Open cPanel <span aria-hidden="true">↗</span>
          <span className="sr-only"> (opens in a new tab)</span>
        </Button>
        {opened ? (
          <p className="muted" role="status">
            cPanel opened in a new tab.
          </p>
        ) : null}
      </div>
      {fallback ? (
        <div className="web-cpanel-fallback">
          <Alert kind="info">
            <p>Your browser blocked the new tab. The sign-in link works once, for five minutes:</p>
          </Alert>
          <a
            className="btn btn-primary"
            href={fallback}
            target="_blank"
            rel="noopener noreferrer"
            onClick={() => setTimeout(() => setFallback(null), 0)}
          >
            Continue to cPanel <span aria-hidden="true">↗</span>
          </a>
        </div>
      ) : null}
      {error ? (
        <div className="web-cpanel-fallback">
          <ErrorAlert error={error} />
        </div>
      ) : null}
    </section>
  );
}

function Sections({ serviceId, account }: { serviceId: number; account: WebAccount }) {
  const [params, setParams] = useSearchParams();
  const asked = params.get('section');
  const current: SectionId = isSection(asked) ? asked : 'overview';
  const base = useId();
  const tabs = useRef<(HTMLButtonElement | null)[]>([]);

  function choose(id: SectionId, focus = false) {
    setParams(
      (prev) => {
        const next = new URLSearchParams(prev);
        if (id === 'overview') next.delete('section');
        else next.set('section', id);
        return next;
      },
      { replace: true, preventScrollReset: true },
    );
    if (focus) tabs.current[SECTIONS.findIndex((s) => s.id === id)]?.focus();
  }

  function onKeyDown(event: KeyboardEvent<HTMLDivElement>) {
    // From the focused tab (not the rendered state), so quick key presses never skip one.
    const focused = tabs.current.indexOf(event.target as HTMLButtonElement);
    const index = focused >= 0 ? focused : SECTIONS.findIndex((s) => s.id === current);
    const last = SECTIONS.length - 1;
    const to =
      event.key === 'ArrowRight' || event.key === 'ArrowDown'
        ? index === last
          ? 0
          : index + 1
        : event.key === 'ArrowLeft' || event.key === 'ArrowUp'
          ? index === 0
            ? last
            : index - 1
          : event.key === 'Home'
            ? 0
            : event.key === 'End'
              ? last
              : null;
    if (to === null) return;
    event.preventDefault();
    choose((SECTIONS[to] as (typeof SECTIONS)[number]).id, true);
  }

  return (
    <div className="web-sections">
      <div role="tablist" aria-label="Web hosting" className="web-tabs" onKeyDown={onKeyDown}>
        {SECTIONS.map((s, i) => (
          <button
            key={s.id}
            ref={(el) => {
              tabs.current[i] = el;
            }}
            type="button"
            role="tab"
            id={`${base}-tab-${s.id}`}
            aria-controls={`${base}-panel`}
            aria-selected={s.id === current}
            tabIndex={s.id === current ? 0 : -1}
            onClick={() => choose(s.id)}
          >
            {s.label}
          </button>
        ))}
      </div>
      <div role="tabpanel" id={`${base}-panel`} aria-labelledby={`${base}-tab-${current}`} className="web-tabpanel">
        {current === 'overview' ? <OverviewSection serviceId={serviceId} account={account} /> : null}
        {current === 'databases' ? <DatabasesSection serviceId={serviceId} /> : null}
        {current === 'mail' ? <MailSection serviceId={serviceId} domain={account.domain} /> : null}
        {current === 'php' ? <PhpSection serviceId={serviceId} domain={account.domain} /> : null}
        {current === 'https' ? <HttpsSection serviceId={serviceId} domain={account.domain} /> : null}
        {current === 'usage' ? <UsageSection serviceId={serviceId} /> : null}
        {current === 'dns' ? <DnsSection serviceId={serviceId} /> : null}
        {current === 'password' ? <PasswordSection serviceId={serviceId} username={account.username} /> : null}
        {current === 'activity' ? <ActivitySection serviceId={serviceId} /> : null}
      </div>
    </div>
  );
}

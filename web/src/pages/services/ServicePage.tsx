// One service (/services/:id/*): a header with its state, the job running on it (polled until
// it ends), and sections as tabs in the URL: Overview (power, facts, credentials, sign-in or
// console), Usage (graph), Manage (the type's own panel: game, web; VPS snapshots and
// reinstall), Activity (events, last job) and Billing (renew, termination request).

import { Fragment, lazy, Suspense } from 'react';
import { Link, Navigate, NavLink, Route, Routes, useParams } from 'react-router';
import { useTitle } from '../../components/Layout.tsx';
import { Alert, Button, ErrorAlert, Loading, PageHeader, Status } from '../../components/ui.tsx';
import { ApiError } from '../../lib/api.ts';
import { rupees, when } from '../../lib/format.ts';
import { JobProgress, PowerCard, ReinstallCard } from './Controls.tsx';
import { hasPower, type Service, typeName, useService } from './common.ts';
import { ActivityCard, BillingCard, CredentialsCard, FactsCard, SignOnCard } from './Panels.tsx';
import { UsageChart } from './UsageChart.tsx';
import { BackupScheduleCard } from './vps/BackupSchedule.tsx';
import { ConsoleCard } from './vps/Console.tsx';
import { ResizeCard } from './vps/Resize.tsx';
import { ReverseDnsCard } from './vps/ReverseDns.tsx';
import { SerialConsoleCard } from './vps/SerialConsole.tsx';
import { SnapshotsCard } from './vps/Snapshots.tsx';
import './services.css';

const GamePanel = lazy(() => import('./game/GamePanel.tsx'));
const WebPanel = lazy(() => import('./web/WebPanel.tsx'));

function tabsOf(service: Service): { to: string; label: string }[] {
  const tabs = [{ to: '', label: 'Overview' }];
  if (hasPower(service.type) || service.type === 'web') tabs.push({ to: 'usage', label: 'Usage' });
  if (service.type === 'game' || service.type === 'web' || service.type === 'vps' || service.type === 'baremetal')
    tabs.push({ to: 'manage', label: 'Manage' });
  tabs.push({ to: 'activity', label: 'Activity' }, { to: 'billing', label: 'Billing' });
  return tabs;
}

function StateNotice({ service }: { service: Service }) {
  if (service.status === 'suspended')
    return (
      <Alert kind="error">
        <p>
          <strong>This service is suspended</strong>
          {service.suspend_reason ? `: ${service.suspend_reason}` : '.'}{' '}
          {service.overdue ? (
            <>
              Its renewal is unpaid: <Link to={`/services/${service.id}/billing`}>renew it</Link> to bring it back.
            </>
          ) : null}
        </p>
      </Alert>
    );
  if (service.status === 'failed')
    return (
      <Alert kind="error">
        <p>Setting up this service failed. Staff have been told; see Activity for what happened.</p>
      </Alert>
    );
  if (service.status === 'terminated')
    return (
      <Alert kind="info">
        <p>This service was terminated; its data is gone.</p>
      </Alert>
    );
  if (service.overdue)
    return (
      <Alert kind="warning">
        <p>
          Paid until {when(service.paid_until)}: the renewal of {rupees(service.price.monthly_with_gst)} is overdue.{' '}
          <Link to={`/services/${service.id}/billing`}>Renew now</Link> to avoid suspension.
        </p>
      </Alert>
    );
  return null;
}

function Overview({ service }: { service: Service }) {
  return (
    <div className="svc-overview">
      <div className="svc-col">
        {hasPower(service.type) ? <PowerCard service={service} /> : null}
        <FactsCard service={service} />
      </div>
      <div className="svc-col">
        {service.type !== 'web' ? <CredentialsCard service={service} /> : null}
        {service.type === 'web' || service.type === 'game' ? <SignOnCard service={service} /> : null}
        {service.type === 'vps' ? <ConsoleCard service={service} /> : null}
        {service.type === 'vps' ? <SerialConsoleCard service={service} /> : null}
      </div>
    </div>
  );
}

function Manage({ service }: { service: Service }) {
  if (service.type === 'game')
    return (
      <Suspense fallback={<Loading what="Loading the game panel" />}>
        <GamePanel serviceId={service.id} />
      </Suspense>
    );
  if (service.type === 'web')
    return (
      <Suspense fallback={<Loading what="Loading the hosting panel" />}>
        <WebPanel serviceId={service.id} />
      </Suspense>
    );
  // Keyed by the service: another service's Manage tab starts without this one's typed values,
  // confirmations and messages (the route's element stays mounted from one service to the next).
  return (
    <Fragment key={service.id}>
      {service.type === 'vps' ? <SnapshotsCard service={service} /> : null}
      {service.type === 'vps' ? <ResizeCard service={service} /> : null}
      {service.type === 'vps' || service.type === 'baremetal' ? <ReverseDnsCard service={service} /> : null}
      {service.type === 'vps' ? <BackupScheduleCard service={service} /> : null}
      <ReinstallCard service={service} />
    </Fragment>
  );
}

export default function ServicePage() {
  const params = useParams();
  const id = Number(params.id);
  const query = useService(id);
  const service = query.data;
  useTitle(service ? service.label : 'Service');

  if (!Number.isInteger(id) || id <= 0 || (query.error instanceof ApiError && query.error.status === 404)) {
    return (
      <div className="page narrow">
        <PageHeader title="Service not found" />
        <p>There is no service {params.id} on your account.</p>
        <Link to="/services">Back to your services</Link>
      </div>
    );
  }
  if (query.isPending) return <Loading what="Loading the service" />;
  if (!service) {
    return (
      <>
        <ErrorAlert error={query.error} />
        <p>
          <Button variant="secondary" onClick={() => query.refetch()}>
            Try again
          </Button>
        </p>
      </>
    );
  }

  return (
    <div className="service-page">
      <nav aria-label="Breadcrumb" className="crumbs">
        <Link to="/services">Services</Link> <span aria-hidden="true">›</span>{' '}
        <span aria-current="page">{service.label}</span>
      </nav>
      <PageHeader title={service.label}>
        <Status value={service.status} />
        {service.power && service.status === 'active' ? <Status value={service.power} /> : null}
      </PageHeader>
      <p className="muted svc-sub">
        {typeName(service.type)} · {service.plan.name} · {service.region.name}
        {service.ipv4 ? (
          <>
            {' '}
            · <span className="mono">{service.ipv4}</span>
          </>
        ) : null}
        {service.domain ? (
          <>
            {' '}
            · <span className="mono">{service.domain}</span>
          </>
        ) : null}
      </p>
      {query.isError ? <ErrorAlert error={query.error} /> : null}
      <StateNotice service={service} />
      <JobProgress job={service.last_job} />
      <nav className="tabs svc-tabs" aria-label="Service sections">
        {tabsOf(service).map((t) => (
          <NavLink key={t.to} to={`/services/${service.id}${t.to ? `/${t.to}` : ''}`} end={t.to === ''}>
            {t.label}
          </NavLink>
        ))}
      </nav>
      <Routes>
        <Route index element={<Overview service={service} />} />
        <Route path="usage" element={<UsageChart serviceId={service.id} />} />
        <Route path="manage/*" element={<Manage service={service} />} />
        <Route path="activity" element={<ActivityCard service={service} />} />
        <Route path="billing" element={<BillingCard service={service} />} />
        <Route path="*" element={<Navigate to={`/services/${service.id}`} replace />} />
      </Routes>
    </div>
  );
}

// The signed-in home: what the account holds and what needs doing. The wallet answer gives the
// balance, the monthly run-rate, the unpaid renewal orders (each with a Pay button: POST
// orders/ {action: "pay", id}) and the next renewals; the services list gives every service with
// its live power state, polled as one request every 15 s (never one per row); the latest
// notifications close the page. Each empty section says what to do next.

import { type UseQueryResult, useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useState } from 'react';
import { Link } from 'react-router';
import { useTitle } from '../../components/Layout.tsx';
import { Alert, Button, Empty, ErrorAlert, Loading, PageHeader, Status } from '../../components/ui.tsx';
import { ApiError, api, unwrap } from '../../lib/api.ts';
import { day, relative, rupees, when } from '../../lib/format.ts';
import { useAccount } from '../../lib/session.tsx';
import './pages.css';

/** How often the services list (with its power states) is asked again. */
const LIVE_EVERY_MS = 15_000;

/** The wallet page with the top-up amount filled in (its ?amount=), and a way back to a service (?return=). */
function topUpLink(amount: number | string | null, serviceId?: number): string {
  const query = new URLSearchParams();
  const value = Number(amount);
  if (amount !== null && Number.isFinite(value) && value > 0) query.set('amount', value.toFixed(2));
  if (serviceId !== undefined) query.set('return', `/services/${serviceId}`);
  const text = query.toString();
  return text ? `/wallet?${text}` : '/wallet';
}
const SERVICES_PER_PAGE = 100;

async function fetchWallet() {
  // One transaction row is enough: the dashboard shows the balance and the billing summary.
  return unwrap(api.GET('/api/v1/client/wallet/', { params: { query: { per_page: 1 } } }));
}

async function fetchServices() {
  const data = await unwrap(
    api.GET('/api/v1/client/services/', { params: { query: { per_page: SERVICES_PER_PAGE } } }),
  );
  if (!('services' in data)) throw new Error('The server answered with one service where a list was expected.');
  return data;
}

async function fetchLatestNotifications() {
  return unwrap(api.GET('/api/v1/client/notifications/', { params: { query: { per_page: 5 } } }));
}

type Wallet = Awaited<ReturnType<typeof fetchWallet>>;
type UnpaidOrder = Wallet['billing']['unpaid']['orders'][number];
type ServicesAnswer = Awaited<ReturnType<typeof fetchServices>>;
type Service = ServicesAnswer['services'][number];

const TYPE_NAMES: Record<string, string> = {
  vps: 'Virtual server',
  game: 'Game server',
  web: 'Web hosting',
  baremetal: 'Bare metal',
};

const WALLET_SUMMARY_KEY = ['wallet', 'summary'] as const;
const SERVICES_LIST_KEY = ['services', 'list', SERVICES_PER_PAGE] as const;

export default function DashboardPage() {
  useTitle('Dashboard');
  const account = useAccount();
  const wallet = useQuery({ queryKey: WALLET_SUMMARY_KEY, queryFn: fetchWallet });
  const services = useQuery({
    queryKey: SERVICES_LIST_KEY,
    queryFn: fetchServices,
    refetchInterval: LIVE_EVERY_MS,
  });
  const notifications = useQuery({ queryKey: ['notifications', 'latest'], queryFn: fetchLatestNotifications });
  // A payment's confirmation lives here: the paid order leaves the unpaid list when the wallet reloads.
  const [paidMessage, setPaidMessage] = useState<string | null>(null);

  const unpaid = wallet.data?.billing.unpaid;
  const balance = Number(wallet.data?.wallet.balance ?? 0);
  const shortfall = unpaid ? Number(unpaid.total.amount) - balance : 0;

  return (
    <div className="dashboard">
      <PageHeader title="Dashboard">
        <Link className="btn btn-primary" to="/order">
          Order a server
        </Link>
        <Link className="btn btn-secondary" to="/wallet">
          Top up wallet
        </Link>
      </PageHeader>
      {account.data ? <p className="muted dash-hello">Signed in as {account.data.name}.</p> : null}

      {wallet.isError ? <ErrorAlert error={wallet.error} /> : null}
      {paidMessage ? (
        <Alert kind="success">
          <p>{paidMessage}</p>
        </Alert>
      ) : null}
      {unpaid && unpaid.orders.length > 0 && shortfall > 0 ? (
        <Alert kind="warning">
          <p>
            <strong>
              {unpaid.orders.length === 1 ? 'A renewal is' : `${unpaid.orders.length} renewals are`} unpaid, and your
              wallet is {rupees(shortfall)} short.
            </strong>{' '}
            <Link to={topUpLink(shortfall)}>Top up your wallet</Link>: unpaid renewals are paid from it automatically,
            oldest first. A service whose renewal stays unpaid is suspended 3 days after its paid period ends.
          </p>
        </Alert>
      ) : null}

      <Summary wallet={wallet.data} services={services.data?.services} loading={wallet.isPending} />

      {unpaid && unpaid.orders.length > 0 ? (
        <UnpaidOrders orders={unpaid.orders} balance={balance} onPaid={setPaidMessage} />
      ) : null}

      <ServicesCard query={services} emptyWallet={wallet.isSuccess && balance <= 0} />

      <div className="grid two">
        <section className="card" aria-labelledby="dash-notes">
          <div className="card-head">
            <h2 id="dash-notes">Latest notifications</h2>
            <Link to="/notifications">
              All notifications
              {notifications.data && notifications.data.unread > 0 ? ` (${notifications.data.unread} unread)` : ''}
            </Link>
          </div>
          {notifications.isPending ? <Loading what="Loading notifications" /> : null}
          {notifications.isError ? <ErrorAlert error={notifications.error} /> : null}
          {notifications.data && notifications.data.notifications.length === 0 ? (
            <p className="muted">
              Nothing yet. We tell you here when a server is ready, a renewal is due or a deposit is approved.
            </p>
          ) : null}
          {notifications.data && notifications.data.notifications.length > 0 ? (
            <ul className="list">
              {notifications.data.notifications.map((note) => (
                <li key={note.id} className={note.read ? 'note-read' : 'note-unread'}>
                  <div className="note-title">
                    {note.read ? null : <span className="badge-new">New</span>}
                    <strong>{note.title}</strong>
                  </div>
                  <p className="note-body">{note.body}</p>
                  <p className="muted note-time">
                    <time dateTime={note.created_at} title={when(note.created_at)}>
                      {relative(note.created_at)}
                    </time>
                  </p>
                </li>
              ))}
            </ul>
          ) : null}
        </section>

        <section className="card" aria-labelledby="dash-renewals">
          <div className="card-head">
            <h2 id="dash-renewals">Next renewals</h2>
            <Link to="/wallet">Wallet</Link>
          </div>
          {wallet.isPending ? <Loading what="Loading renewals" /> : null}
          {wallet.data && wallet.data.billing.next_renewals.length === 0 ? (
            <p className="muted">No renewals due. Each service renews monthly from your wallet once you order one.</p>
          ) : null}
          {wallet.data && wallet.data.billing.next_renewals.length > 0 ? (
            <ul className="list">
              {wallet.data.billing.next_renewals.slice(0, 5).map((renewal) => (
                <li key={renewal.service.id} className="renewal">
                  <Link to={`/services/${renewal.service.id}`}>{renewal.service.label}</Link>
                  <span className="muted">
                    <time dateTime={renewal.paid_until}>{day(renewal.paid_until)}</time>
                  </span>
                  <span className="num">{rupees(renewal.amount)}</span>
                </li>
              ))}
            </ul>
          ) : null}
        </section>
      </div>
    </div>
  );
}

function Summary({
  wallet,
  services,
  loading,
}: {
  wallet: Wallet | undefined;
  services: Service[] | undefined;
  loading: boolean;
}) {
  const live = services?.filter((s) => s.status !== 'terminated') ?? [];
  // The API's run-rate; the services' monthly prices are the fallback (active and suspended ones).
  const derived = live
    .filter((s) => s.status === 'active' || s.status === 'suspended')
    .reduce((sum, s) => sum + Number(s.price.monthly_with_gst), 0);
  const runRate = wallet?.billing.monthly_run_rate.amount ?? (services ? derived : null);
  const balance = wallet ? Number(wallet.wallet.balance) : null;
  const unpaid = wallet?.billing.unpaid;
  const next = wallet?.billing.next_renewals[0];
  return (
    <section className="grid four dash-stats" aria-label="Summary">
      <div className="card stat">
        <span className="label">Wallet balance</span>
        <span className="value">{loading ? '…' : rupees(wallet?.wallet.balance)}</span>
        {balance !== null && balance <= 0 ? (
          <Link to="/wallet">Top up your wallet to order</Link>
        ) : (
          <Link to="/wallet">Top up or see transactions</Link>
        )}
      </div>
      <div className="card stat">
        <span className="label">Monthly run-rate</span>
        <span className="value">{runRate === null ? '…' : rupees(runRate)}</span>
        <span className="muted">
          {services
            ? live.length === 0
              ? 'No services yet'
              : `${live.length} service${live.length === 1 ? '' : 's'}, renewed monthly`
            : ' '}
        </span>
      </div>
      <div className="card stat">
        <span className="label">Unpaid</span>
        <span className="value">{unpaid ? rupees(unpaid.total.amount) : '…'}</span>
        <span className="muted">
          {unpaid
            ? unpaid.orders.length === 0
              ? 'Nothing to pay'
              : `${unpaid.orders.length} renewal order${unpaid.orders.length === 1 ? '' : 's'}`
            : ' '}
        </span>
      </div>
      <div className="card stat">
        <span className="label">Next renewal</span>
        <span className="value">{next ? day(next.paid_until) : wallet ? 'None' : '…'}</span>
        <span className="muted">{next ? `${next.service.label}, ${rupees(next.amount)}` : ' '}</span>
      </div>
    </section>
  );
}

function UnpaidOrders({
  orders,
  balance,
  onPaid,
}: {
  orders: UnpaidOrder[];
  balance: number;
  onPaid: (message: string) => void;
}) {
  return (
    <section className="card dash-unpaid" aria-labelledby="dash-unpaid">
      <h2 id="dash-unpaid">Unpaid orders</h2>
      <p className="muted">
        Paying takes the amount from your wallet (balance {rupees(balance)}) and extends the service by a month.
      </p>
      <ul className="list">
        {orders.map((order) => (
          <UnpaidRow key={order.id} order={order} balance={balance} onPaid={onPaid} />
        ))}
      </ul>
    </section>
  );
}

function UnpaidRow({
  order,
  balance,
  onPaid,
}: {
  order: UnpaidOrder;
  balance: number;
  onPaid: (message: string) => void;
}) {
  const client = useQueryClient();
  const pay = useMutation({
    mutationFn: () => unwrap(api.POST('/api/v1/client/orders/', { body: { action: 'pay', id: order.id } })),
    onSuccess: (data) => onPaid(data.message),
    onSettled: async () => {
      await Promise.all(
        ['wallet', 'services', 'orders', 'notifications'].map((key) => client.invalidateQueries({ queryKey: [key] })),
      );
    },
  });
  const short = Number(order.amount) > balance;
  const error = pay.error;
  const noMoney = error instanceof ApiError && error.code === 'insufficient_funds';
  const shortBy = noMoney && typeof error.details.shortfall === 'string' ? error.details.shortfall : null;
  return (
    <li className="unpaid-row">
      <div className="unpaid-main">
        <div>
          <strong>
            Renewal of <Link to={`/services/${order.service.id}`}>{order.service.label}</Link>
          </strong>
          <div className="muted">
            <span className="mono">{order.public_id}</span>
            {order.renews_from ? <> · for the month from {day(order.renews_from)}</> : null}
          </div>
        </div>
        <span className="unpaid-amount">{rupees(order.amount)}</span>
        {pay.isSuccess ? (
          <Status value="paid" />
        ) : (
          <Button onClick={() => pay.mutate()} busy={pay.isPending} aria-describedby={`unpaid-${order.id}-note`}>
            Pay {rupees(order.amount)}
          </Button>
        )}
      </div>
      {error && !noMoney ? <ErrorAlert error={error} /> : null}
      {noMoney ? (
        <Alert kind="error">
          <p>
            {error.message}{' '}
            <Link to={topUpLink(shortBy, order.service.id)}>
              {shortBy ? `Top up at least ${rupees(shortBy)}` : 'Top up your wallet'}
            </Link>
            , then pay again (or let the top-up pay it automatically).
          </p>
        </Alert>
      ) : null}
      {!error && !pay.isSuccess && short ? (
        <p className="hint" id={`unpaid-${order.id}-note`}>
          Your balance does not cover this.{' '}
          <Link to={topUpLink(Number(order.amount) - balance, order.service.id)}>Top up your wallet</Link> first.
        </p>
      ) : null}
    </li>
  );
}

function ServicesCard({ query, emptyWallet }: { query: UseQueryResult<ServicesAnswer, Error>; emptyWallet: boolean }) {
  const { data, error, isPending, isError, dataUpdatedAt, isFetching } = query;
  const list = data?.services ?? [];
  const asOf = list
    .map((s) => s.live_as_of)
    .filter((t): t is string => typeof t === 'string')
    .sort()
    .at(0);
  return (
    <section className="card" aria-labelledby="dash-services">
      <div className="card-head">
        <h2 id="dash-services">Services</h2>
        <Link to="/services">All services</Link>
      </div>
      {isPending ? <Loading what="Loading your services" /> : null}
      {isError && !data ? <ErrorAlert error={error} /> : null}
      {isError && data ? (
        <Alert kind="warning">
          <p>
            Could not refresh the states ({error.message}). Showing what we knew at{' '}
            {when(new Date(dataUpdatedAt).toISOString())}.
          </p>
        </Alert>
      ) : null}
      {data && list.length === 0 ? (
        <Empty title="Order your first server">
          <p>Virtual servers, game servers, web hosting and bare metal, paid monthly from your wallet.</p>
          {emptyWallet ? (
            <>
              <p>Orders are paid from your wallet, so top it up first (UPI or bank transfer), then pick a plan.</p>
              <p className="row dash-empty-actions">
                <Link className="btn btn-primary" to="/wallet">
                  Top up your wallet
                </Link>
                <Link className="btn btn-secondary" to="/order">
                  See the plans
                </Link>
              </p>
            </>
          ) : (
            <p className="row dash-empty-actions">
              <Link className="btn btn-primary" to="/order">
                Order your first server
              </Link>
              <Link className="btn btn-secondary" to="/wallet">
                Top up your wallet
              </Link>
            </p>
          )}
        </Empty>
      ) : null}
      {list.length > 0 ? (
        <>
          <ul className="svc-list">
            <li className="svc-row svc-head" aria-hidden="true">
              <span>Service</span>
              <span>State</span>
              <span>Address</span>
              <span className="num">Monthly</span>
              <span className="svc-paid">Paid until</span>
            </li>
            {list.map((service) => (
              <ServiceRow key={service.id} service={service} />
            ))}
          </ul>
          {data && data.pagination.total > list.length ? (
            <p className="muted">
              Showing {list.length} of {data.pagination.total}. <Link to="/services">See all services</Link>.
            </p>
          ) : null}
          <p className="muted live-note" aria-live="off">
            {isFetching ? <span className="spinner" aria-hidden="true" /> : null} Power states
            {asOf ? ` as of ${when(asOf)}` : ''}; refreshed every {LIVE_EVERY_MS / 1000} s.
          </p>
        </>
      ) : null}
    </section>
  );
}

function ServiceRow({ service }: { service: Service }) {
  const job = service.last_job;
  const jobRunning = job && (job.status === 'queued' || job.status === 'running');
  const state = service.status === 'active' && service.power ? service.power : service.status;
  const address = service.ipv4 ?? service.domain ?? service.hostname;
  return (
    <li className="svc-row">
      <span className="svc-name">
        <Link to={`/services/${service.id}`}>{service.label}</Link>
        <span className="muted">
          {TYPE_NAMES[service.type] ?? service.type} · {service.plan.name} · {service.region.name}
        </span>
      </span>
      <span className="svc-state">
        <span className="sr-only">State: </span>
        <Status value={state} />
        {service.overdue ? <span className="status status-bad">renewal unpaid</span> : null}
        {service.status === 'suspended' && service.suspend_reason ? (
          <span className="muted">
            {service.suspend_reason === 'overdue' ? 'unpaid renewal' : service.suspend_reason}
          </span>
        ) : null}
        {jobRunning ? (
          <span className="muted svc-job">
            {job.type} {Math.round(job.progress)}%{job.step ? `: ${job.step}` : ''}
          </span>
        ) : null}
      </span>
      <span className="svc-addr">
        <span className="cell-label">Address </span>
        <span className="mono">{address ?? '—'}</span>
      </span>
      <span className="num">
        <span className="sr-only">Monthly </span>
        {rupees(service.price.monthly)}
        <span className="m-only"> a month</span>
      </span>
      <span className="svc-paid">
        <span className="cell-label">Paid until </span>
        {day(service.paid_until)}
      </span>
    </li>
  );
}

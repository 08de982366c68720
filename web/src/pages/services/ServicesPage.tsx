// Your services: every one with its plan, region, state, live power, paid-until and price. The
// list answer carries the live power of every row (one request; the server asks the nodes at
// once and caches briefly), so the page refreshes it every 30 s, not per row. Type and status
// filters work on the page loaded (the API has no filter parameters); paging is the API's.

import { keepPreviousData, useQuery } from '@tanstack/react-query';
import { Link, useSearchParams } from 'react-router';
import { useTitle } from '../../components/Layout.tsx';
import { Button, Empty, ErrorAlert, Loading, PageHeader, SelectField, Status } from '../../components/ui.tsx';
import { api, unwrap } from '../../lib/api.ts';
import { day, relative, rupees } from '../../lib/format.ts';
import { type ListedService, STATUSES, TYPE_NAMES, typeName } from './common.ts';
import './services.css';

const PER_PAGE = 25;

function Power({ service }: { service: ListedService }) {
  if (service.status !== 'active' && service.status !== 'suspended') return <span className="muted">—</span>;
  if (!service.power) return <span className="muted">not reported</span>;
  return <Status value={service.power} />;
}

function PaidUntil({ service }: { service: ListedService }) {
  if (!service.paid_until) return <span className="muted">—</span>;
  return (
    <span>
      {day(service.paid_until)}
      {service.overdue ? (
        <>
          {' '}
          <span className="status status-bad">overdue</span>
        </>
      ) : null}
    </span>
  );
}

function Address({ service }: { service: ListedService }) {
  const text = service.domain ?? service.ipv4 ?? service.hostname;
  return text ? <span className="mono">{text}</span> : null;
}

export default function ServicesPage() {
  useTitle('Services');
  const [params, setParams] = useSearchParams();
  const page = Math.max(1, Number(params.get('page')) || 1);
  const type = params.get('type') ?? '';
  const status = params.get('status') ?? '';

  const list = useQuery({
    queryKey: ['services', page],
    queryFn: () => unwrap(api.GET('/api/v1/client/services/', { params: { query: { page, per_page: PER_PAGE } } })),
    placeholderData: keepPreviousData,
    refetchInterval: 30_000,
  });

  const set = (name: string, value: string) => {
    const next = new URLSearchParams(params);
    if (value) next.set(name, value);
    else next.delete(name);
    if (name !== 'page') next.delete('page');
    setParams(next, { replace: name !== 'page' });
  };

  const data = list.data && 'services' in list.data ? list.data : null;
  const all = data?.services ?? [];
  const rows = all.filter((s) => (!type || s.type === type) && (!status || s.status === status));
  const pages = data?.pagination.pages ?? 1;
  const total = data?.pagination.total ?? 0;
  const asOf = all.map((s) => s.live_as_of).find((t) => t);

  return (
    <div className="services-page">
      <PageHeader title="Services">
        <Link className="btn btn-primary" to="/order">
          Order a service
        </Link>
      </PageHeader>

      {list.isPending ? <Loading what="Loading your services" /> : null}
      {list.isError ? (
        <>
          <ErrorAlert error={list.error} />
          <p>
            <Button variant="secondary" onClick={() => list.refetch()}>
              Try again
            </Button>
          </p>
        </>
      ) : null}

      {data && total === 0 ? (
        <Empty title="You have no services yet">
          <p>
            Order a virtual server, a game server or web hosting; it is paid from your wallet and set up in minutes.
          </p>
          <p>
            <Link className="btn btn-primary" to="/order">
              Order your first service
            </Link>
          </p>
        </Empty>
      ) : null}

      {data && total > 0 ? (
        <>
          <div className="svc-filters">
            <SelectField label="Type" value={type} onChange={(e) => set('type', e.target.value)}>
              <option value="">All types</option>
              {Object.entries(TYPE_NAMES).map(([value, name]) => (
                <option key={value} value={value}>
                  {name}
                </option>
              ))}
            </SelectField>
            <SelectField label="Status" value={status} onChange={(e) => set('status', e.target.value)}>
              <option value="">All statuses</option>
              {STATUSES.map((s) => (
                <option key={s} value={s}>
                  {s}
                </option>
              ))}
            </SelectField>
          </div>
          <p className="muted svc-count" aria-live="polite">
            {type || status
              ? `${rows.length} of the ${all.length} services on this page match.`
              : `${total} ${total === 1 ? 'service' : 'services'}.`}{' '}
            {asOf ? `Power as of ${relative(asOf)}; refreshed every 30 seconds.` : null}
            {list.isFetching && !list.isPending ? ' Refreshing…' : null}
          </p>

          {rows.length === 0 ? (
            <Empty title="No service matches these filters">
              <p>
                <Button variant="secondary" onClick={() => setParams(new URLSearchParams())}>
                  Show all services
                </Button>
              </p>
            </Empty>
          ) : (
            <>
              <div className="table-wrap svc-table">
                <table>
                  <caption className="sr-only">Your services</caption>
                  <thead>
                    <tr>
                      <th scope="col">Service</th>
                      <th scope="col">Type and plan</th>
                      <th scope="col">Region</th>
                      <th scope="col">Status</th>
                      <th scope="col">Power</th>
                      <th scope="col">Paid until</th>
                      <th scope="col" className="num">
                        Price a month
                      </th>
                    </tr>
                  </thead>
                  <tbody>
                    {rows.map((s) => (
                      <tr key={s.id}>
                        <td>
                          <Link to={`/services/${s.id}`} className="svc-name">
                            {s.label}
                          </Link>
                          <br />
                          <small className="muted">
                            <Address service={s} />
                          </small>
                        </td>
                        <td>
                          {typeName(s.type)}
                          <br />
                          <small className="muted">{s.plan.name}</small>
                        </td>
                        <td>{s.region.name}</td>
                        <td>
                          <Status value={s.status} />
                        </td>
                        <td>
                          <Power service={s} />
                        </td>
                        <td>
                          <PaidUntil service={s} />
                        </td>
                        <td className="num">{rupees(s.price.monthly)}</td>
                      </tr>
                    ))}
                  </tbody>
                </table>
              </div>

              <ul className="list svc-cards" aria-label="Your services">
                {rows.map((s) => (
                  <li key={s.id}>
                    <div className="svc-card-head">
                      <Link to={`/services/${s.id}`} className="svc-name">
                        {s.label}
                      </Link>
                      <span className="num">{rupees(s.price.monthly)}/mo</span>
                    </div>
                    <p className="muted svc-card-sub">
                      {typeName(s.type)} · {s.plan.name} · {s.region.name}
                    </p>
                    <p className="svc-card-sub">
                      <Address service={s} />
                    </p>
                    <dl className="svc-card-facts">
                      <div>
                        <dt>Status</dt>
                        <dd>
                          <Status value={s.status} />
                        </dd>
                      </div>
                      <div>
                        <dt>Power</dt>
                        <dd>
                          <Power service={s} />
                        </dd>
                      </div>
                      <div>
                        <dt>Paid until</dt>
                        <dd>
                          <PaidUntil service={s} />
                        </dd>
                      </div>
                    </dl>
                  </li>
                ))}
              </ul>
            </>
          )}

          {pages > 1 ? (
            <nav className="row svc-pager" aria-label="Pages">
              <Button variant="secondary" disabled={page <= 1} onClick={() => set('page', String(page - 1))}>
                Previous
              </Button>
              <span>
                Page {page} of {pages}
              </span>
              <Button variant="secondary" disabled={page >= pages} onClick={() => set('page', String(page + 1))}>
                Next
              </Button>
            </nav>
          ) : null}
        </>
      ) : null}
    </div>
  );
}

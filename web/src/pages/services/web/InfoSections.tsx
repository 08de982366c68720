// What there is to know about the hosting account: the summary and nameservers (Overview), usage
// against the plan's limits, the DNS zone on the server, and the service's activity.

import { CopyButton, Empty, ErrorAlert, Loading, Status } from '../../../components/ui.tsx';
import { relative, when } from '../../../lib/format.ts';
import { amount, Meter } from './parts.tsx';
import { type UsageItem, useWeb, type WebAccount } from './webApi.ts';

export function OverviewSection({ serviceId, account }: { serviceId: number; account: WebAccount }) {
  const ns = useWeb(serviceId, 'nameservers');
  return (
    <div className="web-section">
      <div className="grid two">
        <section className="card" aria-labelledby="web-account">
          <h3 id="web-account">Hosting account</h3>
          <dl className="facts">
            <dt>Domain</dt>
            <dd>
              <a href={`https://${account.domain}`} target="_blank" rel="noopener noreferrer">
                {account.domain}
              </a>
            </dd>
            <dt>cPanel user</dt>
            <dd>
              <span className="mono">{account.username}</span>
            </dd>
            <dt>Package</dt>
            <dd className="mono">{account.package}</dd>
            <dt>Server address</dt>
            <dd className="mono">{account.ip ?? '—'}</dd>
            <dt>State</dt>
            <dd>
              <Status value={account.suspended ? 'suspended' : 'active'} />
            </dd>
          </dl>
          <Meter
            label="Disk"
            used={account.disk.used_mb * 1024 * 1024}
            limit={account.disk.limit_mb === null ? null : account.disk.limit_mb * 1024 * 1024}
            unit="bytes"
          />
        </section>
        <section className="card" aria-labelledby="web-ns">
          <h3 id="web-ns">Point your domain here</h3>
          <p className="muted">
            At the registrar where you bought {account.domain}, set its nameservers to these. The change can take a few
            hours to reach everyone; your site, mail and HTTPS certificate work once it has.
          </p>
          {ns.isPending ? <Loading what="Loading nameservers" /> : null}
          {ns.isError ? <ErrorAlert error={ns.error} /> : null}
          {ns.data ? (
            <>
              <ul className="web-ns">
                {ns.data.nameservers.map((name) => (
                  <li key={name} className="mono">
                    {name}
                  </li>
                ))}
              </ul>
              <CopyButton text={ns.data.nameservers.join('\n')} label="Copy nameservers" />
            </>
          ) : null}
        </section>
      </div>
    </div>
  );
}

/** Disk and bandwidth first, then the plan's counted allowances, then the rest. */
function order(items: UsageItem[]): { main: UsageItem[]; counted: UsageItem[]; other: UsageItem[] } {
  const main = ['disk_usage', 'bandwidth']
    .map((id) => items.find((i) => i.id === id))
    .filter((i): i is UsageItem => !!i);
  const rest = items.filter((i) => !main.includes(i));
  return {
    main,
    counted: rest.filter((i) => i.maximum !== null && i.maximum > 0),
    other: rest.filter((i) => i.maximum === null || i.maximum === 0),
  };
}

export function UsageSection({ serviceId }: { serviceId: number }) {
  const query = useWeb(serviceId, 'usage');
  if (query.isPending) return <Loading what="Loading usage" />;
  if (query.isError) return <ErrorAlert error={query.error} />;
  const { main, counted, other } = order(query.data.usage);
  return (
    <div className="web-section">
      <section className="card" aria-labelledby="web-usage-main">
        <h3 id="web-usage-main">Disk and bandwidth</h3>
        <div className="grid two">
          {main.map((item) => (
            <Meter key={item.id} label={item.description} used={item.usage} limit={item.maximum} unit={item.unit} />
          ))}
        </div>
        <p className="muted web-updated">
          As reported by cPanel,{' '}
          <time dateTime={new Date(query.dataUpdatedAt).toISOString()}>
            {when(new Date(query.dataUpdatedAt).toISOString())}
          </time>
          .
        </p>
      </section>
      {counted.length > 0 ? (
        <section className="card" aria-labelledby="web-usage-counted">
          <h3 id="web-usage-counted">Plan allowances</h3>
          <div className="grid two">
            {counted.map((item) => (
              <Meter key={item.id} label={item.description} used={item.usage} limit={item.maximum} unit={item.unit} />
            ))}
          </div>
        </section>
      ) : null}
      {other.length > 0 ? (
        <section className="card" aria-labelledby="web-usage-other">
          <h3 id="web-usage-other">Other usage</h3>
          <dl className="facts">
            {other.map((item) => (
              <div key={item.id} className="web-fact">
                <dt>{item.description}</dt>
                <dd>
                  {item.maximum === 0
                    ? 'not included in your plan'
                    : `${amount(item.usage, item.unit)}${item.unit === 'bytes' ? '' : ' (no limit)'}`}
                </dd>
              </div>
            ))}
          </dl>
        </section>
      ) : null}
    </div>
  );
}

export function DnsSection({ serviceId }: { serviceId: number }) {
  const query = useWeb(serviceId, 'dns');
  if (query.isPending) return <Loading what="Loading the DNS zone" />;
  if (query.isError) return <ErrorAlert error={query.error} />;
  const { zone, records } = query.data;
  return (
    <section className="card web-section" aria-labelledby="web-dns">
      <h3 id="web-dns">DNS zone of {zone}</h3>
      <p className="muted">
        The records this server answers for your domain once its nameservers point here. To add or change records (for
        example for Google Workspace mail), use Zone Editor in cPanel.
      </p>
      {records.length === 0 ? (
        <Empty title="No records">
          <p>The zone is empty. Open cPanel and use Zone Editor to add records.</p>
        </Empty>
      ) : (
        <div className="table-wrap">
          <table className="web-dns-table">
            <caption className="sr-only">DNS records of {zone}</caption>
            <thead>
              <tr>
                <th scope="col">Name</th>
                <th scope="col">Type</th>
                <th scope="col" className="num">
                  TTL (s)
                </th>
                <th scope="col">Value</th>
              </tr>
            </thead>
            <tbody>
              {records.map((r) => (
                <tr key={r.line}>
                  <td data-label="Name" className="mono web-break">
                    {r.name}
                  </td>
                  <td data-label="Type">{r.type}</td>
                  <td data-label="TTL (s)" className="num">
                    {r.ttl}
                  </td>
                  <td data-label="Value" className="mono web-break">
                    {r.data.join(' ')}
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
    </section>
  );
}

export function ActivitySection({ serviceId }: { serviceId: number }) {
  const query = useWeb(serviceId, 'events');
  if (query.isPending) return <Loading what="Loading activity" />;
  if (query.isError) return <ErrorAlert error={query.error} />;
  const { events } = query.data;
  return (
    <section className="card web-section" aria-labelledby="web-activity">
      <h3 id="web-activity">Activity</h3>
      {events.length === 0 ? (
        <Empty title="Nothing has happened yet">
          <p>Orders, renewals, suspensions and changes to the hosting account are listed here.</p>
        </Empty>
      ) : (
        <ol className="list">
          {events.map((e) => (
            <li key={e.id}>
              <p className="web-event-message">{e.message}</p>
              <p className="muted">
                <time dateTime={e.created_at}>{when(e.created_at)}</time> · {relative(e.created_at)}
              </p>
            </li>
          ))}
        </ol>
      )}
    </section>
  );
}

// Invoices (CONTRACT §12): the account's tax invoices (and, later, credit notes), newest first,
// a page at a time (?page=). At 1280 px a table; below 700 px the same documents as a list.
// Each opens on its own page (/invoices/<id>) with its PDF. Without billing details the page
// says how invoices will name the customer and where to change that.

import { Link, useSearchParams } from 'react-router';
import { useTitle } from '../../components/Layout.tsx';
import { Alert, Button, Empty, ErrorAlert, Loading, PageHeader } from '../../components/ui.tsx';
import { day, rupees } from '../../lib/format.ts';
import { useBillingProfile } from './BillingProfilePage.tsx';
import { type InvoiceSummary, kindLabel, pdfUrl, taxTotal, useInvoices } from './invoices.ts';
import './billing.css';

function pageOf(raw: string | null): number {
  const n = Number(raw);
  return Number.isInteger(n) && n >= 1 && n <= 100_000 ? n : 1;
}

export default function InvoicesPage() {
  useTitle('Invoices');
  const [search, setSearch] = useSearchParams();
  const page = pageOf(search.get('page'));
  const invoices = useInvoices(page);
  const profile = useBillingProfile();

  const onPage = (p: number) =>
    setSearch(
      (prev) => {
        const next = new URLSearchParams(prev);
        if (p > 1) next.set('page', String(p));
        else next.delete('page');
        return next;
      },
      { replace: false },
    );

  return (
    <div className="page invoices-page">
      <PageHeader title="Invoices">
        <Link className="btn btn-secondary" to="/account/billing">
          Billing details
        </Link>
      </PageHeader>

      {profile.data && profile.data.profile === null ? (
        <Alert kind="info">
          <p>
            Your invoices are made out to your account name, without an address or GSTIN.{' '}
            <Link to="/account/billing">Add your billing details</Link> so the next ones carry them.
          </p>
        </Alert>
      ) : null}

      <section className="card" aria-labelledby="invoices-title">
        <h2 id="invoices-title" className="sr-only">
          Your invoices
        </h2>
        {invoices.isPending ? <Loading what="Loading your invoices" /> : null}
        {invoices.isError ? <ErrorAlert error={invoices.error} /> : null}
        {invoices.data ? <InvoiceList data={invoices.data} page={page} onPage={onPage} /> : null}
      </section>
    </div>
  );
}

function InvoiceList({
  data,
  page,
  onPage,
}: {
  data: NonNullable<ReturnType<typeof useInvoices>['data']>;
  page: number;
  onPage: (page: number) => void;
}) {
  const { invoices, pagination } = data;
  if (pagination.total === 0) {
    return (
      <Empty title="No invoices yet">
        <p>
          A tax invoice is issued each time an order or a renewal is paid from your wallet, and it appears here with its
          PDF.
        </p>
        <p>
          <Link to="/order">Order a service</Link> · <Link to="/wallet">Add funds</Link> ·{' '}
          <Link to="/account/billing">Set your billing details</Link>
        </p>
      </Empty>
    );
  }
  if (invoices.length === 0) {
    return (
      <Empty title={`There is no page ${page}`}>
        <p>
          <Button variant="secondary" onClick={() => onPage(1)}>
            Go to the newest invoices
          </Button>
        </p>
      </Empty>
    );
  }
  const first = (pagination.page - 1) * pagination.per_page + 1;
  return (
    <>
      <p className="muted inv-count">
        {pagination.total === 1
          ? 'One invoice.'
          : `Showing ${first}–${first + invoices.length - 1} of ${pagination.total}, newest first.`}{' '}
        Amounts include GST.
      </p>
      <div className="table-wrap inv-table">
        <table>
          <caption className="sr-only">Your invoices, newest first</caption>
          <thead>
            <tr>
              <th scope="col">Number</th>
              <th scope="col">Date</th>
              <th scope="col">For</th>
              <th scope="col" className="num">
                Taxable value
              </th>
              <th scope="col" className="num">
                GST
              </th>
              <th scope="col" className="num">
                Total
              </th>
              <th scope="col">
                <span className="sr-only">PDF</span>
              </th>
            </tr>
          </thead>
          <tbody>
            {invoices.map((i) => (
              <tr key={i.id}>
                <td className="nowrap">
                  <Link to={`/invoices/${i.id}`} className="mono">
                    {i.number}
                  </Link>
                  <KindTag invoice={i} />
                </td>
                <td className="nowrap">{day(i.issued_at)}</td>
                <td>{i.description}</td>
                <td className="num">{rupees(i.taxable_value)}</td>
                <td className="num">{rupees(taxTotal(i.tax))}</td>
                <td className="num">
                  <strong>{rupees(i.total)}</strong>
                </td>
                <td>
                  <a href={pdfUrl(i.id)} download>
                    PDF<span className="sr-only"> of {i.number}</span>
                  </a>
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      </div>
      <ul className="list inv-list" aria-label="Your invoices, newest first">
        {invoices.map((i) => (
          <li key={i.id}>
            <div className="inv-line">
              <Link to={`/invoices/${i.id}`} className="mono">
                {i.number}
              </Link>
              <strong>{rupees(i.total)}</strong>
            </div>
            <p className="inv-for">{i.description}</p>
            <div className="inv-line muted">
              <span>
                {day(i.issued_at)}
                <KindTag invoice={i} />
              </span>
              <span>incl. GST {rupees(taxTotal(i.tax))}</span>
            </div>
          </li>
        ))}
      </ul>
      {pagination.pages > 1 ? (
        <nav className="pager" aria-label="Invoice pages">
          <Button variant="secondary" disabled={page <= 1} onClick={() => onPage(page - 1)}>
            Newer
          </Button>
          <span>
            Page {pagination.page} of {pagination.pages}
          </span>
          <Button variant="secondary" disabled={page >= pagination.pages} onClick={() => onPage(page + 1)}>
            Older
          </Button>
        </nav>
      ) : null}
    </>
  );
}

/** Credit notes are labelled; a tax invoice, the usual case, is not. */
function KindTag({ invoice }: { invoice: InvoiceSummary }) {
  if (invoice.kind === 'invoice') return null;
  return <span className="inv-kind">{kindLabel(invoice.kind)}</span>;
}

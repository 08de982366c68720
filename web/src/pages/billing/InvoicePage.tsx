// One tax invoice (or credit note), /invoices/<id>: its number, date and place of supply; the
// seller and the buyer as they were when it was issued; the lines; the GST split (CGST + SGST
// within the seller's state, IGST across states); the total in figures and in words; and the
// PDF to keep. Another account's invoice, or none, is "not found" (the API answers 404).

import { Link, useParams } from 'react-router';
import { useTitle } from '../../components/Layout.tsx';
import { Alert, ErrorAlert, Loading, PageHeader } from '../../components/ui.tsx';
import { ApiError } from '../../lib/api.ts';
import { rupees, when } from '../../lib/format.ts';
import { type Invoice, kindLabel, pdfUrl, split, useInvoice } from './invoices.ts';
import './billing.css';

export default function InvoicePage() {
  const { id: raw } = useParams();
  const id = Number(raw);
  const valid = Number.isInteger(id) && id > 0;
  if (!valid) return <NotFound />;
  return <InvoiceView id={id} />;
}

function NotFound() {
  useTitle('Invoice not found');
  return (
    <div className="page">
      <PageHeader title="Invoice not found" />
      <Alert kind="warning">
        <p>There is no invoice with this number on your account.</p>
      </Alert>
      <p>
        <Link to="/invoices">See all your invoices</Link>
      </p>
    </div>
  );
}

function InvoiceView({ id }: { id: number }) {
  const query = useInvoice(id);
  const invoice = query.data;
  useTitle(invoice ? `${kindLabel(invoice.kind)} ${invoice.number}` : 'Invoice');
  if (query.isError && query.error instanceof ApiError && query.error.status === 404) return <NotFound />;
  return (
    <div className="page invoice-page">
      <p className="back-link">
        <Link to="/invoices">← All invoices</Link>
      </p>
      {query.isPending ? (
        <>
          <PageHeader title="Invoice" />
          <Loading what="Loading the invoice" />
        </>
      ) : null}
      {query.isError ? (
        <>
          <PageHeader title="Invoice" />
          <ErrorAlert error={query.error} />
        </>
      ) : null}
      {invoice ? <Document invoice={invoice} /> : null}
    </div>
  );
}

function Document({ invoice }: { invoice: Invoice }) {
  const intra = split(invoice) === 'intra';
  const half = (Number(invoice.tax.rate) / 2).toFixed(2).replace(/\.00$/, '');
  const full = Number(invoice.tax.rate).toFixed(2).replace(/\.00$/, '');
  return (
    <>
      <PageHeader title={`${kindLabel(invoice.kind)} ${invoice.number}`}>
        <a className="btn btn-primary" href={pdfUrl(invoice.id)} download>
          Download PDF
        </a>
      </PageHeader>

      <section className="card" aria-labelledby="inv-facts-title">
        <h2 id="inv-facts-title" className="sr-only">
          Details
        </h2>
        <dl className="facts inv-facts">
          <dt>Number</dt>
          <dd className="mono">{invoice.number}</dd>
          <dt>Issued</dt>
          <dd>{when(invoice.issued_at)}</dd>
          <dt>Place of supply</dt>
          <dd>
            {invoice.place_of_supply_name} ({invoice.place_of_supply})
          </dd>
          <dt>Type</dt>
          <dd>
            {invoice.b2b ? 'B2B: the buyer is registered for GST' : 'B2C: the buyer has no GSTIN on this invoice'}
          </dd>
          {invoice.original_invoice_id ? (
            <>
              <dt>Against invoice</dt>
              <dd>
                <Link to={`/invoices/${invoice.original_invoice_id}`}>#{invoice.original_invoice_id}</Link>
              </dd>
            </>
          ) : null}
        </dl>
      </section>

      <div className="grid two">
        <Party title="From (seller)" party={invoice.seller} id="inv-seller" />
        <Party title="To (buyer)" party={invoice.buyer} id="inv-buyer" />
      </div>

      <section className="card" aria-labelledby="inv-lines-title">
        <h2 id="inv-lines-title">What it is for</h2>
        <div className="table-wrap inv-table">
          <table>
            <caption className="sr-only">Lines of {invoice.number}</caption>
            <thead>
              <tr>
                <th scope="col">Description</th>
                <th scope="col">SAC</th>
                <th scope="col" className="num">
                  Qty
                </th>
                <th scope="col" className="num">
                  Taxable value
                </th>
                {intra ? (
                  <>
                    <th scope="col" className="num">
                      CGST {half}%
                    </th>
                    <th scope="col" className="num">
                      SGST {half}%
                    </th>
                  </>
                ) : (
                  <th scope="col" className="num">
                    IGST {full}%
                  </th>
                )}
                <th scope="col" className="num">
                  Total
                </th>
              </tr>
            </thead>
            <tbody>
              {invoice.lines.map((line, n) => (
                // biome-ignore lint/suspicious/noArrayIndexKey: an issued invoice's lines never change order
                <tr key={n}>
                  <td>{line.description}</td>
                  <td className="mono">{line.sac}</td>
                  <td className="num">{line.quantity}</td>
                  <td className="num">{rupees(line.taxable_value)}</td>
                  {intra ? (
                    <>
                      <td className="num">{rupees(line.cgst)}</td>
                      <td className="num">{rupees(line.sgst)}</td>
                    </>
                  ) : (
                    <td className="num">{rupees(line.igst)}</td>
                  )}
                  <td className="num">{rupees(line.total)}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
        <ul className="list inv-list" aria-label={`Lines of ${invoice.number}`}>
          {invoice.lines.map((line, n) => (
            // biome-ignore lint/suspicious/noArrayIndexKey: an issued invoice's lines never change order
            <li key={n}>
              <p className="inv-for">
                <strong>{line.description}</strong>
              </p>
              <p className="muted">
                SAC <span className="mono">{line.sac}</span> · quantity {line.quantity}
              </p>
              {/* One line: its amounts are the totals below, not said twice. */}
              {invoice.lines.length === 1 ? null : <LineAmounts line={line} intra={intra} half={half} full={full} />}
            </li>
          ))}
        </ul>

        <dl className="inv-totals">
          <dt>Taxable value</dt>
          <dd>{rupees(invoice.taxable_value)}</dd>
          {intra ? (
            <>
              <dt>CGST @ {half}%</dt>
              <dd>{rupees(invoice.tax.cgst)}</dd>
              <dt>SGST @ {half}%</dt>
              <dd>{rupees(invoice.tax.sgst)}</dd>
            </>
          ) : (
            <>
              <dt>IGST @ {full}%</dt>
              <dd>{rupees(invoice.tax.igst)}</dd>
            </>
          )}
          <dt className="inv-total">Total</dt>
          <dd className="inv-total">{rupees(invoice.total)}</dd>
        </dl>
        {invoice.amount_in_words ? <p className="inv-words">{invoice.amount_in_words}</p> : null}
        <p className="muted">
          {intra
            ? 'Supplied within the seller’s state: GST is split into central (CGST) and state (SGST) tax.'
            : 'Supplied to another state: GST is charged as integrated tax (IGST).'}
          {invoice.kind === 'invoice' ? ' Paid from your Hostplane wallet.' : ''}
        </p>
      </section>
    </>
  );
}

function Party({ title, party, id }: { title: string; party: Invoice['buyer']; id: string }) {
  return (
    <section className="card" aria-labelledby={id}>
      <h2 id={id}>{title}</h2>
      <address className="billing-address">
        <strong>{party.legal_name}</strong>
        {party.address ? <span className="inv-address">{party.address}</span> : null}
        {party.state_name ? (
          <span>
            {party.state_name}
            {party.state_code ? ` (state code ${party.state_code})` : ''}
          </span>
        ) : null}
        {party.gstin ? (
          <span>
            GSTIN <span className="mono">{party.gstin}</span>
          </span>
        ) : (
          <span className="muted">No GSTIN</span>
        )}
        {party.email ? <span>{party.email}</span> : null}
      </address>
    </section>
  );
}

function LineAmounts({
  line,
  intra,
  half,
  full,
}: {
  line: Invoice['lines'][number];
  intra: boolean;
  half: string;
  full: string;
}) {
  return (
    <>
      <div className="inv-line">
        <span>Taxable value</span>
        <span>{rupees(line.taxable_value)}</span>
      </div>
      {intra ? (
        <>
          <div className="inv-line">
            <span>CGST {half}%</span>
            <span>{rupees(line.cgst)}</span>
          </div>
          <div className="inv-line">
            <span>SGST {half}%</span>
            <span>{rupees(line.sgst)}</span>
          </div>
        </>
      ) : (
        <div className="inv-line">
          <span>IGST {full}%</span>
          <span>{rupees(line.igst)}</span>
        </div>
      )}
      <div className="inv-line">
        <strong>Total</strong>
        <strong>{rupees(line.total)}</strong>
      </div>
    </>
  );
}

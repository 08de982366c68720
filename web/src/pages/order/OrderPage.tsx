// Ordering: /order chooses what to order (every product type the catalog sells), /order/:type
// shows that type's plans and the form that orders one, paid from the wallet (OrderForm.tsx).

import { useQuery } from '@tanstack/react-query';
import { Link, useParams } from 'react-router';
import { useTitle } from '../../components/Layout.tsx';
import { Button, Empty, ErrorAlert, Loading, PageHeader } from '../../components/ui.tsx';
import { rupees } from '../../lib/format.ts';
import { CATALOG_KEY, type Catalog, fetchCatalog, isKnownType, typeInfo, typesOf } from './catalog.ts';
import { OrderForm } from './OrderForm.tsx';
import './order.css';

export default function OrderPage() {
  const { type } = useParams();
  const catalog = useQuery({ queryKey: CATALOG_KEY, queryFn: fetchCatalog, staleTime: 30_000 });
  useTitle(type ? `Order ${typeInfo(type).title}` : 'Order');

  if (catalog.isPending) return <Loading what="Loading the catalog" />;
  if (catalog.isError) {
    return (
      <>
        <PageHeader title="Order" />
        <ErrorAlert error={catalog.error} />
        <p>
          <Button variant="secondary" onClick={() => catalog.refetch()}>
            Try again
          </Button>
        </p>
      </>
    );
  }
  if (!type) return <TypeChooser catalog={catalog.data} />;
  if (!catalog.data.plans.some((p) => p.type === type)) {
    return (
      <>
        <PageHeader title="Order" />
        <Empty
          title={
            isKnownType(type)
              ? `No ${typeInfo(type).short} plans are on sale right now`
              : `There is nothing called “${type}” to order`
          }
        >
          <p>
            <Link to="/order">See what you can order</Link>
          </p>
        </Empty>
      </>
    );
  }
  return <OrderForm key={type} type={type} catalog={catalog.data} />;
}

function TypeChooser({ catalog }: { catalog: Catalog }) {
  const types = typesOf(catalog);
  return (
    <>
      <PageHeader title="Order" />
      <p className="muted">
        Choose what to order. The first month is paid from your wallet when you order, and provisioning starts at once.
      </p>
      {types.length === 0 ? (
        <Empty title="Nothing is on sale right now">
          <p>Please check back later, or contact support.</p>
        </Empty>
      ) : (
        <ul className="type-list">
          {types.map((type) => {
            const info = typeInfo(type);
            const plans = catalog.plans.filter((p) => p.type === type);
            const open = plans.filter((p) => p.available);
            const cheapest = plans.reduce<string | null>(
              (low, p) => (low === null || Number(p.price.monthly) < Number(low) ? p.price.monthly : low),
              null,
            );
            // Where at least one plan of the type can be ordered now.
            const regions = catalog.regions.filter((r) =>
              open.some((p) => p.regions.some((pr) => pr.code === r.code && pr.available)),
            );
            return (
              <li key={type} className="card type-card">
                <h2>{info.title}</h2>
                {info.blurb ? <p>{info.blurb}</p> : null}
                <p className="type-price">
                  {cheapest !== null ? (
                    <>
                      from <strong>{rupees(cheapest)}</strong> a month
                    </>
                  ) : null}
                </p>
                <p className="muted">
                  {plans.length} {plans.length === 1 ? 'plan' : 'plans'}
                  {open.length === 0
                    ? ' · sold out right now'
                    : regions.length > 0
                      ? ` · in ${regions.map((r) => r.name).join(', ')}`
                      : ''}
                </p>
                <Link className="btn btn-primary" to={`/order/${encodeURIComponent(type)}`}>
                  See plans<span className="sr-only"> for {info.title.toLowerCase()}</span>
                </Link>
              </li>
            );
          })}
        </ul>
      )}
    </>
  );
}

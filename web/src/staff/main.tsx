// The staff console (CONTRACT §14, docs/STAFF.md "The console"): a second entry of the web build
// (staff.html), served at /staff and /staff/… — the client panel's bundle holds none of it.
// Signed-out pages are in the entry chunk; each signed-in page is a lazy chunk.

import { QueryClient, QueryClientProvider } from '@tanstack/react-query';
import { lazy, StrictMode, Suspense } from 'react';
import { createRoot } from 'react-dom/client';
import { BrowserRouter, Link, Navigate, Route, Routes } from 'react-router';
import { Loading } from '../components/ui.tsx';
import { InvitePage, LoginPage, SecondFactorPage } from './AuthPages.tsx';
import { ApiError } from './api.ts';
import { RequireRole, StaffLayout } from './Layout.tsx';
import { RequireStaff, type StaffRole } from './session.tsx';
import '../styles.css';
import './staff.css';

const DashboardPage = lazy(() => import('./DashboardPage.tsx'));
const AccountsPage = lazy(() => import('./AccountsPage.tsx'));
const AccountPage = lazy(() => import('./AccountPage.tsx'));
const ServicesPage = lazy(() => import('./ServicesPage.tsx'));
const ServicePage = lazy(() => import('./ServicePage.tsx'));
const BillingPage = lazy(() => import('./BillingPage.tsx'));
const NodesPage = lazy(() => import('./NodesPage.tsx'));
const CatalogPage = lazy(() => import('./CatalogPage.tsx'));
const DepositsPage = lazy(() => import('./DepositsPage.tsx'));
const DirectoryPage = lazy(() => import('./DirectoryPage.tsx'));
const AuditPage = lazy(() => import('./AuditPage.tsx'));
const InvoicesPage = lazy(() => import('./InvoicesPage.tsx'));
const InvoicePage = lazy(() => import('./InvoicePage.tsx'));
const RefundsPage = lazy(() => import('./RefundsPage.tsx'));
const ReconcilePage = lazy(() => import('./ReconcilePage.tsx'));
const LocationsPage = lazy(() => import('./LocationsPage.tsx'));
const OsPage = lazy(() => import('./OsPage.tsx'));
const SettingsPage = lazy(() => import('./SettingsPage.tsx'));

const queryClient = new QueryClient({
  defaultOptions: {
    queries: {
      retry: (count, error) => count < 2 && (!(error instanceof ApiError) || error.status === 0 || error.status >= 500),
    },
  },
});

function SignedIn({ least, children }: { least: StaffRole; children: React.ReactNode }) {
  return (
    <RequireStaff>
      <StaffLayout>
        <RequireRole least={least}>
          <Suspense fallback={<Loading />}>{children}</Suspense>
        </RequireRole>
      </StaffLayout>
    </RequireStaff>
  );
}

function NotFound() {
  return (
    <RequireStaff>
      <StaffLayout>
        <h1>Page not found</h1>
        <p>
          <Link to="/staff">Back to the console</Link>
        </p>
      </StaffLayout>
    </RequireStaff>
  );
}

/** Each signed-in page with the least role that may open it (the nav's STAFF_PAGES says the same). */
const PAGES: [string, StaffRole, React.ComponentType][] = [
  ['/staff', 'support', DashboardPage],
  ['/staff/accounts', 'support', AccountsPage],
  ['/staff/accounts/:id', 'support', AccountPage],
  ['/staff/services', 'support', ServicesPage],
  ['/staff/services/:id', 'support', ServicePage],
  ['/staff/deposits', 'support', DepositsPage],
  ['/staff/billing', 'billing', BillingPage],
  ['/staff/invoices', 'billing', InvoicesPage],
  ['/staff/invoices/:id', 'billing', InvoicePage],
  ['/staff/refunds', 'billing', RefundsPage],
  ['/staff/reconcile', 'billing', ReconcilePage],
  ['/staff/nodes', 'admin', NodesPage],
  ['/staff/catalog', 'admin', CatalogPage],
  ['/staff/locations', 'admin', LocationsPage],
  ['/staff/os', 'admin', OsPage],
  ['/staff/settings', 'admin', SettingsPage],
  ['/staff/directory', 'admin', DirectoryPage],
  ['/staff/audit', 'admin', AuditPage],
];

function App() {
  return (
    <Routes>
      <Route path="/staff/invite" element={<InvitePage />} />
      <Route path="/staff/login" element={<LoginPage />} />
      <Route path="/staff/second-factor" element={<SecondFactorPage />} />
      {PAGES.map(([path, least, Page]) => (
        <Route
          key={path}
          path={path}
          element={
            <SignedIn least={least}>
              <Page />
            </SignedIn>
          }
        />
      ))}
      <Route path="/staff/dashboard" element={<Navigate to="/staff" replace />} />
      <Route path="*" element={<NotFound />} />
    </Routes>
  );
}

const root = document.getElementById('root');
if (root) {
  createRoot(root).render(
    <StrictMode>
      <QueryClientProvider client={queryClient}>
        <BrowserRouter>
          <App />
        </BrowserRouter>
      </QueryClientProvider>
    </StrictMode>,
  );
}

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

const DepositsPage = lazy(() => import('./DepositsPage.tsx'));
const DirectoryPage = lazy(() => import('./DirectoryPage.tsx'));
const AuditPage = lazy(() => import('./AuditPage.tsx'));

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

function App() {
  return (
    <Routes>
      <Route path="/staff/invite" element={<InvitePage />} />
      <Route path="/staff/login" element={<LoginPage />} />
      <Route path="/staff/second-factor" element={<SecondFactorPage />} />
      <Route path="/staff" element={<Navigate to="/staff/deposits" replace />} />
      <Route
        path="/staff/deposits"
        element={
          <SignedIn least="support">
            <DepositsPage />
          </SignedIn>
        }
      />
      <Route
        path="/staff/directory"
        element={
          <SignedIn least="admin">
            <DirectoryPage />
          </SignedIn>
        }
      />
      <Route
        path="/staff/audit"
        element={
          <SignedIn least="admin">
            <AuditPage />
          </SignedIn>
        }
      />
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

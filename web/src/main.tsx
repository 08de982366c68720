// The client panel. Signed-out pages are in the entry chunk (the sign-in route stays small);
// every signed-in area is a lazy chunk of its own.

import { MutationCache, QueryCache, QueryClient, QueryClientProvider } from '@tanstack/react-query';
import { lazy, StrictMode, Suspense } from 'react';
import { createRoot } from 'react-dom/client';
import { BrowserRouter, Route, Routes } from 'react-router';
import { Layout } from './components/Layout.tsx';
import { Loading } from './components/ui.tsx';
import { ApiError } from './lib/api.ts';
import { ACCOUNT_KEY, RequireAccount } from './lib/session.tsx';
import { ForgotPage, LoginPage, NotFoundPage, RegisterPage, ResetPage, VerifyPage } from './pages/auth/AuthPages.tsx';
import './styles.css';

const DashboardPage = lazy(() => import('./pages/dashboard/DashboardPage.tsx'));
const ServicesPage = lazy(() => import('./pages/services/ServicesPage.tsx'));
const ServicePage = lazy(() => import('./pages/services/ServicePage.tsx'));
const OrderPage = lazy(() => import('./pages/order/OrderPage.tsx'));
const WalletPage = lazy(() => import('./pages/wallet/WalletPage.tsx'));
const AccountPage = lazy(() => import('./pages/account/AccountPage.tsx'));
const SecurityPage = lazy(() => import('./pages/account/SecurityPage.tsx'));
const SessionsPage = lazy(() => import('./pages/account/SessionsPage.tsx'));
const TokensPage = lazy(() => import('./pages/account/TokensPage.tsx'));
const SshKeysPage = lazy(() => import('./pages/account/SshKeysPage.tsx'));
const NotificationsPage = lazy(() => import('./pages/account/NotificationsPage.tsx'));
const PrivacyPage = lazy(() => import('./pages/account/PrivacyPage.tsx'));
const ActivityPage = lazy(() => import('./pages/account/ActivityPage.tsx'));
const WebhooksPage = lazy(() => import('./pages/webhooks/WebhooksPage.tsx'));
const BillingProfilePage = lazy(() => import('./pages/billing/BillingProfilePage.tsx'));
const InvoicesPage = lazy(() => import('./pages/billing/InvoicesPage.tsx'));
const InvoicePage = lazy(() => import('./pages/billing/InvoicePage.tsx'));
const RazorpayReturnPage = lazy(() => import('./pages/wallet/RazorpayReturnPage.tsx'));

/**
 * A 401 from any page means the session ended under it (signed out elsewhere, ended from the
 * sessions list, expired): the account is asked again, and RequireAccount goes to sign-in.
 */
function onRefusal(error: unknown): void {
  if (error instanceof ApiError && error.status === 401) void queryClient.invalidateQueries({ queryKey: ACCOUNT_KEY });
}

const queryClient: QueryClient = new QueryClient({
  queryCache: new QueryCache({ onError: onRefusal }),
  // A form that explains a 401 itself (the second step of sign-in) says so with meta.ownRefusal.
  mutationCache: new MutationCache({
    onError: (error, _variables, _context, mutation) => {
      if (!mutation.meta?.ownRefusal) onRefusal(error);
    },
  }),
  defaultOptions: {
    queries: {
      // A refusal (401, 404, 422) will not change by asking again; a network error or a 5xx may.
      retry: (count, error) => count < 2 && (!(error instanceof ApiError) || error.status === 0 || error.status >= 500),
      refetchOnWindowFocus: true,
    },
  },
});

function SignedIn({ children }: { children: React.ReactNode }) {
  return (
    <RequireAccount>
      <Layout>
        <Suspense fallback={<Loading />}>{children}</Suspense>
      </Layout>
    </RequireAccount>
  );
}

function App() {
  return (
    <Routes>
      <Route path="/login" element={<LoginPage />} />
      <Route path="/register" element={<RegisterPage />} />
      <Route path="/verify" element={<VerifyPage />} />
      <Route path="/forgot" element={<ForgotPage />} />
      <Route path="/reset" element={<ResetPage />} />
      <Route
        path="/"
        element={
          <SignedIn>
            <DashboardPage />
          </SignedIn>
        }
      />
      <Route
        path="/services"
        element={
          <SignedIn>
            <ServicesPage />
          </SignedIn>
        }
      />
      <Route
        path="/services/:id/*"
        element={
          <SignedIn>
            <ServicePage />
          </SignedIn>
        }
      />
      <Route
        path="/order"
        element={
          <SignedIn>
            <OrderPage />
          </SignedIn>
        }
      />
      <Route
        path="/order/:type"
        element={
          <SignedIn>
            <OrderPage />
          </SignedIn>
        }
      />
      <Route
        path="/wallet"
        element={
          <SignedIn>
            <WalletPage />
          </SignedIn>
        }
      />
      <Route
        path="/wallet/razorpay-return"
        element={
          <SignedIn>
            <RazorpayReturnPage />
          </SignedIn>
        }
      />
      <Route
        path="/invoices"
        element={
          <SignedIn>
            <InvoicesPage />
          </SignedIn>
        }
      />
      <Route
        path="/invoices/:id"
        element={
          <SignedIn>
            <InvoicePage />
          </SignedIn>
        }
      />
      <Route
        path="/account/billing"
        element={
          <SignedIn>
            <BillingProfilePage />
          </SignedIn>
        }
      />
      <Route
        path="/account/privacy"
        element={
          <SignedIn>
            <PrivacyPage />
          </SignedIn>
        }
      />
      <Route
        path="/account/activity"
        element={
          <SignedIn>
            <ActivityPage />
          </SignedIn>
        }
      />
      <Route
        path="/account"
        element={
          <SignedIn>
            <AccountPage />
          </SignedIn>
        }
      />
      <Route
        path="/account/security"
        element={
          <SignedIn>
            <SecurityPage />
          </SignedIn>
        }
      />
      <Route
        path="/account/sessions"
        element={
          <SignedIn>
            <SessionsPage />
          </SignedIn>
        }
      />
      <Route
        path="/tokens"
        element={
          <SignedIn>
            <TokensPage />
          </SignedIn>
        }
      />
      <Route
        path="/ssh-keys"
        element={
          <SignedIn>
            <SshKeysPage />
          </SignedIn>
        }
      />
      <Route
        path="/webhooks"
        element={
          <SignedIn>
            <WebhooksPage />
          </SignedIn>
        }
      />
      <Route
        path="/notifications"
        element={
          <SignedIn>
            <NotificationsPage />
          </SignedIn>
        }
      />
      <Route path="*" element={<NotFoundPage />} />
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

// The frame of every signed-in page: the brand, the main navigation (a bar at 1280 px, a menu
// button at 390 px), search (Ctrl+K or /), the account menu with sign-out, and the page.

import { useMutation } from '@tanstack/react-query';
import { type ReactNode, useEffect, useState } from 'react';
import { Link, NavLink, useLocation, useNavigate } from 'react-router';
import { api, unwrap } from '../lib/api.ts';
import { useAccount, useSessionChanged } from '../lib/session.tsx';
import { DeletionBanner } from './DeletionBanner.tsx';
import { SearchDialog } from './SearchDialog.tsx';

const NAV: { to: string; label: string; end?: boolean; also?: string[] }[] = [
  { to: '/', label: 'Dashboard', end: true },
  { to: '/services', label: 'Services' },
  { to: '/order', label: 'Order' },
  { to: '/wallet', label: 'Wallet' },
  { to: '/invoices', label: 'Invoices' },
  { to: '/notifications', label: 'Notifications' },
  { to: '/account', label: 'Account', also: ['/tokens', '/ssh-keys', '/webhooks'] },
];

export function Layout({ children }: { children: ReactNode }) {
  const account = useAccount();
  const [menuOpen, setMenuOpen] = useState(false);
  const [searchOpen, setSearchOpen] = useState(false);
  const location = useLocation();
  const navigate = useNavigate();
  const sessionChanged = useSessionChanged();

  const logout = useMutation({
    mutationFn: () => unwrap(api.POST('/api/v1/client/auth/logout/', {})),
    onSettled: async () => {
      await sessionChanged();
      navigate('/login');
    },
  });

  // The menu closes when a page opens.
  // biome-ignore lint/correctness/useExhaustiveDependencies: runs on navigation
  useEffect(() => setMenuOpen(false), [location.pathname]);

  useEffect(() => {
    const onKey = (event: KeyboardEvent) => {
      const target = event.target as HTMLElement | null;
      const typing =
        target && (target.tagName === 'INPUT' || target.tagName === 'TEXTAREA' || target.isContentEditable);
      if ((event.key === 'k' && (event.ctrlKey || event.metaKey)) || (event.key === '/' && !typing)) {
        event.preventDefault();
        setSearchOpen(true);
      }
    };
    window.addEventListener('keydown', onKey);
    return () => window.removeEventListener('keydown', onKey);
  }, []);

  return (
    <div className="shell">
      <a className="skip" href="#main">
        Skip to content
      </a>
      <header className="topbar">
        <Link to="/" className="brand" aria-label="Hostplane, dashboard">
          <img src="/favicon.svg" alt="" width="28" height="28" />
          <span>Hostplane</span>
        </Link>
        <button
          type="button"
          className="menu-button"
          aria-expanded={menuOpen}
          aria-controls="main-nav"
          onClick={() => setMenuOpen((open) => !open)}
        >
          Menu
        </button>
        <nav id="main-nav" aria-label="Main" className={menuOpen ? 'open' : undefined}>
          <ul>
            {NAV.map((item) => (
              <li key={item.to}>
                <NavLink
                  to={item.to}
                  end={item.end ?? false}
                  className={({ isActive }) =>
                    isActive || item.also?.some((p) => location.pathname.startsWith(p)) ? 'active' : undefined
                  }
                >
                  {item.label}
                </NavLink>
              </li>
            ))}
          </ul>
        </nav>
        <div className="topbar-tools">
          <button type="button" className="btn btn-ghost search-button" onClick={() => setSearchOpen(true)}>
            Search <kbd>Ctrl K</kbd>
          </button>
          <span className="who" title={account.data?.email}>
            {account.data?.name}
          </span>
          <button
            type="button"
            className="btn btn-secondary"
            onClick={() => logout.mutate()}
            disabled={logout.isPending}
          >
            Sign out
          </button>
        </div>
      </header>
      <DeletionBanner />
      <main id="main" tabIndex={-1}>
        {children}
      </main>
      {searchOpen ? <SearchDialog onClose={() => setSearchOpen(false)} /> : null}
    </div>
  );
}

/** The frame of the signed-out pages: the brand above a narrow card. */
export function AuthLayout({ title, children }: { title: string; children: ReactNode }) {
  useEffect(() => {
    document.title = `${title} · Hostplane`;
  }, [title]);
  return (
    <div className="auth-shell">
      <main id="main" className="auth-card">
        <Link to="/login" className="brand">
          <img src="/favicon.svg" alt="" width="32" height="32" />
          <span>Hostplane</span>
        </Link>
        <h1>{title}</h1>
        {children}
      </main>
    </div>
  );
}

/** Sets the document title of a signed-in page. */
export function useTitle(title: string): void {
  useEffect(() => {
    document.title = `${title} · Hostplane`;
  }, [title]);
}

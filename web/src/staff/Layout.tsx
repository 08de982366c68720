// The frame of the console's signed-in pages: the brand, the navigation with only the pages the
// member's role may use (never a link that would answer 403), who is signed in, and sign-out.

import { useMutation, useQueryClient } from '@tanstack/react-query';
import { type ReactNode, useEffect, useState } from 'react';
import { Link, NavLink, useLocation, useNavigate } from 'react-router';
import { call, staffApi } from './api.ts';
import { mayUse, type StaffRole, useMe } from './session.tsx';

/** Every page of the console with the least role that may open it (docs/STAFF.md's role table). */
export const STAFF_PAGES: { to: string; label: string; least: StaffRole }[] = [
  { to: '/staff', label: 'Dashboard', least: 'support' },
  { to: '/staff/accounts', label: 'Accounts', least: 'support' },
  { to: '/staff/services', label: 'Services', least: 'support' },
  { to: '/staff/deposits', label: 'Deposits', least: 'support' },
  { to: '/staff/billing', label: 'Billing', least: 'billing' },
  { to: '/staff/invoices', label: 'Invoices', least: 'billing' },
  { to: '/staff/refunds', label: 'Refunds', least: 'billing' },
  { to: '/staff/reconcile', label: 'Reconciliation', least: 'billing' },
  { to: '/staff/nodes', label: 'Nodes', least: 'admin' },
  { to: '/staff/catalog', label: 'Catalog', least: 'admin' },
  { to: '/staff/locations', label: 'Locations', least: 'admin' },
  { to: '/staff/os', label: 'OS', least: 'admin' },
  { to: '/staff/settings', label: 'Settings', least: 'admin' },
  { to: '/staff/directory', label: 'Staff', least: 'admin' },
  { to: '/staff/audit', label: 'Audit trail', least: 'admin' },
];

export function StaffLayout({ children }: { children: ReactNode }) {
  const me = useMe();
  const role = me.data?.staff.role;
  const [menuOpen, setMenuOpen] = useState(false);
  const location = useLocation();
  const navigate = useNavigate();
  const client = useQueryClient();
  const logout = useMutation({
    mutationFn: () => call(staffApi.POST('/api/v1/staff/auth/logout', {})),
    onSettled: () => {
      client.clear();
      navigate('/staff/login');
    },
  });
  // biome-ignore lint/correctness/useExhaustiveDependencies: closes on navigation
  useEffect(() => setMenuOpen(false), [location.pathname]);

  return (
    <div className="shell staff-shell">
      <a className="skip" href="#main">
        Skip to content
      </a>
      <header className="topbar">
        <Link to="/staff" className="brand" aria-label="Hostplane staff, home">
          <img src="/favicon.svg" alt="" width="28" height="28" />
          <span>Hostplane staff</span>
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
        <nav id="main-nav" aria-label="Staff" className={menuOpen ? 'open' : undefined}>
          <ul>
            {STAFF_PAGES.filter((p) => mayUse(role, p.least)).map((p) => (
              <li key={p.to}>
                <NavLink
                  to={p.to}
                  end={p.to === '/staff'}
                  className={({ isActive }) => (isActive ? 'active' : undefined)}
                >
                  {p.label}
                </NavLink>
              </li>
            ))}
          </ul>
        </nav>
        <div className="topbar-tools">
          <span className="who" title={me.data?.staff.email}>
            {me.data?.staff.name} <span className="staff-role">{role}</span>
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
      <main id="main" tabIndex={-1}>
        {children}
      </main>
    </div>
  );
}

/** What a page the member's role may not use shows (the server's 403, or the role known already). */
export function ForbiddenPage({ required }: { required?: string | undefined }) {
  useEffect(() => {
    document.title = 'Not for your role · Hostplane staff';
  }, []);
  const me = useMe();
  return (
    <section className="staff-forbidden">
      <h1>Your role may not use this</h1>
      <p>
        This page is for {required ? <strong>{required}</strong> : 'another role'} staff
        {me.data ? (
          <>
            ; you are signed in as <strong>{me.data.staff.role}</strong>
          </>
        ) : null}
        . An admin can change your role.
      </p>
      <p>
        <Link to="/staff">Back to the console</Link>
      </p>
    </section>
  );
}

/** A page for `least` and above: others see the 403 page without asking the server. */
export function RequireRole({ least, children }: { least: StaffRole; children: ReactNode }) {
  const me = useMe();
  if (!mayUse(me.data?.staff.role, least)) return <ForbiddenPage required={least} />;
  return children;
}

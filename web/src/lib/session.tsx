// Who is signed in: the account answer (which also carries the CSRF token). An anonymous
// visitor gets the anonymous session's token from auth/csrf/ so that sign-in and sign-up can
// post. Pages read the account with useAccount(); RequireAccount sends visitors to /login and
// brings them back to the page they asked for.

import { useQuery, useQueryClient } from '@tanstack/react-query';
import type { ReactNode } from 'react';
import { Navigate, useLocation } from 'react-router';
import { ApiError, api, unwrap } from './api.ts';

export type Account = Awaited<ReturnType<typeof fetchAccount>>;

async function fetchAccount() {
  try {
    const data = await unwrap(api.GET('/api/v1/client/account/'));
    return data.account;
  } catch (error) {
    if (error instanceof ApiError && error.status === 401) {
      // Signed out: the anonymous session's token lets the sign-in and sign-up forms post.
      await unwrap(api.GET('/api/v1/client/auth/csrf/'));
      return null;
    }
    throw error;
  }
}

export const ACCOUNT_KEY = ['account'] as const;

export function useAccount() {
  return useQuery({ queryKey: ACCOUNT_KEY, queryFn: fetchAccount, staleTime: 60_000, retry: 1 });
}

/** After sign-in or sign-out: everything cached belonged to the previous session. */
export function useSessionChanged(): () => Promise<void> {
  const client = useQueryClient();
  return async () => {
    client.clear();
    await client.fetchQuery({ queryKey: ACCOUNT_KEY, queryFn: fetchAccount });
  };
}

export function RequireAccount({ children }: { children: ReactNode }) {
  const account = useAccount();
  const location = useLocation();
  if (account.isPending)
    return (
      <p className="loading" role="status">
        Loading your account…
      </p>
    );
  if (account.isError) {
    return (
      <div className="page narrow">
        <h1>We could not load your account</h1>
        <p>{account.error.message}</p>
        <button type="button" onClick={() => account.refetch()}>
          Try again
        </button>
      </div>
    );
  }
  if (account.data === null) {
    const next = `${location.pathname}${location.search}`;
    return <Navigate to={`/login${next === '/' ? '' : `?next=${encodeURIComponent(next)}`}`} replace />;
  }
  return <>{children}</>;
}

/** Where to go after signing in: the page asked for, if it is one of ours. */
export function nextPath(search: string): string {
  const next = new URLSearchParams(search).get('next');
  return next?.startsWith('/') && !next.startsWith('//') ? next : '/';
}

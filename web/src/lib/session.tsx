// Who is signed in: the account answer (which also carries the CSRF token). An anonymous
// visitor gets the anonymous session's token from auth/csrf/ so that sign-in and sign-up can
// post. A visitor who gave the password of an account with two-factor sign-in on holds a half
// session (CONTRACT §11): the account answer is 401 two_factor_required, and the sign-in page
// asks for the second factor. Pages read the account with useAccount(); RequireAccount sends
// visitors (and half-signed-in ones) to /login and brings them back to the page they asked for.

import { useQuery, useQueryClient } from '@tanstack/react-query';
import type { ReactNode } from 'react';
import { Navigate, useLocation } from 'react-router';
import { ApiError, api, unwrap } from './api.ts';

/** The ways a half session may be completed (the sign-in answer's `methods`). */
export type SecondFactorMethod = 'totp' | 'recovery' | 'passkey';

export interface SessionState {
  account: Awaited<ReturnType<typeof fetchSignedIn>> | null;
  /** Set while the session waits for its second factor. */
  secondStep: { methods: SecondFactorMethod[] } | null;
}

export type Account = SessionState['account'];

// The methods of the sign-in answer, kept for this tab so a reload during the second step offers
// the same ones (the account answer's 401 does not list them). Not a secret.
const METHODS_KEY = 'hostplane.2fa-methods';
const DEFAULT_METHODS: SecondFactorMethod[] = ['totp', 'recovery'];

function storedMethods(): SecondFactorMethod[] {
  try {
    const raw = JSON.parse(sessionStorage.getItem(METHODS_KEY) ?? 'null') as unknown;
    if (Array.isArray(raw) && raw.length > 0) return raw.filter((m): m is SecondFactorMethod => typeof m === 'string');
  } catch {
    // storage unavailable or garbled: the defaults
  }
  return DEFAULT_METHODS;
}

function storeMethods(methods: SecondFactorMethod[] | null): void {
  try {
    if (methods === null) sessionStorage.removeItem(METHODS_KEY);
    else sessionStorage.setItem(METHODS_KEY, JSON.stringify(methods));
  } catch {
    // storage unavailable: a reload offers the defaults
  }
}

async function fetchSignedIn() {
  const data = await unwrap(api.GET('/api/v1/client/account/'));
  return data.account;
}

async function fetchSession(): Promise<SessionState> {
  try {
    const account = await fetchSignedIn();
    storeMethods(null);
    return { account, secondStep: null };
  } catch (error) {
    if (error instanceof ApiError && error.status === 401) {
      // Signed out, or half signed in: the session's token lets the sign-in forms (or the second
      // step) post.
      await unwrap(api.GET('/api/v1/client/auth/csrf/'));
      if (error.code === 'two_factor_required') return { account: null, secondStep: { methods: storedMethods() } };
      storeMethods(null);
      return { account: null, secondStep: null };
    }
    throw error;
  }
}

export const ACCOUNT_KEY = ['account'] as const;

const sessionQuery = { queryKey: ACCOUNT_KEY, queryFn: fetchSession, staleTime: 60_000, retry: 1 } as const;

/** The signed-in account (null: nobody, or a sign-in still waiting for its second factor). */
export function useAccount() {
  return useQuery({ ...sessionQuery, select: (state: SessionState) => state.account });
}

/** The whole state, with the second step a half session waits for. */
export function useSessionState() {
  return useQuery(sessionQuery);
}

/** After sign-in or sign-out: everything cached belonged to the previous session. */
export function useSessionChanged(): () => Promise<void> {
  const client = useQueryClient();
  return async () => {
    // The session query itself stays, so the pages watching it see the new state at once.
    client.removeQueries({ predicate: (query) => query.queryKey[0] !== ACCOUNT_KEY[0] });
    client.getMutationCache().clear();
    await client.fetchQuery({ ...sessionQuery, staleTime: 0 });
  };
}

/** A sign-in answered two_factor_required: the page shows the second step. */
export function useSecondStepStarted(): (methods: SecondFactorMethod[]) => void {
  const client = useQueryClient();
  return (methods) => {
    storeMethods(methods);
    // The session query stays (its observers see the new state); anything else cached goes.
    client.removeQueries({ predicate: (query) => query.queryKey[0] !== ACCOUNT_KEY[0] });
    client.setQueryData<SessionState>(ACCOUNT_KEY, { account: null, secondStep: { methods } });
  };
}

/** Replace the cached account (after the profile was saved). */
export function useSetAccount(): (account: NonNullable<Account>) => void {
  const client = useQueryClient();
  return (account) => client.setQueryData<SessionState>(ACCOUNT_KEY, { account, secondStep: null });
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

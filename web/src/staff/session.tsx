// Who is signed in to the console: GET /api/v1/staff/me (the member, their role, the session's
// stage). The role decides which links the layout shows and which pages open; the server decides
// again on every request (a changed role counts at once).

import { useQuery, useQueryClient } from '@tanstack/react-query';
import type { ReactNode } from 'react';
import { Navigate, useLocation } from 'react-router';
import { Loading } from '../components/ui.tsx';
import { ApiError, call, staffApi } from './api.ts';

export const ME_KEY = ['staff', 'me'] as const;

export type StaffRole = 'support' | 'billing' | 'admin';
const RANK: Record<StaffRole, number> = { support: 1, billing: 2, admin: 3 };

/** support ⊂ billing ⊂ admin (docs/STAFF.md): may `role` use what `least` may? */
export function mayUse(role: StaffRole | undefined, least: StaffRole): boolean {
  return role !== undefined && RANK[role] >= RANK[least];
}

export function useMe() {
  return useQuery({
    queryKey: ME_KEY,
    queryFn: async () => {
      try {
        return await call(staffApi.GET('/api/v1/staff/me'));
      } catch (error) {
        if (error instanceof ApiError && error.status === 401) return null;
        throw error;
      }
    },
    staleTime: 30_000,
  });
}

/** After a sign-in step: forget the member as known (a cached "signed out" would send the next page back to sign-in) and ask again. */
export function useMeChanged(): () => Promise<void> {
  const client = useQueryClient();
  return () => client.resetQueries({ queryKey: ME_KEY });
}

/** A page for signed-in members (second factor done); otherwise sign-in, or the factor step. */
export function RequireStaff({ children }: { children: ReactNode }) {
  const me = useMe();
  const location = useLocation();
  if (me.isPending) return <Loading what="Checking your session" />;
  if (me.data === null || me.isError) {
    return <Navigate to={`/staff/login?next=${encodeURIComponent(location.pathname + location.search)}`} replace />;
  }
  if (me.data.stage !== 'full') return <Navigate to="/staff/second-factor" replace />;
  return children;
}

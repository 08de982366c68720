// A page whose request the server refused with 403 (the role changed under the member, or the
// page was opened by URL) shows the "Your role may not use this" page instead of its content.

import type { ReactNode } from 'react';
import { ApiError } from './api.ts';
import { ForbiddenPage } from './Layout.tsx';

export function ForbiddenOr({ error, children }: { error: unknown; children: ReactNode }) {
  if (error instanceof ApiError && error.status === 403) {
    const required = typeof error.details.required === 'string' ? error.details.required : undefined;
    return <ForbiddenPage required={required} />;
  }
  return children;
}

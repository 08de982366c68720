// Settings (admin; GET settings): the configuration this server runs with, read-only. Hostplane
// keeps no settings in its database — every setting is an environment variable read at start — so
// this page shows each one's value in effect, its meaning and its default; a secret shows only
// whether it is set. A change is a new value in the environment and a restart (docs/DEPLOYMENT.md).

import { useQuery } from '@tanstack/react-query';
import { ErrorAlert, Loading, PageHeader } from '../components/ui.tsx';
import { useStaffTitle } from './AuthPages.tsx';
import { call, staffApi } from './api.ts';
import { ForbiddenOr } from './Forbidden.tsx';
import { StaffTable } from './StaffTable.tsx';

export default function SettingsPage() {
  useStaffTitle('Settings');
  const settings = useQuery({
    queryKey: ['staff', 'settings'],
    queryFn: () => call(staffApi.GET('/api/v1/staff/settings')),
  });

  return (
    <ForbiddenOr error={settings.error}>
      <PageHeader title="Settings" />
      <p className="muted">
        Read-only: every setting is an environment variable, read when the server starts. To change one, set it in the
        server's environment and restart the API and the worker. Secrets show only whether they are set.
      </p>
      {settings.isPending ? (
        <Loading what="Loading the settings" />
      ) : settings.isError ? (
        <ErrorAlert error={settings.error} />
      ) : (
        <>
          <p>
            Database engine: <strong>{settings.data.engine}</strong>
          </p>
          <StaffTable
            caption="Every setting with the value in effect"
            className="staff-settings"
            columns={['Variable', 'In effect', 'Default', 'What it does']}
          >
            {settings.data.settings.map((s) => (
              <tr key={s.name}>
                <td data-label="Variable" className="mono staff-wrap">
                  {s.name}
                </td>
                <td data-label="In effect" className="staff-wrap">
                  <span className={s.secret ? undefined : 'mono'}>{s.value}</span>
                  {s.secret ? <span className="muted"> (secret)</span> : null}
                </td>
                <td data-label="Default" className="staff-wrap muted">
                  {s.default}
                </td>
                <td data-label="What it does" className="staff-wrap">
                  {s.description}
                </td>
              </tr>
            ))}
          </StaffTable>
        </>
      )}
    </ForbiddenOr>
  );
}

// The game server's management, inside the service page: console, files, backups, databases,
// schedules, startup, users and settings as tabs (a tab list: arrow keys, Home and End move
// between tabs). Everything goes through one route, /api/v1/client/game/?service=&action=
// (spec 4.9, CONTRACT §6). While the server is still being made or installed, the panel shows
// where provisioning is instead, and asks again every few seconds.

import { type KeyboardEvent, lazy, Suspense, useId, useRef, useState } from 'react';
import { Alert, Button, ErrorAlert, Loading, Status } from '../../../components/ui.tsx';
import { ApiError } from '../../../lib/api.ts';
import { GameBackups, GameDatabases } from './GameBackups.tsx';
import GameFiles from './GameFiles.tsx';
import GameSchedules from './GameSchedules.tsx';
import { GameSettings, GameStartup, GameUsers } from './GameSettings.tsx';
import { type GameServer, useGame } from './gameApi.ts';
import './game.css';

const GameConsole = lazy(() => import('./GameConsole.tsx'));

const TABS = [
  ['console', 'Console'],
  ['files', 'Files'],
  ['backups', 'Backups'],
  ['databases', 'Databases'],
  ['schedules', 'Schedules'],
  ['startup', 'Startup'],
  ['users', 'Users'],
  ['settings', 'Settings'],
] as const;

type Tab = (typeof TABS)[number][0];

/** States in which the panel server is not there yet (or not usable): show provisioning. */
const NOT_READY = new Set(['no_server', 'server_installing']);

interface Provision {
  provision: {
    status: string;
    server_created: boolean;
    panel_status: string | null;
    job: { status: string; step: string | null; progress: number; error: string | null } | null;
  };
}

function Provisioning({ serviceId }: { serviceId: number }) {
  const status = useGame<Provision>(serviceId, 'provision_status', undefined, { refetchInterval: () => 5000 });
  const p = status.data?.provision;
  return (
    <div className="card" role="status">
      <h3>Your game server is being set up</h3>
      {p ? (
        <>
          <p>
            Service <Status value={p.status} /> · game panel:{' '}
            {p.panel_status ?? (p.server_created ? 'made' : 'not yet')}
          </p>
          {p.job ? (
            <>
              <label htmlFor={`game-provision-${serviceId}`}>
                {p.job.step ? `Step: ${p.job.step}` : 'Waiting to start'} ({p.job.progress}%)
              </label>
              <progress id={`game-provision-${serviceId}`} className="progress" max={100} value={p.job.progress} />
              {p.job.error ? <Alert kind="error">{p.job.error}</Alert> : null}
            </>
          ) : null}
          <p className="muted">This updates by itself; the server's tools appear here when the install finishes.</p>
        </>
      ) : (
        <Loading what="Checking the install" />
      )}
      <ErrorAlert error={status.error} />
    </div>
  );
}

export default function GamePanel({ serviceId }: { serviceId: number }) {
  const [tab, setTab] = useState<Tab>('console');
  const tabs = useRef<(HTMLButtonElement | null)[]>([]);
  const id = useId();
  const overview = useGame<{ server: GameServer }>(serviceId, 'overview', undefined, {
    // While the install runs, ask again; once it is there, the console keeps the power state live.
    refetchInterval: (data) => (data ? false : 5000),
  });

  const error = overview.error;
  if (overview.isPending) return <Loading what="Loading the game server" />;
  if (error instanceof ApiError && NOT_READY.has(error.code)) return <Provisioning serviceId={serviceId} />;
  if (error instanceof ApiError && error.code === 'suspended') {
    return (
      <Alert kind="warning">
        <p>{error.message}</p>
        <p>The server's tools come back when the service is active again; see the service's status above.</p>
      </Alert>
    );
  }
  if (error && !overview.data) {
    return (
      <div>
        <ErrorAlert error={error} />
        <Button variant="secondary" onClick={() => void overview.refetch()} busy={overview.isFetching}>
          Try again
        </Button>
      </div>
    );
  }
  const server = overview.data?.server;

  const choose = (next: Tab) => setTab(next);
  const onKey = (event: KeyboardEvent<HTMLButtonElement>, index: number) => {
    const last = TABS.length - 1;
    const to =
      event.key === 'ArrowRight' || event.key === 'ArrowDown'
        ? index === last
          ? 0
          : index + 1
        : event.key === 'ArrowLeft' || event.key === 'ArrowUp'
          ? index === 0
            ? last
            : index - 1
          : event.key === 'Home'
            ? 0
            : event.key === 'End'
              ? last
              : null;
    if (to === null) return;
    event.preventDefault();
    const next = TABS[to];
    if (!next) return;
    choose(next[0]);
    tabs.current[to]?.focus();
  };

  return (
    <div className="game-panel">
      {server ? (
        <p className="game-summary">
          <strong>{server.name}</strong>
          {server.address ? (
            <>
              {' '}
              · players connect to <span className="mono">{server.address}</span>
            </>
          ) : null}
        </p>
      ) : null}
      <div className="game-tabs" role="tablist" aria-label="Game server">
        {TABS.map(([key, label], index) => (
          <button
            key={key}
            ref={(el) => {
              tabs.current[index] = el;
            }}
            type="button"
            role="tab"
            id={`${id}-tab-${key}`}
            aria-selected={tab === key}
            aria-controls={`${id}-panel-${key}`}
            tabIndex={tab === key ? 0 : -1}
            onClick={() => choose(key)}
            onKeyDown={(e) => onKey(e, index)}
          >
            {label}
          </button>
        ))}
      </div>

      {/* The console stays connected (and keeps its output) while another tab is open. */}
      <div
        role="tabpanel"
        id={`${id}-panel-console`}
        aria-labelledby={`${id}-tab-console`}
        hidden={tab !== 'console'}
        className="game-tabpanel"
      >
        <Suspense fallback={<Loading what="Opening the console" />}>
          <GameConsole serviceId={serviceId} initialPower={server?.power} visible={tab === 'console'} />
        </Suspense>
      </div>
      {tab !== 'console' ? (
        <div role="tabpanel" id={`${id}-panel-${tab}`} aria-labelledby={`${id}-tab-${tab}`} className="game-tabpanel">
          {tab === 'files' ? <GameFiles serviceId={serviceId} /> : null}
          {tab === 'backups' ? <GameBackups serviceId={serviceId} /> : null}
          {tab === 'databases' ? <GameDatabases serviceId={serviceId} /> : null}
          {tab === 'schedules' ? <GameSchedules serviceId={serviceId} /> : null}
          {tab === 'startup' ? <GameStartup serviceId={serviceId} /> : null}
          {tab === 'users' ? <GameUsers serviceId={serviceId} /> : null}
          {tab === 'settings' ? <GameSettings serviceId={serviceId} server={server} /> : null}
        </div>
      ) : null}
    </div>
  );
}

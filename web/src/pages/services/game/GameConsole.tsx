// The server console: the server's output in a read-only terminal (xterm.js) over the console
// WebSocket, a command line with its own history (Up/Down, kept in memory only), and the power
// buttons. The socket is opened with a one-time ticket (action console_ws, valid 60 s) and speaks
// Wings' protocol, relayed by server/src/http/console.ts: we send `send logs`, `send command`;
// we get `console output`, `status`, `stats`, `daemon message`, `daemon error`, `install …`.
// A dropped socket is reopened with a fresh ticket after 1, 2, 4 … 30 s, with a banner meanwhile.

import { useQueryClient } from '@tanstack/react-query';
import { FitAddon } from '@xterm/addon-fit';
import { Terminal } from '@xterm/xterm';
import '@xterm/xterm/css/xterm.css';
import { type FormEvent, type KeyboardEvent, useCallback, useEffect, useRef, useState } from 'react';
import { Alert, Button, ErrorAlert, fieldError, Status } from '../../../components/ui.tsx';
import { ApiError } from '../../../lib/api.ts';
import { sameOriginSocketUrl } from '../../../lib/socket.ts';
import { bytes, gamePost, useGameAction } from './gameApi.ts';
import { openWithoutInlineStyles } from './xtermCsp.ts';

type Link = 'connecting' | 'open' | 'waiting' | 'stopped';

interface Stats {
  memory_bytes: number;
  memory_limit_bytes: number;
  cpu_absolute: number;
  uptime: number;
  disk_bytes: number;
}

const MAX_DELAY_S = 30;
const HISTORY_MAX = 100;

/** A "select graphic rendition" escape: ESC [ params m. */
const SGR = new RegExp(`${String.fromCharCode(27)}\\[([0-9;]*)m`, 'g');

/** An RGB colour as the nearest of the 6×6×6 cube of the 256-colour palette. */
const cube = (r: number, g: number, b: number) => {
  const step = (v: number) => Math.round((Math.min(255, Math.max(0, v)) / 255) * 5);
  return 16 + 36 * step(r) + 6 * step(g) + step(b);
};

/**
 * 24-bit colours (`ESC[38;2;r;g;bm`) as 256-colour ones: xterm paints the 256 palette colours
 * with classes, but a 24-bit colour with a style attribute, which the CSP refuses.
 */
function paletteColours(text: string): string {
  if (!text.includes(';2;')) return text;
  return text.replace(SGR, (_all, params: string) => {
    const out: string[] = [];
    const parts = params.split(';');
    for (let i = 0; i < parts.length; i++) {
      const p = parts[i];
      if ((p === '38' || p === '48') && parts[i + 1] === '2' && i + 4 < parts.length) {
        out.push(p, '5', String(cube(Number(parts[i + 2]), Number(parts[i + 3]), Number(parts[i + 4]))));
        i += 4;
      } else out.push(p ?? '');
    }
    return `\x1b[${out.join(';')}m`;
  });
}

function uptime(ms: number): string {
  const s = Math.floor(ms / 1000);
  const h = Math.floor(s / 3600);
  const m = Math.floor((s % 3600) / 60);
  return h > 0 ? `${h} h ${m} min` : m > 0 ? `${m} min ${s % 60} s` : `${s} s`;
}

export default function GameConsole({
  serviceId,
  initialPower,
  visible,
}: {
  serviceId: number;
  initialPower: string | undefined;
  visible: boolean;
}) {
  const holder = useRef<HTMLElement>(null);
  const term = useRef<Terminal | null>(null);
  const fit = useRef<FitAddon | null>(null);
  const socket = useRef<WebSocket | null>(null);
  const reconnect = useRef<() => void>(() => {});
  const [link, setLink] = useState<Link>('connecting');
  const [retryIn, setRetryIn] = useState(0);
  const [linkError, setLinkError] = useState<string | null>(null);
  const [power, setPower] = useState<string | undefined>(initialPower);
  const [stats, setStats] = useState<Stats | null>(null);
  const [needsEula, setNeedsEula] = useState(false);
  // The service's header and lists show its power too: a status frame refreshes them.
  const queryClient = useQueryClient();

  useEffect(() => {
    if (initialPower && power === undefined) setPower(initialPower);
  }, [initialPower, power]);

  // The terminal and the socket live as long as the panel is on the page.
  useEffect(() => {
    const parent = holder.current;
    if (!parent) return;
    const terminal = new Terminal({
      disableStdin: true,
      convertEol: true,
      cursorBlink: false,
      cursorInactiveStyle: 'none',
      scrollback: 5000,
      fontSize: 13,
      fontFamily: 'ui-monospace, "SFMono-Regular", "Cascadia Mono", "DejaVu Sans Mono", monospace',
      theme: { background: '#0f141a', foreground: '#e6ebf1', cursor: '#0f141a', cursorAccent: '#0f141a' },
    });
    const fitter = new FitAddon();
    terminal.loadAddon(fitter);
    const undoStyles = openWithoutInlineStyles(terminal, parent);
    term.current = terminal;
    fit.current = fitter;
    const refit = () => {
      if (parent.offsetParent !== null) {
        try {
          fitter.fit();
        } catch {
          // Not laid out yet.
        }
      }
    };
    refit();
    const observer = new ResizeObserver(() => requestAnimationFrame(refit));
    observer.observe(parent);

    const note = (text: string) => terminal.write(`\x1b[2m[Hostplane] ${text}\x1b[0m\n`);
    let alive = true;
    let opened = false;
    let attempt = 0;
    let timer: number | undefined;
    let ticker: number | undefined;

    const clearTimers = () => {
      window.clearTimeout(timer);
      window.clearInterval(ticker);
    };
    const later = () => {
      if (!alive) return;
      const delay = Math.min(MAX_DELAY_S, 2 ** attempt);
      attempt++;
      setLink('waiting');
      setRetryIn(delay);
      clearTimers();
      ticker = window.setInterval(() => setRetryIn((s) => Math.max(0, s - 1)), 1000);
      timer = window.setTimeout(connect, delay * 1000);
    };
    const onFrame = (raw: unknown) => {
      if (typeof raw !== 'string') return;
      let frame: { event?: unknown; args?: unknown };
      try {
        frame = JSON.parse(raw) as { event?: unknown; args?: unknown };
      } catch {
        return;
      }
      const args = Array.isArray(frame.args) ? frame.args : [];
      const first = typeof args[0] === 'string' ? args[0] : '';
      switch (frame.event) {
        case 'console output':
          terminal.write(`${paletteColours(first)}\n`);
          if (/agree to the eula/i.test(first)) setNeedsEula(true);
          break;
        case 'status':
          setPower(first || undefined);
          queryClient.invalidateQueries({ queryKey: ['service', serviceId] });
          queryClient.invalidateQueries({ queryKey: ['services'] });
          break;
        case 'stats':
          try {
            setStats(JSON.parse(first) as Stats);
          } catch {
            // Not the shape we know: keep the last one.
          }
          break;
        case 'daemon message':
          terminal.write(`\x1b[1;33m${first}\x1b[0m\n`);
          break;
        case 'daemon error':
          terminal.write(`\x1b[1;31m${first}\x1b[0m\n`);
          break;
        case 'install started':
          note('The game is being installed…');
          break;
        case 'install completed':
          note('Install finished.');
          break;
        default:
          break;
      }
    };
    async function connect() {
      if (!alive) return;
      clearTimers();
      setLink('connecting');
      let url: string;
      try {
        const answer = await gamePost<{ console: { url: string } }>(serviceId, 'console_ws');
        url = sameOriginSocketUrl(answer.console.url);
      } catch (error) {
        if (!alive) return;
        setLinkError(error instanceof Error ? error.message : String(error));
        later();
        return;
      }
      if (!alive) return;
      const ws = new WebSocket(url);
      socket.current = ws;
      ws.onopen = () => {
        if (!alive) return ws.close(1000);
        attempt = 0;
        setLinkError(null);
        // The node sends its recent output again: start from a clean screen, not a second copy.
        if (opened) terminal.clear();
        opened = true;
        ws.send(JSON.stringify({ event: 'send logs', args: [null] }));
      };
      // Open once the node speaks (its first frame, the server's state, comes after it accepted
      // us): output from before that is not shown, so the power buttons wait for it too.
      let heard = false;
      ws.onmessage = (event) => {
        if (!heard) {
          heard = true;
          setLink('open');
        }
        onFrame(event.data);
      };
      ws.onclose = (event) => {
        if (socket.current === ws) socket.current = null;
        if (!alive) return;
        if (event.reason) setLinkError(`The console closed: ${event.reason}.`);
        else if (!event.wasClean) setLinkError('The console connection was lost.');
        note('Disconnected.');
        later();
      };
    }
    reconnect.current = () => {
      attempt = 0;
      socket.current?.close(1000);
      void connect();
    };
    void connect();

    return () => {
      alive = false;
      clearTimers();
      observer.disconnect();
      socket.current?.close(1000);
      socket.current = null;
      terminal.dispose();
      undoStyles();
      term.current = null;
      fit.current = null;
    };
  }, [serviceId, queryClient]);

  // Shown again after another tab: the terminal measures its size anew.
  useEffect(() => {
    if (visible) requestAnimationFrame(() => fit.current?.fit());
  }, [visible]);

  // ---- the command line ----
  const [command, setCommand] = useState('');
  const history = useRef<string[]>([]);
  const position = useRef(-1);
  const draft = useRef('');
  const viaApi = useGameAction(serviceId, 'command');

  const submit = (event: FormEvent) => {
    event.preventDefault();
    const line = command.trim();
    if (line === '') return;
    const list = history.current;
    if (list[list.length - 1] !== line) list.push(line);
    if (list.length > HISTORY_MAX) list.shift();
    position.current = -1;
    draft.current = '';
    const ws = socket.current;
    if (ws && ws.readyState === WebSocket.OPEN) {
      ws.send(JSON.stringify({ event: 'send command', args: [line] }));
      viaApi.reset();
      setCommand('');
    } else {
      // Without the socket the command still goes, one line through the API.
      viaApi.mutate({ command: line }, { onSuccess: () => setCommand('') });
    }
  };

  const onKey = (event: KeyboardEvent<HTMLInputElement>) => {
    const list = history.current;
    if (event.key === 'ArrowUp') {
      if (list.length === 0) return;
      event.preventDefault();
      if (position.current === -1) {
        draft.current = command;
        position.current = list.length - 1;
      } else if (position.current > 0) position.current--;
      setCommand(list[position.current] ?? '');
    } else if (event.key === 'ArrowDown') {
      if (position.current === -1) return;
      event.preventDefault();
      if (position.current < list.length - 1) {
        position.current++;
        setCommand(list[position.current] ?? '');
      } else {
        position.current = -1;
        setCommand(draft.current);
      }
    }
  };

  // ---- power ----
  const powerAction = useGameAction<{ signal: string }>(serviceId, 'power', ['overview', 'resources']);
  const eula = useGameAction(serviceId, 'eula_accept');
  const [confirmKill, setConfirmKill] = useState(false);
  const send = (signal: 'start' | 'stop' | 'restart' | 'kill') => {
    setConfirmKill(false);
    powerAction.mutate({ signal });
  };
  const running = power === 'running' || power === 'starting';
  const offline = power === 'offline';
  const reconnectNow = useCallback(() => reconnect.current(), []);

  const commandError = fieldError(viaApi.error, 'command');

  return (
    // data-link says whether the node is connected (open, connecting, waiting): what a script
    // driving the page waits on before it presses Start, as a person waits for the banner to go.
    <div className="game-console" data-link={link}>
      {link !== 'open' ? (
        <div className={`alert ${link === 'connecting' ? 'alert-info' : 'alert-warning'} game-banner`}>
          <p>
            {/* A live region with words that do not change each second; the countdown stays outside it. */}
            <span role="status">
              {link === 'connecting'
                ? 'Connecting to the console…'
                : ['Console disconnected.', linkError].filter(Boolean).join(' ')}
            </span>
            {link === 'waiting' ? <span> Trying again in {retryIn} s.</span> : null}
          </p>
          {link === 'waiting' ? (
            <Button variant="secondary" onClick={reconnectNow}>
              Reconnect now
            </Button>
          ) : null}
        </div>
      ) : null}

      <div className="game-console-head">
        <span>
          Power: <Status value={power ?? 'unknown'} />
        </span>
        {stats ? (
          <span className="muted">
            CPU {stats.cpu_absolute.toFixed(0)}% · Memory {bytes(stats.memory_bytes)}
            {stats.memory_limit_bytes > 0 ? ` of ${bytes(stats.memory_limit_bytes)}` : ''} · Disk{' '}
            {bytes(stats.disk_bytes)}
            {stats.uptime > 0 ? ` · Up ${uptime(stats.uptime)}` : ''}
          </span>
        ) : null}
      </div>

      <section className="game-term" ref={holder} aria-label="Server console output (read-only)" />

      {needsEula ? (
        <Alert kind="warning">
          <p>The server will not start until its licence (the Minecraft EULA) is accepted.</p>
          <div className="row">
            <Button busy={eula.isPending} onClick={() => eula.mutate({}, { onSuccess: () => setNeedsEula(false) })}>
              Accept the EULA
            </Button>
          </div>
          <ErrorAlert error={eula.error} />
        </Alert>
      ) : null}

      <div className="game-console-controls">
        <form className="game-command" onSubmit={submit}>
          <div className={`field${commandError ? ' has-error' : ''}`}>
            <label htmlFor={`game-command-${serviceId}`}>Command</label>
            <div className="game-command-line">
              <input
                id={`game-command-${serviceId}`}
                value={command}
                onChange={(e) => {
                  setCommand(e.target.value);
                  position.current = -1;
                }}
                onKeyDown={onKey}
                autoComplete="off"
                autoCapitalize="off"
                spellCheck={false}
                maxLength={1000}
                placeholder="say hello"
                aria-describedby={`game-command-${serviceId}-hint`}
                aria-invalid={commandError ? true : undefined}
              />
              <Button type="submit" busy={viaApi.isPending} disabled={command.trim() === ''}>
                Send
              </Button>
            </div>
            <p className="hint" id={`game-command-${serviceId}-hint`}>
              Enter sends; Up and Down go through the commands you sent.
            </p>
            {commandError ? <p className="field-error">{commandError}</p> : null}
          </div>
          {viaApi.error && !commandError ? <ErrorAlert error={viaApi.error} fields={['command']} /> : null}
        </form>

        <fieldset className="game-power">
          <legend>Power</legend>
          <div className="row">
            <Button
              variant="secondary"
              disabled={running}
              busy={powerAction.isPending && powerAction.variables?.signal === 'start'}
              onClick={() => send('start')}
            >
              Start
            </Button>
            <Button
              variant="secondary"
              disabled={offline}
              busy={powerAction.isPending && powerAction.variables?.signal === 'restart'}
              onClick={() => send('restart')}
            >
              Restart
            </Button>
            <Button
              variant="secondary"
              disabled={offline}
              busy={powerAction.isPending && powerAction.variables?.signal === 'stop'}
              onClick={() => send('stop')}
            >
              Stop
            </Button>
            {confirmKill ? (
              <>
                <Button variant="danger" onClick={() => send('kill')}>
                  Kill now
                </Button>
                <Button variant="ghost" onClick={() => setConfirmKill(false)}>
                  Cancel
                </Button>
              </>
            ) : (
              <Button
                variant="danger"
                disabled={offline}
                busy={powerAction.isPending && powerAction.variables?.signal === 'kill'}
                onClick={() => setConfirmKill(true)}
              >
                Kill
              </Button>
            )}
          </div>
          {confirmKill ? (
            <p className="hint">Kill ends the server at once: anything not saved is lost. Stop saves first.</p>
          ) : null}
          {powerAction.isSuccess ? (
            <p className="hint" role="status">
              {powerAction.data.message}
            </p>
          ) : null}
          <ErrorAlert error={powerAction.error} />
          {powerAction.error instanceof ApiError && /eula/i.test(powerAction.error.message) ? (
            <Button onClick={() => setNeedsEula(true)}>Accept the EULA</Button>
          ) : null}
        </fieldset>
      </div>
    </div>
  );
}

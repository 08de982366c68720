// The VPS screen: GET /services/?id=&action=sso answers a one-time console ticket (valid 60 s):
// a WebSocket URL on our own server (/ws/console/?t=…) that relays to the node's VNC console,
// and the RFB password. noVNC (loaded only when the console opens) speaks RFB over it.

import { useEffect, useRef, useState } from 'react';
import { Alert, Button, ErrorAlert } from '../../../components/ui.tsx';
import { api, unwrap } from '../../../lib/api.ts';
import { sameOriginSocketUrl } from '../../../lib/socket.ts';
import type { Service } from '../common.ts';

type RfbInstance = import('@novnc/novnc').default;
type Phase = 'closed' | 'asking' | 'connecting' | 'connected' | 'ended';

export function ConsoleCard({ service }: { service: Service }) {
  const screen = useRef<HTMLDivElement>(null);
  const rfb = useRef<RfbInstance | null>(null);
  const [phase, setPhase] = useState<Phase>('closed');
  const [message, setMessage] = useState('');
  const [error, setError] = useState<unknown>(null);

  useEffect(() => () => rfb.current?.disconnect(), []);

  async function open() {
    setError(null);
    setMessage('');
    setPhase('asking');
    try {
      const data = await unwrap(
        api.GET('/api/v1/client/services/', { params: { query: { id: service.id, action: 'sso' } } }),
      );
      if (!('sso' in data) || data.sso.kind !== 'console')
        throw new Error('The server did not answer a console ticket.');
      const { default: RFB } = await import('@novnc/novnc');
      const target = screen.current;
      if (!target) return;
      setPhase('connecting');
      const client = new RFB(target, sameOriginSocketUrl(data.sso.url), {
        credentials: { password: data.sso.password ?? '' },
      });
      client.scaleViewport = true;
      // A console that never finishes the RFB handshake (a node that does not answer) is closed.
      const watchdog = window.setTimeout(() => {
        setMessage('The console did not answer within 15 seconds. Try again, or restart the server if it hangs.');
        client.disconnect();
      }, 15_000);
      client.addEventListener('connect', () => {
        window.clearTimeout(watchdog);
        setPhase('connected');
        client.focus();
      });
      client.addEventListener('disconnect', (event) => {
        window.clearTimeout(watchdog);
        const clean = (event as CustomEvent<{ clean: boolean }>).detail?.clean;
        setPhase('ended');
        setMessage(
          (old) =>
            old || (clean ? 'The console was closed.' : 'The console connection was lost or could not be opened.'),
        );
        rfb.current = null;
      });
      client.addEventListener('securityfailure', (event) => {
        const reason = (event as CustomEvent<{ reason?: string }>).detail?.reason;
        setMessage(`The console refused the sign-in${reason ? `: ${reason}` : ''}.`);
      });
      rfb.current = client;
    } catch (e) {
      setError(e);
      setPhase('closed');
    }
  }

  const live = phase === 'connecting' || phase === 'connected';
  return (
    <section className="card" aria-labelledby="console-h">
      <h2 id="console-h">Console</h2>
      <p className="muted">
        The server’s screen, as if a monitor and keyboard were plugged in: use it when SSH does not answer. A console
        link works once, within a minute.
      </p>
      <div className="row">
        {!live ? (
          <Button busy={phase === 'asking'} disabled={service.status !== 'active'} onClick={open}>
            {phase === 'ended' ? 'Reconnect the console' : 'Open the console'}
          </Button>
        ) : (
          <>
            <Button variant="secondary" disabled={phase !== 'connected'} onClick={() => rfb.current?.sendCtrlAltDel()}>
              Send Ctrl+Alt+Del
            </Button>
            <Button variant="secondary" onClick={() => rfb.current?.disconnect()}>
              Close the console
            </Button>
          </>
        )}
      </div>
      <p className="muted" aria-live="polite">
        {phase === 'connecting' ? 'Connecting…' : phase === 'connected' ? 'Connected. Click the screen to type.' : ''}
      </p>
      {message ? <Alert kind="warning">{message}</Alert> : null}
      {error ? <ErrorAlert error={error} /> : null}
      <div
        ref={screen}
        className={`console-screen${live ? ' open' : ''}`}
        role="application"
        aria-label={`Screen of ${service.label}`}
      />
    </section>
  );
}

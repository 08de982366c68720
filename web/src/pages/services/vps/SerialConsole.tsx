// The VPS serial console: GET /services/?id=&action=sso&console=serial answers a one-time ticket
// (60 s) for our own WebSocket, which relays to the node's serial terminal (Proxmox termproxy).
// Output arrives as raw terminal bytes; what is typed goes as termproxy frames (`0:<bytes>:<data>`),
// a resize as `1:<cols>:<rows>:`, and a keep-alive `2` every 30 s. xterm (loaded only when the
// console opens) draws it, under the panel's CSP as the game console does.

import type { Terminal } from '@xterm/xterm';
import { useEffect, useRef, useState } from 'react';
import { Alert, Button, ErrorAlert } from '../../../components/ui.tsx';
import { api, unwrap } from '../../../lib/api.ts';
import { sameOriginSocketUrl } from '../../../lib/socket.ts';
import type { Service } from '../common.ts';

type Phase = 'closed' | 'asking' | 'connected' | 'ended';

const encoder = new TextEncoder();

/** termproxy's input frame: the length is in bytes, not characters. */
export function inputFrame(data: string): string {
  return `0:${encoder.encode(data).length}:${data}`;
}

export function SerialConsoleCard({ service }: { service: Service }) {
  const holder = useRef<HTMLDivElement>(null);
  const socket = useRef<WebSocket | null>(null);
  const term = useRef<Terminal | null>(null);
  const [phase, setPhase] = useState<Phase>('closed');
  const [message, setMessage] = useState('');
  const [error, setError] = useState<unknown>(null);
  const actions = useRef<HTMLDivElement>(null);

  useEffect(
    () => () => {
      socket.current?.close();
      term.current?.dispose();
    },
    [],
  );

  async function open() {
    setError(null);
    setMessage('');
    setPhase('asking');
    try {
      const data = await unwrap(
        api.GET('/api/v1/client/services/', {
          params: { query: { id: service.id, action: 'sso', console: 'serial' } },
        }),
      );
      if (!('sso' in data) || data.sso.kind !== 'console')
        throw new Error('The server did not answer a console ticket.');
      const [{ Terminal: Xterm }, { FitAddon }, { openWithoutInlineStyles }] = await Promise.all([
        import('@xterm/xterm'),
        import('@xterm/addon-fit'),
        import('../game/xtermCsp.ts'),
        import('@xterm/xterm/css/xterm.css'),
      ]);
      const target = holder.current;
      if (!target) return;
      term.current?.dispose();
      const terminal = new Xterm({ convertEol: false, cursorBlink: true, fontSize: 14, scrollback: 2000 });
      const fit = new FitAddon();
      terminal.loadAddon(fit);
      openWithoutInlineStyles(terminal, target);
      fit.fit();
      // The terminal takes every key (Tab included, a shell needs it); Ctrl+] leaves it for the
      // buttons below, so the keyboard is never trapped.
      terminal.attachCustomKeyEventHandler((event) => {
        if (event.type === 'keydown' && event.ctrlKey && event.key === ']') {
          actions.current?.querySelector('button')?.focus();
          return false;
        }
        return true;
      });
      term.current = terminal;

      const ws = new WebSocket(sameOriginSocketUrl(data.sso.url));
      ws.binaryType = 'arraybuffer';
      socket.current = ws;
      const decoder = new TextDecoder();
      let keepAlive = 0;
      ws.onopen = () => {
        setPhase('connected');
        ws.send(`1:${terminal.cols}:${terminal.rows}:`);
        keepAlive = window.setInterval(() => ws.readyState === WebSocket.OPEN && ws.send('2'), 30_000);
        terminal.focus();
      };
      ws.onmessage = (event) => {
        terminal.write(typeof event.data === 'string' ? event.data : decoder.decode(event.data as ArrayBuffer));
      };
      ws.onclose = (event) => {
        window.clearInterval(keepAlive);
        setPhase('ended');
        setMessage(event.wasClean ? 'The serial console was closed.' : 'The serial console connection was lost.');
      };
      terminal.onData((typed) => {
        if (ws.readyState === WebSocket.OPEN) ws.send(inputFrame(typed));
      });
      terminal.onResize(({ cols, rows }) => {
        if (ws.readyState === WebSocket.OPEN) ws.send(`1:${cols}:${rows}:`);
      });
    } catch (failure) {
      setError(failure);
      setPhase('closed');
    }
  }

  function close() {
    socket.current?.close();
    socket.current = null;
  }

  return (
    <section className="card" aria-labelledby={`serial-${service.id}`}>
      <h2 id={`serial-${service.id}`}>Serial console</h2>
      <p className="muted">
        The server's text console (ttyS0): for a login prompt or boot messages when the network is down. A console link
        works once, within a minute.
      </p>
      <ErrorAlert error={error} />
      {message ? <Alert kind={phase === 'ended' ? 'info' : 'warning'}>{message}</Alert> : null}
      <div ref={holder} className="serial-terminal" hidden={phase === 'closed' || phase === 'asking'} />
      <div className="row" ref={actions}>
        {phase === 'connected' ? (
          <Button variant="secondary" onClick={close}>
            Close the serial console
          </Button>
        ) : (
          <Button busy={phase === 'asking'} onClick={open} disabled={service.status !== 'active'}>
            {phase === 'ended' ? 'Reconnect the serial console' : 'Open the serial console'}
          </Button>
        )}
      </div>
      {phase === 'connected' ? (
        <p className="hint" role="status">
          Connected: type in the console. Ctrl+] leaves it for the buttons.
        </p>
      ) : null}
    </section>
  );
}

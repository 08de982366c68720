// Search (spec 4.13) from anywhere: Ctrl+K or "/" opens it; results are grouped as the API
// groups them, each a link to the panel page that shows it. Arrow keys move, Enter opens,
// Escape closes; focus returns where it was.

import { useQuery } from '@tanstack/react-query';
import { useEffect, useId, useRef, useState } from 'react';
import { useNavigate } from 'react-router';
import { api, unwrap } from '../lib/api.ts';

/** The panel page of a result: the API answers with its own URL (`/api/v1/client/services/?id=7`). */
export function panelPathOf(type: string, apiUrl: string): string {
  const id = new URL(apiUrl, window.location.origin).searchParams.get('id');
  switch (type) {
    case 'service':
    case 'ip':
      return id ? `/services/${id}` : '/services';
    case 'order':
      return '/services';
    case 'deposit':
      return id ? `/wallet?deposit=${id}` : '/wallet';
    default:
      return '/wallet';
  }
}

export function SearchDialog({ onClose }: { onClose: () => void }) {
  const [q, setQ] = useState('');
  const [debounced, setDebounced] = useState('');
  const [active, setActive] = useState(0);
  const input = useRef<HTMLInputElement>(null);
  const returnTo = useRef<Element | null>(document.activeElement);
  const navigate = useNavigate();
  const listId = useId();

  useEffect(() => {
    input.current?.focus();
    const back = returnTo.current;
    return () => (back as HTMLElement | null)?.focus?.();
  }, []);
  useEffect(() => {
    const timer = setTimeout(() => setDebounced(q.trim()), 200);
    return () => clearTimeout(timer);
  }, [q]);

  const results = useQuery({
    queryKey: ['search', debounced],
    enabled: debounced.length > 0,
    queryFn: () => unwrap(api.GET('/api/v1/search/', { params: { query: { q: debounced, limit: 5 } } })),
  });
  const items =
    results.data && 'groups' in results.data
      ? results.data.groups.flatMap((g) => g.items.map((item) => ({ ...item, group: g.label, type: g.type })))
      : [];

  const open = (index: number) => {
    const item = items[index];
    if (!item) return;
    onClose();
    navigate(panelPathOf(item.type, item.url));
  };

  return (
    // biome-ignore lint/a11y/noStaticElementInteractions: a click beside the dialog closes it; Escape and the Close button do the same from the keyboard
    <div className="overlay" onMouseDown={(e) => e.target === e.currentTarget && onClose()}>
      <div className="dialog search-dialog" role="dialog" aria-modal="true" aria-label="Search">
        <label htmlFor={`${listId}-q`}>Search services, IPs, orders and payments</label>
        <input
          id={`${listId}-q`}
          ref={input}
          value={q}
          placeholder="e.g. web-7, 10.0.0.5, order_…, pay_…, status:active"
          aria-controls={listId}
          onChange={(e) => {
            setQ(e.target.value);
            setActive(0);
          }}
          onKeyDown={(e) => {
            if (e.key === 'Escape') onClose();
            else if (e.key === 'ArrowDown') {
              e.preventDefault();
              setActive((i) => Math.min(i + 1, items.length - 1));
            } else if (e.key === 'ArrowUp') {
              e.preventDefault();
              setActive((i) => Math.max(i - 1, 0));
            } else if (e.key === 'Enter') {
              e.preventDefault();
              open(active);
            }
          }}
        />
        {results.isError ? <p className="field-error">{results.error.message}</p> : null}
        <ul id={listId} aria-label="Results" className="search-results">
          {items.map((item, index) => (
            <li key={item.id}>
              <button
                type="button"
                className={index === active ? 'active' : undefined}
                aria-current={index === active || undefined}
                onClick={() => open(index)}
              >
                <span className="result-group">{item.group}</span> {item.title}
              </button>
            </li>
          ))}
        </ul>
        {debounced && results.isSuccess && items.length === 0 ? <p>Nothing matches “{debounced}”.</p> : null}
        <p className="hint">
          Enter opens, arrows move, Esc closes. Operators: <code>type:</code> <code>status:</code> <code>loc:</code>
        </p>
        <button type="button" className="btn btn-secondary" onClick={onClose}>
          Close
        </button>
      </div>
    </div>
  );
}

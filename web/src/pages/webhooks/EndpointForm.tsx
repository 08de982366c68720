// The fields of a webhook endpoint, to add one or change one: its URL, a description, and the
// events it takes (checkboxes, with "all" and "none" shortcuts).

import { type FormEvent, useId, useState } from 'react';
import { Button, Checkbox, ErrorAlert, fieldError, TextField } from '../../components/ui.tsx';
import { EVENT_HINTS } from './api.ts';

export interface EndpointFields {
  url: string;
  description: string;
  events: string[];
}

export function EndpointForm({
  initial,
  eventTypes,
  submitLabel,
  busy,
  error,
  onSubmit,
  onCancel,
}: {
  initial: EndpointFields;
  eventTypes: string[];
  submitLabel: string;
  busy: boolean;
  error: unknown;
  onSubmit: (fields: EndpointFields) => void;
  onCancel?: (() => void) | undefined;
}) {
  const eventsId = useId();
  const [url, setUrl] = useState(initial.url);
  const [description, setDescription] = useState(initial.description);
  const [events, setEvents] = useState<string[]>(initial.events);
  const toggle = (type: string, on: boolean) =>
    setEvents((current) => (on ? [...current, type] : current.filter((e) => e !== type)));
  const submit = (event: FormEvent) => {
    event.preventDefault();
    onSubmit({ url: url.trim(), description: description.trim(), events });
  };
  const eventsError = fieldError(error, 'events');
  return (
    <form onSubmit={submit} noValidate className="wh-form">
      <TextField
        label="Endpoint URL"
        type="url"
        inputMode="url"
        value={url}
        onChange={(e) => setUrl(e.target.value)}
        required
        autoComplete="off"
        spellCheck={false}
        placeholder="https://example.com/hostplane-webhooks"
        hint="Where we POST each event. It must be https:// and reachable from the internet."
        error={fieldError(error, 'url')}
      />
      <TextField
        label="Description (optional)"
        value={description}
        onChange={(e) => setDescription(e.target.value)}
        maxLength={200}
        autoComplete="off"
        placeholder="e.g. billing sync"
        error={fieldError(error, 'description')}
      />
      <fieldset
        className={`wh-events${eventsError ? ' has-error' : ''}`}
        aria-describedby={eventsError ? `${eventsId}-error` : undefined}
      >
        <legend>Events to send</legend>
        <div className="row wh-shortcuts">
          <Button variant="ghost" onClick={() => setEvents([...eventTypes])}>
            Select all
          </Button>
          <Button variant="ghost" onClick={() => setEvents([])}>
            Clear
          </Button>
        </div>
        <div className="wh-event-grid">
          {eventTypes.map((type) => (
            <Checkbox
              key={type}
              label={type}
              hint={EVENT_HINTS[type]}
              checked={events.includes(type)}
              onChange={(e) => toggle(type, e.target.checked)}
            />
          ))}
        </div>
        {eventsError ? (
          <p className="field-error" id={`${eventsId}-error`}>
            {eventsError}
          </p>
        ) : null}
      </fieldset>
      <ErrorAlert error={error} fields={['url', 'description', 'events']} />
      <div className="row">
        <Button type="submit" busy={busy}>
          {submitLabel}
        </Button>
        {onCancel ? (
          <Button variant="secondary" onClick={onCancel}>
            Cancel
          </Button>
        ) : null}
      </div>
    </form>
  );
}

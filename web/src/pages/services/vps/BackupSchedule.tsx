// Scheduled backups of a VPS (POST /api/v1/client/services/ {action: "backup_schedule"}, a paid
// add-on, docs/backups.md): off, daily or weekly at an hour of India Standard Time, keeping the
// newest N automatic snapshots. Shows the price a month and what turning it on charges now (the
// same action with dry_run, so the figure is the server's), the next run and the last run or error.
// Turning it on asks first, with the amount on the button; turning it off needs no money and saves.

import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useEffect, useRef, useState } from 'react';
import { Alert, Button, ErrorAlert, fieldError, SelectField, TextField } from '../../../components/ui.tsx';
import { api, unwrap } from '../../../lib/api.ts';
import { rupees, when } from '../../../lib/format.ts';
import { type Service, serviceKey } from '../common.ts';
import './infra.css';

type Frequency = 'off' | 'daily' | 'weekly';
const HOURS = Array.from({ length: 24 }, (_, h) => `${String(h).padStart(2, '0')}:00`);
const WEEKDAYS = ['Sunday', 'Monday', 'Tuesday', 'Wednesday', 'Thursday', 'Friday', 'Saturday'];

interface Answer {
  message: string;
  price_per_month: string | null;
  charged: string;
  order_id: string | null;
}

export function BackupScheduleCard({ service }: { service: Service }) {
  const client = useQueryClient();
  const current = service.backup_schedule;
  // Off, the form offers to turn them on (daily by default); on, it offers to change or turn them off.
  const onNow = (current?.frequency ?? 'off') !== 'off';
  const [frequency, setFrequency] = useState<Frequency>(onNow ? (current?.frequency as Frequency) : 'daily');
  const [hour, setHour] = useState(String(current?.hour ?? 3));
  const [keep, setKeep] = useState(String(current?.keep ?? 7));
  const [weekday, setWeekday] = useState(String(current?.weekday ?? 0));
  const [asking, setAsking] = useState(false);
  const confirm = useRef<HTMLButtonElement>(null);
  const submit = useRef<HTMLButtonElement>(null);
  useEffect(() => {
    if (!current) return;
    setFrequency(current.frequency === 'off' ? 'daily' : (current.frequency as Frequency));
    if (current.hour !== null && current.hour !== undefined) setHour(String(current.hour));
    if (current.keep !== null && current.keep !== undefined) setKeep(String(current.keep));
    if (current.weekday !== null && current.weekday !== undefined) setWeekday(String(current.weekday));
  }, [current]);
  useEffect(() => {
    if (asking) confirm.current?.focus();
  }, [asking]);

  const keepN = Number(keep);
  const keepOk = keep !== '' && Number.isInteger(keepN) && keepN >= 1 && keepN <= 14;
  const body = (dryRun: boolean) => ({
    id: service.id,
    action: 'backup_schedule' as const,
    frequency,
    ...(frequency === 'off' ? {} : { hour: Number(hour), keep: keepN }),
    ...(frequency === 'weekly' ? { weekday: Number(weekday) } : {}),
    ...(dryRun ? { dry_run: true } : {}),
  });
  const valid = frequency === 'off' || keepOk;
  // The price and the charge now, as the server would make them (nothing changes on a dry run).
  const quote = useQuery({
    queryKey: ['backup-quote', service.id, frequency === 'off' ? 'daily' : frequency, hour, keep, weekday],
    queryFn: async () =>
      (await unwrap(
        api.POST('/api/v1/client/services/', {
          body: {
            ...body(true),
            frequency: frequency === 'off' ? 'daily' : frequency,
            hour: Number(hour),
            keep: keepOk ? keepN : 7,
          },
        }),
      )) as unknown as Answer,
    enabled: service.status === 'active',
    retry: false,
  });
  const save = useMutation({
    mutationFn: async () =>
      (await unwrap(api.POST('/api/v1/client/services/', { body: body(false) }))) as unknown as Answer,
    onSuccess: () => {
      setAsking(false);
      // The confirmation goes away: the keyboard goes on from the form's button.
      requestAnimationFrame(() => submit.current?.focus());
      client.invalidateQueries({ queryKey: serviceKey(service.id) });
      client.invalidateQueries({ queryKey: ['wallet'] });
      client.invalidateQueries({ queryKey: ['backup-quote', service.id] });
    },
  });
  const on = current !== null && current !== undefined && current.frequency !== 'off';
  const price = quote.data?.price_per_month ?? null;
  const charge = !on && frequency !== 'off' && quote.data ? quote.data.charged : null;
  const paying = charge !== null && Number(charge) > 0;
  const when_ = `${frequency === 'weekly' ? `weekly on ${WEEKDAYS[Number(weekday)]}` : 'daily'} at ${HOURS[Number(hour)]} IST, keeping the newest ${keepN}`;
  const label = on
    ? frequency === 'off'
      ? 'Turn off scheduled backups'
      : 'Save schedule'
    : 'Turn on scheduled backups';
  const keepError = frequency !== 'off' && keep !== '' && !keepOk ? 'Keep between 1 and 14 snapshots.' : undefined;
  const cancel = () => {
    setAsking(false);
    requestAnimationFrame(() => submit.current?.focus());
  };

  return (
    <section className="card infra-card" aria-labelledby="backup-h">
      <h2 id="backup-h">Scheduled backups</h2>
      <p className="muted">
        An automatic snapshot at the hour you choose (India Standard Time); the oldest automatic ones are deleted so
        that only the newest you keep remain. Your own snapshots are never touched.
      </p>
      <dl className="facts">
        <dt>Status</dt>
        <dd>
          {on && current
            ? `On: ${current.frequency === 'weekly' ? `weekly on ${WEEKDAYS[current.weekday ?? 0]}` : 'daily'} at ${HOURS[current.hour ?? 0]} IST, keeping the newest ${current.keep}`
            : 'Off'}
        </dd>
        <dt>Price</dt>
        <dd>
          {price === null
            ? quote.isError
              ? 'Not offered on this plan'
              : quote.isPending && service.status === 'active'
                ? 'Working it out…'
                : '—'
            : `${rupees(price)} a month, with each renewal`}
        </dd>
        {charge !== null ? (
          <>
            <dt>Charged now</dt>
            <dd>{rupees(charge)} from your wallet (the rest of this period, pro rata)</dd>
          </>
        ) : null}
        <dt>Next run</dt>
        <dd>{current?.next_run_at ? when(current.next_run_at) : '—'}</dd>
        <dt>Last run</dt>
        <dd>{current?.last_run_at ? when(current.last_run_at) : '—'}</dd>
      </dl>
      {current?.last_error ? <Alert kind="error">The last backup failed: {current.last_error}</Alert> : null}
      <form
        className="infra-form"
        noValidate
        onSubmit={(e) => {
          e.preventDefault();
          if (!on && frequency !== 'off') setAsking(true);
          else save.mutate();
        }}
      >
        <SelectField
          label="Frequency"
          value={frequency}
          onChange={(e) => {
            setFrequency(e.target.value as Frequency);
            setAsking(false);
          }}
        >
          {on ? <option value="off">Off</option> : null}
          <option value="daily">Daily</option>
          <option value="weekly">Weekly</option>
        </SelectField>
        {frequency === 'weekly' ? (
          <SelectField
            label="Day (IST)"
            value={weekday}
            onChange={(e) => {
              setWeekday(e.target.value);
              setAsking(false);
            }}
            error={fieldError(save.error, 'weekday')}
          >
            {WEEKDAYS.map((d, i) => (
              <option key={d} value={i}>
                {d}
              </option>
            ))}
          </SelectField>
        ) : null}
        {frequency !== 'off' ? (
          <>
            <SelectField
              label="Hour (IST)"
              value={hour}
              onChange={(e) => {
                setHour(e.target.value);
                setAsking(false);
              }}
              error={fieldError(save.error, 'hour')}
            >
              {HOURS.map((h, i) => (
                <option key={h} value={i}>
                  {h}
                </option>
              ))}
            </SelectField>
            <TextField
              label="Snapshots to keep"
              type="number"
              inputMode="numeric"
              min={1}
              max={14}
              value={keep}
              onChange={(e) => {
                setKeep(e.target.value);
                setAsking(false);
              }}
              hint="1 to 14: the newest automatic snapshots stay, older ones are deleted."
              error={keepError ?? fieldError(save.error, 'keep')}
              required
            />
          </>
        ) : null}
        {frequency === 'off' && on ? (
          <p className="hint">Turning it off stops the charge from the next renewal; this period is not refunded.</p>
        ) : null}
        {asking ? (
          <fieldset
            className="confirm infra-pay"
            onKeyDown={(e) => {
              if (e.key === 'Escape') cancel();
            }}
          >
            <legend className="sr-only">Turn on scheduled backups</legend>
            <p>
              Back up {when_}?{' '}
              {paying ? (
                <>
                  <strong>{rupees(charge)}</strong> is taken from your wallet now for the rest of this period
                </>
              ) : (
                'Nothing is charged now'
              )}
              {price !== null ? `; then ${rupees(price)} a month with each renewal.` : '.'}
            </p>
            <div className="row infra-actions">
              <Button ref={confirm} busy={save.isPending} onClick={() => save.mutate()}>
                {paying ? `Pay ${rupees(charge)} and turn on` : 'Turn on'}
              </Button>
              <Button variant="secondary" onClick={cancel}>
                Cancel
              </Button>
            </div>
          </fieldset>
        ) : null}
        <ErrorAlert error={save.error} fields={['hour', 'keep', 'frequency', 'weekday']} />
        {save.data ? <Alert kind="success">{save.data.message}</Alert> : null}
        {asking ? null : (
          <div className="row infra-actions">
            <Button
              ref={submit}
              type="submit"
              busy={save.isPending}
              disabled={!valid || (!on && frequency === 'off') || (!on && quote.isPending)}
            >
              {label}
            </Button>
          </div>
        )}
      </form>
    </section>
  );
}

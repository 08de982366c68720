// Scheduled backups of a VPS (POST /api/v1/client/services/ {action: "backup_schedule"}, a paid
// add-on, docs/backups.md): off, daily or weekly at an hour of India Standard Time, keeping the
// newest N automatic snapshots. Shows the price a month and what turning it on charges now (the
// same action with dry_run, so the figure is the server's), the next run and the last run or error.

import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useEffect, useState } from 'react';
import { Alert, Button, ErrorAlert, fieldError, SelectField, TextField } from '../../../components/ui.tsx';
import { api, unwrap } from '../../../lib/api.ts';
import { rupees, when } from '../../../lib/format.ts';
import { type Service, serviceKey } from '../common.ts';

type Frequency = 'off' | 'daily' | 'weekly';
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
  const [frequency, setFrequency] = useState<Frequency>((current?.frequency as Frequency | undefined) ?? 'off');
  const [hour, setHour] = useState(String(current?.hour ?? 3));
  const [keep, setKeep] = useState(String(current?.keep ?? 7));
  const [weekday, setWeekday] = useState(String(current?.weekday ?? 0));
  useEffect(() => {
    if (current) setFrequency(current.frequency as Frequency);
  }, [current]);

  const body = (dryRun: boolean) => ({
    id: service.id,
    action: 'backup_schedule' as const,
    frequency,
    ...(frequency === 'off' ? {} : { hour: Number(hour), keep: Number(keep) }),
    ...(frequency === 'weekly' ? { weekday: Number(weekday) } : {}),
    ...(dryRun ? { dry_run: true } : {}),
  });
  const valid = frequency === 'off' || (hour !== '' && keep !== '');
  // The price and the charge now, as the server would make them (nothing changes on a dry run).
  const quote = useQuery({
    queryKey: ['backup-quote', service.id, frequency === 'off' ? 'daily' : frequency, hour, keep],
    queryFn: async () =>
      (await unwrap(
        api.POST('/api/v1/client/services/', {
          body: {
            ...body(true),
            frequency: frequency === 'off' ? 'daily' : frequency,
            hour: Number(hour),
            keep: Number(keep),
          },
        }),
      )) as unknown as Answer,
    enabled: valid && service.status === 'active',
    retry: false,
  });
  const save = useMutation({
    mutationFn: async () =>
      (await unwrap(api.POST('/api/v1/client/services/', { body: body(false) }))) as unknown as Answer,
    onSuccess: () => {
      client.invalidateQueries({ queryKey: serviceKey(service.id) });
      client.invalidateQueries({ queryKey: ['wallet'] });
      client.invalidateQueries({ queryKey: ['backup-quote', service.id] });
    },
  });
  const on = current !== null && current.frequency !== 'off';
  const price = quote.data?.price_per_month ?? null;

  return (
    <section className="card" aria-labelledby="backup-h">
      <h2 id="backup-h">Scheduled backups</h2>
      <p className="muted">
        An automatic snapshot at the hour you choose (India Standard Time); the oldest automatic ones are deleted so
        that only the newest you keep remain. Your own snapshots are never touched.
      </p>
      <dl className="facts">
        <dt>Price</dt>
        <dd>{price === null ? (quote.isError ? 'Not offered on this plan' : '…') : `${rupees(price)} a month`}</dd>
        {!on && frequency !== 'off' && quote.data ? (
          <>
            <dt>Charged now</dt>
            <dd>{rupees(quote.data.charged)} (the rest of this period, pro rata)</dd>
          </>
        ) : null}
        <dt>Next run</dt>
        <dd>{current?.next_run_at ? when(current.next_run_at) : '—'}</dd>
        <dt>Last run</dt>
        <dd>{current?.last_run_at ? when(current.last_run_at) : '—'}</dd>
      </dl>
      {current?.last_error ? <Alert kind="error">{current.last_error}</Alert> : null}
      <form
        onSubmit={(e) => {
          e.preventDefault();
          save.mutate();
        }}
      >
        <SelectField label="Frequency" value={frequency} onChange={(e) => setFrequency(e.target.value as Frequency)}>
          <option value="off">Off</option>
          <option value="daily">Daily</option>
          <option value="weekly">Weekly</option>
        </SelectField>
        {frequency === 'weekly' ? (
          <SelectField label="Day (IST)" value={weekday} onChange={(e) => setWeekday(e.target.value)}>
            {WEEKDAYS.map((d, i) => (
              <option key={d} value={i}>
                {d}
              </option>
            ))}
          </SelectField>
        ) : null}
        {frequency !== 'off' ? (
          <>
            <TextField
              label="Hour (IST, 0-23)"
              type="number"
              min={0}
              max={23}
              value={hour}
              onChange={(e) => setHour(e.target.value)}
              error={fieldError(save.error, 'hour')}
              required
            />
            <TextField
              label="Keep (automatic snapshots, 1-14)"
              type="number"
              min={1}
              max={14}
              value={keep}
              onChange={(e) => setKeep(e.target.value)}
              error={fieldError(save.error, 'keep')}
              required
            />
          </>
        ) : null}
        {frequency === 'off' && on ? (
          <p className="hint">Turning it off stops the charge from the next renewal; this period is not refunded.</p>
        ) : null}
        <ErrorAlert error={save.error} fields={['hour', 'keep', 'frequency', 'weekday']} />
        {save.data ? <Alert kind="success">{save.data.message}</Alert> : null}
        <Button type="submit" busy={save.isPending} disabled={!valid || (!on && frequency === 'off')}>
          {on || frequency === 'off' ? 'Save schedule' : 'Turn on scheduled backups'}
        </Button>
      </form>
    </section>
  );
}

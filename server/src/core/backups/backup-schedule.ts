// Setting a service's backup schedule (CONTRACT §13, docs/backups.md): the one core function the
// vps product's `backup_schedule` action calls, whichever surface it came from (session POST
// /services/, token PUT /instances/{id}/backup-schedule).
//
// Turning it on (from off, or never set) charges the add-on's price for what is left of the
// current period, pro rata (core/billing/addons.ts), in the transaction that stores the schedule:
// the order, its ledger debit and its invoice, or — when the wallet is short — 402
// insufficient_funds and nothing changed. Changing the hour, keep, weekday or daily/weekly of a
// schedule that is on charges nothing. Off stops the next renewals charging it; what was paid for
// the current period is not refunded. `dryRun` answers what it would do and charge, and writes nothing.

import type { Kysely, Transaction } from 'kysely';
import type { InvoicingConfig } from '../../config-invoicing.ts';
import type { BackupFrequency, BackupSchedule, DB, Order, Service } from '../../db/tables.ts';
import { chargeAddon, proRataPaise } from '../billing/addons.ts';
import { chargeOfPrice, placeOfSupplyOf } from '../billing/charge.ts';
import { AppError } from '../errors.ts';
import { formatPaise } from '../money.ts';
import { recordEvent } from '../services/events.ts';
import * as services from '../services/service.repository.ts';
import { lockWallet } from '../wallet/ledger.ts';
import { DEFAULT_WEEKDAY, FREQUENCIES, KEEP_MAX, KEEP_MIN, nextRunAt } from './schedule.ts';

export interface ScheduleInput {
  frequency: BackupFrequency;
  /** Absent only with off (the stored one, if any, is kept). */
  hour?: number;
  keep?: number;
  weekday?: number;
  dryRun: boolean;
}

const isInt = (v: unknown, min: number, max: number): v is number =>
  typeof v === 'number' && Number.isInteger(v) && v >= min && v <= max;

/** The parameters of `backup_schedule`, checked: 422 naming every field that is wrong. */
export function checkScheduleInput(params: Record<string, unknown>): ScheduleInput {
  const fields: Record<string, string> = {};
  const { frequency, hour, keep, weekday, dry_run: dryRun } = params;
  const off = frequency === 'off';
  if (typeof frequency !== 'string' || !FREQUENCIES.includes(frequency as BackupFrequency))
    fields.frequency = `must be one of ${FREQUENCIES.join(', ')}`;
  if (hour === undefined ? !off : !isInt(hour, 0, 23)) fields.hour = 'must be a whole hour from 0 to 23 (IST)';
  if (keep === undefined ? !off : !isInt(keep, KEEP_MIN, KEEP_MAX))
    fields.keep = `must be a whole number from ${KEEP_MIN} to ${KEEP_MAX}`;
  if (weekday !== undefined && !isInt(weekday, 0, 6)) fields.weekday = 'must be 0 (Sunday) to 6 (Saturday)';
  if (dryRun !== undefined && typeof dryRun !== 'boolean') fields.dry_run = 'must be true or false';
  if (Object.keys(fields).length > 0) throw AppError.fields(fields);
  return {
    frequency: frequency as BackupFrequency,
    ...(hour === undefined ? {} : { hour: hour as number }),
    ...(keep === undefined ? {} : { keep: keep as number }),
    ...(weekday === undefined ? {} : { weekday: weekday as number }),
    dryRun: dryRun === true,
  };
}

export interface ScheduleOutcome {
  schedule: BackupSchedule | null;
  /** What the add-on costs a month, as a renewal charges it (with GST when prices exclude it); null: not offered. */
  monthlyPaise: bigint | null;
  /** What was charged now (or, on a dry run, would be): 0 when nothing. */
  chargedPaise: bigint;
  order: Order | null;
  message: string;
}

class DryRun extends Error {
  readonly outcome: ScheduleOutcome;
  constructor(outcome: ScheduleOutcome) {
    super('dry run');
    this.outcome = outcome;
  }
}

/** Off: the row keeps its settings and history; nothing is refunded. A service never scheduled stays without a row. */
async function turnOff(
  trx: Transaction<DB>,
  service: Service,
  existing: BackupSchedule | undefined,
  input: ScheduleInput,
  now: Date,
): Promise<Omit<ScheduleOutcome, 'monthlyPaise'>> {
  if (!existing) return { schedule: null, chargedPaise: 0n, order: null, message: 'Scheduled backups are off.' };
  const schedule = await trx
    .updateTable('backup_schedules')
    .set({
      frequency: 'off',
      next_run_at: null,
      hour: input.hour ?? existing.hour,
      keep: input.keep ?? existing.keep,
      weekday: input.weekday ?? existing.weekday,
      updated_at: now,
    })
    .where('service_id', '=', service.id)
    .returningAll()
    .executeTakeFirstOrThrow();
  if (existing.frequency !== 'off') await recordEvent(trx, service.id, 'backups_off', 'Scheduled backups turned off');
  return {
    schedule,
    chargedPaise: 0n,
    order: null,
    message: 'Scheduled backups are off; the next renewals no longer charge them.',
  };
}

/**
 * Store the schedule of the caller's service (ownership, type and state already checked by the
 * action runner). `pricePaise`: the add-on's monthly price on the service's plan (null: the plan
 * does not offer it).
 */
export async function setBackupSchedule(
  options: { db: Kysely<DB>; invoicing: InvoicingConfig; clock: () => Date },
  given: Service,
  input: ScheduleInput,
  pricePaise: bigint | null,
): Promise<ScheduleOutcome> {
  const { db, invoicing } = options;
  const supply = await placeOfSupplyOf(db, invoicing, given.account_id);
  const monthlyPaise = pricePaise === null ? null : chargeOfPrice(invoicing, pricePaise, supply).totalPaise;
  try {
    return await db.transaction().execute(async (trx) => {
      // The wallet first, as every money path locks it (core/wallet/ledger.ts lockWallet).
      await lockWallet(trx, given.account_id);
      const service = await services.lockOwn(trx, given.account_id, given.id);
      if (!service) throw new AppError('not_owner');
      const existing = await trx
        .selectFrom('backup_schedules')
        .selectAll()
        .where('service_id', '=', service.id)
        .forUpdate()
        .executeTakeFirst();
      const now = options.clock();
      const outcome = (o: Omit<ScheduleOutcome, 'monthlyPaise'>): ScheduleOutcome => {
        if (input.dryRun) throw new DryRun({ ...o, monthlyPaise });
        return { ...o, monthlyPaise };
      };
      if (input.frequency === 'off') return outcome(await turnOff(trx, service, existing, input, now));
      const wasOn = existing !== undefined && existing.frequency !== 'off';
      if (!wasOn && pricePaise === null)
        throw new AppError('not_supported', { message: 'This plan does not offer scheduled backups.' });
      if (!wasOn && service.status !== 'active') throw new AppError('suspended');
      const times = {
        frequency: input.frequency,
        hour: input.hour as number,
        weekday: input.weekday ?? (input.frequency === 'weekly' ? DEFAULT_WEEKDAY : (existing?.weekday ?? 0)),
      };
      const next = nextRunAt(times, now);
      const price = wasOn ? BigInt(existing.price_paise) : (pricePaise as bigint);
      const prorata = wasOn ? 0n : proRataPaise(price, now, service.period_end);
      let order: Order | null = null;
      let chargedPaise = 0n;
      if (prorata > 0n) {
        if (input.dryRun) chargedPaise = chargeOfPrice(invoicing, prorata, supply).totalPaise;
        else {
          const charged = await chargeAddon(trx, invoicing, {
            service,
            pricePaise: prorata,
            description: `Scheduled backups for ${service.label}, pro rata until ${service.period_end?.toISOString().slice(0, 10)}`,
            at: now,
          });
          order = charged.order;
          chargedPaise = charged.totalPaise;
        }
      }
      const values = {
        frequency: input.frequency,
        hour: times.hour,
        weekday: times.weekday,
        keep: input.keep as number,
        price_paise: price,
        next_run_at: next,
        updated_at: now,
      };
      const schedule = await trx
        .insertInto('backup_schedules')
        .values({ service_id: service.id, account_id: service.account_id, ...values })
        .onConflict((oc) => oc.column('service_id').doUpdateSet(values))
        .returningAll()
        .executeTakeFirstOrThrow();
      if (!wasOn)
        await recordEvent(
          trx,
          service.id,
          'backups_on',
          `Scheduled backups turned on (${input.frequency})${chargedPaise > 0n ? `: ₹${formatPaise(chargedPaise)} charged pro rata` : ''}`,
          order ? { order: order.public_id } : {},
        );
      const charged =
        chargedPaise > 0n ? ` ₹${formatPaise(chargedPaise)} was charged for the rest of this period.` : '';
      return outcome({
        schedule,
        chargedPaise,
        order,
        message: `Scheduled backups are ${input.frequency}.${charged}`,
      });
    });
  } catch (error) {
    if (error instanceof DryRun) return error.outcome;
    // The token surfaces' deploy answers a short wallet 402; so does this charge, on both surfaces.
    if (error instanceof AppError && error.code === 'insufficient_funds')
      throw new AppError('insufficient_funds', {
        status: 402,
        message: `${error.message} Top up the wallet to turn scheduled backups on.`,
        ...(error.details ? { details: error.details } : {}),
      });
    throw error;
  }
}

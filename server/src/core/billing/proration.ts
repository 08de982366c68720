// Pro-rata charges (issue 37: a resize charges the price difference for the rest of the period
// already paid). The one rule, integer only: charge = ⌊ diff × remaining_seconds ÷ period_seconds ⌋
// paise, in BigInt. Rounded down (floor), so the client never pays for a part-second not used,
// the charge is 0 at the period's end, and it never exceeds the difference for a whole period
// (the only other rounding of the billing code, GST's half up in gst.ts, then applies to this
// amount exactly as it does to a catalog price: charge.ts chargeOfPrice).
//
// The period is the month that ends at `paid_until` (the billing cycle extends it by whole
// calendar months, time.ts addMonth): it starts one calendar month earlier, the day clamped to
// the end of a shorter month, so a period is 28 to 31 days. A service paid further ahead (renewed
// early) pays the difference for all the time it has paid for: remaining may exceed the period.

/** The start of the month-long period that ends at `end` (the inverse of time.ts addMonth, clamped). */
export function periodStartOf(end: Date): Date {
  const start = new Date(end);
  const day = start.getUTCDate();
  start.setUTCDate(1);
  start.setUTCMonth(start.getUTCMonth() - 1);
  const lastDay = new Date(Date.UTC(start.getUTCFullYear(), start.getUTCMonth() + 1, 0)).getUTCDate();
  start.setUTCDate(Math.min(day, lastDay));
  return start;
}

export interface Proration {
  /** The new monthly price minus the old one, in paise; never below 0. */
  diffPaise: bigint;
  /** Whole seconds from now to the end of what is paid for (0 once it has passed). */
  remainingSeconds: bigint;
  /** Whole seconds of the month-long period that ends at `paid_until`. */
  periodSeconds: bigint;
  /** ⌊ diff × remaining ÷ period ⌋: what to charge now before tax, in paise. */
  proratedPaise: bigint;
  periodStart: Date;
  periodEnd: Date;
}

/** The pro-rata difference between two monthly prices at `now`, for a service paid until `paidUntil`. */
export function prorate(oldPricePaise: bigint, newPricePaise: bigint, paidUntil: Date, now: Date): Proration {
  const periodStart = periodStartOf(paidUntil);
  const periodSeconds = BigInt(Math.floor((paidUntil.getTime() - periodStart.getTime()) / 1000));
  const left = Math.floor((paidUntil.getTime() - now.getTime()) / 1000);
  const remainingSeconds = BigInt(Math.max(0, left));
  const diffPaise = newPricePaise > oldPricePaise ? newPricePaise - oldPricePaise : 0n;
  const proratedPaise = periodSeconds > 0n ? (diffPaise * remainingSeconds) / periodSeconds : 0n;
  return { diffPaise, remainingSeconds, periodSeconds, proratedPaise, periodStart, periodEnd: paidUntil };
}

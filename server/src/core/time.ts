// Times leave the system as ISO 8601 with an explicit numeric offset (CONTRACT §3).

/** `2026-11-22T10:15:30.123+00:00`: UTC, spelled with a numeric offset rather than `Z`. */
export function isoWithOffset(date: Date): string {
  // Sliced rather than replaced by a regular expression: every date of every answer comes here.
  return `${date.toISOString().slice(0, -1)}+00:00`;
}

export type Clock = () => Date;

export const systemClock: Clock = () => new Date();

/** One month of service, calendar-aware (31 Jan + 1 month = 28/29 Feb). */
export function addMonth(from: Date): Date {
  const next = new Date(from);
  const day = next.getUTCDate();
  next.setUTCDate(1);
  next.setUTCMonth(next.getUTCMonth() + 1);
  const lastDay = new Date(Date.UTC(next.getUTCFullYear(), next.getUTCMonth() + 1, 0)).getUTCDate();
  next.setUTCDate(Math.min(day, lastDay));
  return next;
}

/** A time as a customer in India reads it: "5 December 2026, 2:30 pm IST". */
export function istTime(date: Date): string {
  const text = new Intl.DateTimeFormat('en-IN', {
    timeZone: 'Asia/Kolkata',
    day: 'numeric',
    month: 'long',
    year: 'numeric',
    hour: 'numeric',
    minute: '2-digit',
  }).format(date);
  return `${text} IST`;
}

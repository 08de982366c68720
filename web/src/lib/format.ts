// How the panel writes money and time (CONTRACT §10): ₹ with Indian digit grouping and two
// decimals (₹1,23,456.00); times in the viewer's own zone, with the zone shown.

const inr = new Intl.NumberFormat('en-IN', {
  style: 'currency',
  currency: 'INR',
  minimumFractionDigits: 2,
  maximumFractionDigits: 2,
});

/** "499.00" (the API's decimal string) or a number of rupees → "₹499.00"; "1234567.5" → "₹12,34,567.50". */
export function rupees(amount: string | number | null | undefined): string {
  if (amount === null || amount === undefined || amount === '') return '—';
  const value = typeof amount === 'number' ? amount : Number(amount);
  if (!Number.isFinite(value)) return String(amount);
  return inr.format(value);
}

const zone = Intl.DateTimeFormat().resolvedOptions().timeZone;
// dateStyle/timeStyle cannot be combined with timeZoneName (a RangeError): the parts are named.
const dateTime = new Intl.DateTimeFormat('en-IN', {
  day: 'numeric',
  month: 'short',
  year: 'numeric',
  hour: 'numeric',
  minute: '2-digit',
  timeZoneName: 'short',
});
const dateOnly = new Intl.DateTimeFormat('en-IN', { dateStyle: 'medium' });

/** An ISO time in the viewer's zone, the zone named ("28 Nov 2026, 9:48 am IST"). */
export function when(iso: string | null | undefined): string {
  if (!iso) return '—';
  const date = new Date(iso);
  return Number.isNaN(date.getTime()) ? iso : dateTime.format(date);
}

export function day(iso: string | null | undefined): string {
  if (!iso) return '—';
  const date = new Date(iso);
  return Number.isNaN(date.getTime()) ? iso : dateOnly.format(date);
}

export function viewerZone(): string {
  return zone;
}

/** "3 minutes ago" / "in 2 days". */
export function relative(iso: string | null | undefined, now = Date.now()): string {
  if (!iso) return '—';
  const then = new Date(iso).getTime();
  if (Number.isNaN(then)) return iso;
  const seconds = Math.round((then - now) / 1000);
  const rtf = new Intl.RelativeTimeFormat('en', { numeric: 'auto' });
  const steps: [Intl.RelativeTimeFormatUnit, number][] = [
    ['year', 31_536_000],
    ['month', 2_592_000],
    ['day', 86_400],
    ['hour', 3_600],
    ['minute', 60],
  ];
  for (const [unit, size] of steps) {
    if (Math.abs(seconds) >= size) return rtf.format(Math.round(seconds / size), unit);
  }
  return rtf.format(seconds, 'second');
}

export function bytes(value: number | null | undefined): string {
  if (value === null || value === undefined || !Number.isFinite(value)) return '—';
  const units = ['B', 'KiB', 'MiB', 'GiB', 'TiB'];
  let n = value;
  let i = 0;
  while (n >= 1024 && i < units.length - 1) {
    n /= 1024;
    i++;
  }
  return `${n >= 10 || i === 0 ? Math.round(n) : n.toFixed(1)} ${units[i]}`;
}

const counts = new Intl.NumberFormat('en-IN');

/** A count and its noun in the right number: "1 deposit", "1,200 deposits" (never "deposit(s)"). */
export function plural(n: number, one: string, many = `${one}s`): string {
  return `${counts.format(n)} ${n === 1 ? one : many}`;
}

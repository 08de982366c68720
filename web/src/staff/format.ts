// How the console writes waiting times ("45 s", "12 min", "3 h", "2 d") and counts ("1 deposit", "2 deposits").

/** A number of seconds in the largest whole unit. */
export function duration(totalSeconds: number): string {
  const seconds = Math.max(0, Math.round(totalSeconds));
  if (seconds < 60) return `${seconds} s`;
  if (seconds < 3600) return `${Math.floor(seconds / 60)} min`;
  if (seconds < 86_400) return `${Math.floor(seconds / 3600)} h`;
  return `${Math.floor(seconds / 86_400)} d`;
}

/** How long something has waited since `iso`, by the browser's clock. */
export function age(iso: string, now = Date.now()): string {
  return duration((now - new Date(iso).getTime()) / 1000);
}

/** A count with its noun, singular for one: "1 deposit", "0 deposits", "3 deposits". */
export function counted(n: number, one: string, many = `${one}s`): string {
  return `${n} ${n === 1 ? one : many}`;
}

// The hosting account's username, derived from the domain within cPanel's rules (upstreams.md
// §3.4 createacct: at most 16 characters, lowercase letters and digits, starting with a letter,
// not starting with "test", the first 8 characters unique on the server). We keep to 8, so the
// whole name is what must be unique, and number the candidates: shopexam, shopexa1, shopexa2, …

/** The `n`th candidate username for `domain` (n = 0 first). */
export function usernameCandidate(domain: string, n: number): string {
  const letters = domain
    .toLowerCase()
    .replace(/[^a-z0-9]/g, '')
    .replace(/^[0-9]+/, '');
  let base = letters === '' ? 'site' : letters;
  if (base.startsWith('test')) base = `w${base}`;
  if (n === 0) return base.slice(0, 8);
  const suffix = String(n);
  return `${base.slice(0, 8 - suffix.length)}${suffix}`;
}

// The hosting account's username, derived from the domain within cPanel's rules (upstreams.md
// §3.4 createacct: at most 16 characters, lowercase letters and digits, starting with a letter,
// not starting with "test", the first 8 characters unique on the server). We keep to 8, so the
// whole name is what must be unique, and number the candidates: shopexam, shopexa1, shopexa2, …
// A candidate is only a name: whether an account under it is ours is decided by its marker.

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

/**
 * The contact e-mail the platform gives a service's account: `hp-<installation>-svc-<id>@<host>`,
 * the marker by which provisioning knows the account as the one it made for this service (no
 * other service, nor another installation sharing the server, has the same). The host is the
 * platform's own (PUBLIC_URL's) so that WHM's notices go to the operator, never to a stranger; a
 * host WHM would not take in an address (localhost, an IP) gives the reserved `.invalid` domain.
 */
export function accountMarker(externalName: string, publicUrl: string): string {
  let host = '';
  try {
    host = new URL(publicUrl).hostname.toLowerCase();
  } catch {
    host = '';
  }
  const usable = /^[a-z0-9]([a-z0-9-]*[a-z0-9])?(\.[a-z0-9]([a-z0-9-]*[a-z0-9])?)*\.[a-z]{2,}$/.test(host);
  return `${externalName}@${usable ? host : 'hostplane.invalid'}`;
}

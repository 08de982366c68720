// Console WebSocket URLs come from the server built on PUBLIC_URL; the panel's CSP allows only its
// own origin (`connect-src 'self'`), and a deployment behind another name than PUBLIC_URL (a test
// server, a second domain) would dial the wrong host. The panel always dials where it was loaded
// from, with the path and ticket it was given.

export function sameOriginSocketUrl(given: string): string {
  const url = new URL(given, window.location.href);
  if (url.host !== window.location.host) {
    url.protocol = window.location.protocol === 'https:' ? 'wss:' : 'ws:';
    url.host = window.location.host;
  }
  return url.toString();
}

// The two pages e-mail links open (CONTRACT §4: {PUBLIC_URL}/verify?token=…, /reset?token=…).
// Each is a small static page whose script posts the token to the session API; the token
// never reaches the server in a URL it logs (query values named token are redacted anyway).

import { randomBytes } from 'node:crypto';
import type { FastifyInstance, FastifyReply } from 'fastify';

const STYLE =
  'body{font-family:system-ui,sans-serif;max-width:28rem;margin:4rem auto;padding:0 1rem;color:#1b1f24}' +
  'input,button{font:inherit;padding:.5rem;width:100%;box-sizing:border-box;margin:.25rem 0}' +
  'button{background:#0b5cff;color:#fff;border:0;border-radius:6px}#out{margin-top:1rem}';

function page(reply: FastifyReply, title: string, body: string, script: string): FastifyReply {
  const nonce = randomBytes(16).toString('base64');
  return reply
    .type('text/html; charset=utf-8')
    .header('Cache-Control', 'no-store')
    .header('Referrer-Policy', 'no-referrer')
    .header(
      'Content-Security-Policy',
      `default-src 'none'; script-src 'nonce-${nonce}'; style-src 'nonce-${nonce}'; connect-src 'self'; form-action 'none'; frame-ancestors 'none'`,
    )
    .send(`<!doctype html><html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width">
<title>${title} · Hostplane</title><style nonce="${nonce}">${STYLE}</style></head><body><h1>${title}</h1>${body}
<p id="out" role="status"></p><script nonce="${nonce}">
const token = new URLSearchParams(location.search).get('token') || '';
history.replaceState(null, '', location.pathname);
const out = document.getElementById('out');
async function post(path, body) {
  const res = await fetch('/api/v1/client/auth/' + path, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
  const data = await res.json().catch(() => ({ message: 'Unexpected answer.' }));
  const detail = data.errors ? Object.entries(data.errors).map(([k, v]) => k + ' ' + v).join('; ') : '';
  out.textContent = data.message + (detail ? ' (' + detail + ')' : '');
  return res.ok;
}
${script}
</script></body></html>`);
}

export async function pageRoutes(app: FastifyInstance): Promise<void> {
  app.get('/verify', { schema: { hide: true } }, async (_request, reply) =>
    page(reply, 'Verify your e-mail address', '<p>Checking your link…</p>', 'post("verify/", { token });'),
  );
  app.get('/reset', { schema: { hide: true } }, async (_request, reply) =>
    page(
      reply,
      'Choose a new password',
      '<form id="f"><label>New password<input id="pw" type="password" autocomplete="new-password" minlength="8" required></label>' +
        '<button>Set password</button></form><p>At least 8 characters, with a letter and a number.</p>',
      'document.getElementById("f").addEventListener("submit", async (e) => { e.preventDefault();' +
        ' if (await post("reset/", { token, password: document.getElementById("pw").value })) e.target.remove(); });',
    ),
  );
}

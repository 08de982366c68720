// PHP versions of an account's vhosts through UAPI `LangPHP::*` (upstreams.md §3.4): what the
// account may choose, what a vhost runs (or `inherit` when it follows the server's or its
// parent's default), and setting it.

import { UpstreamError } from '../errors.ts';
import type { WebPhp } from '../web-panel.ts';
import type { CpanelClient } from './client.ts';
import { isRow, rows, strings, text } from './mapping.ts';

const php = { area: 'other' } as const;

export async function getPhp(client: CpanelClient, username: string, vhost: string): Promise<WebPhp> {
  const [installed, vhosts] = await Promise.all([
    client.uapi(username, 'LangPHP', 'php_get_installed_versions', {}, php),
    client.uapi(username, 'LangPHP', 'php_get_vhost_versions', {}, php),
  ]);
  if (!isRow(installed) || !Array.isArray(installed.versions)) throw client.garbled('a list of PHP versions');
  // An array of vhosts; a single object when cPanel was asked for one.
  const list = isRow(vhosts) ? [vhosts] : rows(vhosts);
  const row = list.find((v) => text(v.vhost).toLowerCase() === vhost.toLowerCase());
  if (!row) {
    const said = `Cannot find vhost “${vhost}”.`;
    throw new UpstreamError('rejected', `${client.label}: LangPHP::php_get_vhost_versions for ${username} (${said})`, {
      retryable: false,
      detail: said,
      reason: 'not_found',
    });
  }
  // `version` is what the vhost runs; `phpversion_source` says where it comes from: the server's
  // default (`system_default`) or another domain's setting (inherited), or the vhost's own.
  const source = isRow(row.phpversion_source) ? row.phpversion_source : {};
  const from = text(source.domain).toLowerCase();
  const inherits = 'system_default' in source || (from !== '' && from !== vhost.toLowerCase());
  return { installed: strings(installed.versions), current: inherits ? 'inherit' : text(row.version) || 'inherit' };
}

export async function setPhp(client: CpanelClient, username: string, vhost: string, version: string): Promise<void> {
  await client.uapi(username, 'LangPHP', 'php_set_vhost_versions', { version, vhost }, { ...php, write: true });
}

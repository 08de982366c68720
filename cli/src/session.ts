// Which server and token a command uses: the named context (--context, else the current one),
// overridden by HOSTPLANE_URL / --url and HOSTPLANE_TOKEN (scripts and CI need no config file).
// Every request carries the token, so plain http:// is only for this machine (loopback) unless
// --insecure says otherwise: on any other network the token would cross it in clear text.

import { isIPv4, isIPv6 } from 'node:net';
import { Hostplane } from '@hostplane/sdk';
import { type ConfigFile, loadConfig } from './config.ts';
import { CliError, UsageError } from './errors.ts';
import { err, note, paint } from './output.ts';

export const DEFAULT_URL = 'http://localhost:8080';
export const VERSION = '0.1.0';

export interface GlobalArgs {
  output: 'table' | 'json';
  context?: string | undefined;
  url?: string | undefined;
  insecure?: boolean | undefined;
}

/** Whether `hostname` (as URL parses it) is this machine: localhost, 127.0.0.0/8 or ::1. */
export function isLoopback(hostname: string): boolean {
  const host = hostname.replace(/^\[|\]$/g, '').toLowerCase();
  if (host === 'localhost') return true;
  if (isIPv4(host)) return host.startsWith('127.');
  if (isIPv6(host)) return host === '::1' || /^::ffff:(?:127\.|7f[0-9a-f]{2}:)/.test(host);
  return false;
}

export function checkUrl(url: string, insecure = false): string {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw new UsageError(`--url ${url} is not a URL (e.g. ${DEFAULT_URL})`);
  }
  if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') {
    throw new UsageError(`--url ${url} must be http:// or https://`);
  }
  if (parsed.protocol === 'http:' && !insecure && !isLoopback(parsed.hostname)) {
    throw new UsageError(
      `${url} is plain http:// to another machine: the token would cross the network unencrypted. ` +
        'Use https://, or pass --insecure if this network is yours alone',
    );
  }
  return url.replace(/\/+$/, '');
}

export function client(url: string, token: string): Hostplane {
  return new Hostplane({
    baseUrl: url,
    token,
    userAgent: `hostplane-cli/${VERSION}`,
    ...(process.env.HOSTPLANE_CLOUD_PATH ? { cloudBasePath: process.env.HOSTPLANE_CLOUD_PATH } : {}),
    onRetry: ({ status, delayMs, attempt }) =>
      note(paint(err.dim, `server answered ${status}; retrying in ${Math.ceil(delayMs / 1000)} s (retry ${attempt})`)),
  });
}

export interface Session {
  client: Hostplane;
  url: string;
  context: string | null;
  config: ConfigFile;
}

/** The client for a command that needs a login. */
export function session(args: GlobalArgs): Session {
  const config = loadConfig();
  const name = args.context ?? config.current;
  const context = name ? config.contexts[name] : undefined;
  if (args.context && !context && !process.env.HOSTPLANE_TOKEN) {
    throw new UsageError(`no context named ${args.context} (hostplane context list)`);
  }
  const token = process.env.HOSTPLANE_TOKEN || context?.token;
  if (!token) throw new CliError('not logged in: run `hostplane login` (or set HOSTPLANE_TOKEN)');
  const url = checkUrl(args.url ?? (process.env.HOSTPLANE_URL || context?.url || DEFAULT_URL), args.insecure);
  return { client: client(url, token), url, context: context ? (name ?? null) : null, config };
}

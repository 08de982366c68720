// Which server and token a command uses: the named context (--context, else the current one),
// overridden by HOSTPLANE_URL / --url and HOSTPLANE_TOKEN (scripts and CI need no config file).

import { Hostplane } from '@hostplane/sdk';
import { type ConfigFile, loadConfig } from './config.ts';
import { CliError, UsageError } from './errors.ts';
import { err, note } from './output.ts';

export const DEFAULT_URL = 'http://localhost:8080';
export const VERSION = '0.1.0';

export interface GlobalArgs {
  output: 'table' | 'json';
  context?: string | undefined;
  url?: string | undefined;
}

export function checkUrl(url: string): string {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw new UsageError(`--url ${url} is not a URL (e.g. ${DEFAULT_URL})`);
  }
  if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') {
    throw new UsageError(`--url ${url} must be http:// or https://`);
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
      note(err.dim(`server answered ${status}; retrying in ${Math.ceil(delayMs / 1000)} s (retry ${attempt})`)),
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
  const url = checkUrl(args.url ?? (process.env.HOSTPLANE_URL || context?.url || DEFAULT_URL));
  return { client: client(url, token), url, context: context ? (name ?? null) : null, config };
}

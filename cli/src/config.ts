// Where `hostplane login` keeps its contexts: $XDG_CONFIG_HOME/hostplane/config.json, else
// ~/.config/hostplane/config.json. The file holds API tokens, so it is written 0600 in a 0700
// directory, through a temporary file renamed over the old one (a crash never leaves half a file).

import { chmodSync, mkdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { CliError } from './errors.ts';

export interface Context {
  url: string;
  token: string;
}

export interface ConfigFile {
  current: string | null;
  contexts: Record<string, Context>;
}

export function configDir(env: NodeJS.ProcessEnv = process.env): string {
  const base = env.XDG_CONFIG_HOME && env.XDG_CONFIG_HOME !== '' ? env.XDG_CONFIG_HOME : join(homedir(), '.config');
  return join(base, 'hostplane');
}

export function configPath(env: NodeJS.ProcessEnv = process.env): string {
  return join(configDir(env), 'config.json');
}

export function loadConfig(): ConfigFile {
  const path = configPath();
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return { current: null, contexts: {} };
    throw new CliError(`cannot read ${path}: ${(error as Error).message}`);
  }
  try {
    const parsed = JSON.parse(text) as Partial<ConfigFile>;
    return { current: parsed.current ?? null, contexts: parsed.contexts ?? {} };
  } catch {
    throw new CliError(`${path} is not valid JSON: fix or delete it, then run \`hostplane login\` again`);
  }
}

export function saveConfig(config: ConfigFile): void {
  const dir = configDir();
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  const path = configPath();
  const temporary = `${path}.${process.pid}.tmp`;
  try {
    writeFileSync(temporary, `${JSON.stringify(config, null, 2)}\n`, { mode: 0o600, flag: 'w' });
    // The mode of writeFileSync applies only to a new file, and the umask may narrow but never widen it.
    chmodSync(temporary, 0o600);
    renameSync(temporary, path);
  } catch (error) {
    rmSync(temporary, { force: true });
    throw new CliError(`cannot write ${path}: ${(error as Error).message}`);
  }
}

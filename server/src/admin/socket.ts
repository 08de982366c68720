// The admin socket. An embedded database belongs to one process, so while `npm start` holds
// DATA_DIR the staff CLI cannot open it; instead it sends its argv over a Unix socket in
// DATA_DIR (mode 0600: only the same OS user can connect) and the server runs the command
// on its own Deps. PostgreSQL deployments never need this: the CLI connects directly.
//
// A socket path must fit in sun_path. When DATA_DIR/admin.sock does not, the socket goes to a
// directory only this user can enter: $XDG_RUNTIME_DIR when it is ours and private, else a new
// 0700 directory with a random name in the temporary directory. Never a fixed name in a shared
// directory: another local user could take that name first and keep the server from starting
// (a sticky /tmp does not let us remove their entry), or put a socket of their own there. The
// chosen path is written to DATA_DIR/admin.sock.path (0600) for the CLI to find. An abstract
// socket would need no directory, but has no permission checks: any local user could connect.

import { createHash } from 'node:crypto';
import {
  chmodSync,
  lstatSync,
  mkdtempSync,
  readFileSync,
  renameSync,
  rmSync,
  type Stats,
  writeFileSync,
} from 'node:fs';
import { createServer, request, type Server } from 'node:http';
import { tmpdir } from 'node:os';
import { isAbsolute, join } from 'node:path';
import { ConfigError } from '../config.ts';
import type { Deps } from '../core/deps.ts';
import { noInputs, type ReadInputs, replayInputs } from './inputs.ts';
import { type AdminResult, runAdmin } from './run.ts';

const MAX_SOCKET_PATH = 100; // sun_path is 108 bytes on Linux, 104 on macOS
/** Where the server records a socket that is not DATA_DIR/admin.sock. */
export const SOCKET_POINTER = 'admin.sock.path';

const fits = (path: string) => Buffer.byteLength(path) <= MAX_SOCKET_PATH;
const myUid = () => process.getuid?.() ?? -1;

function statOf(path: string): Stats | null {
  try {
    return lstatSync(path);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw error;
  }
}

/** Whether `dir` is a directory (not a link) of this user that no one else may enter. */
function isPrivateDir(dir: string): boolean {
  const stat = statOf(dir);
  return stat?.isDirectory() === true && stat.uid === myUid() && (stat.mode & 0o077) === 0;
}

interface Placement {
  path: string;
  /** A directory made for the socket alone, removed with it. */
  madeDir: string | null;
}

/** Where the socket of `dataDir` goes (see the top of this file); makes the private directory if needed. */
function placeSocket(dataDir: string, env: NodeJS.ProcessEnv): Placement {
  const inDataDir = join(dataDir, 'admin.sock');
  if (fits(inDataDir)) return { path: inDataDir, madeDir: null };
  const runtime = env.XDG_RUNTIME_DIR;
  if (runtime && isAbsolute(runtime) && isPrivateDir(runtime)) {
    const digest = createHash('sha256').update(dataDir).digest('hex').slice(0, 16);
    const path = join(runtime, `hostplane-${digest}.sock`);
    if (fits(path)) return { path, madeDir: null };
  }
  for (const base of new Set([tmpdir(), '/tmp'])) {
    // mkdtemp's directory is 0700 under any umask, with a name no one can guess in advance.
    if (!fits(join(base, 'hostplane-XXXXXX', 'admin.sock'))) continue;
    const dir = mkdtempSync(join(base, 'hostplane-'));
    return { path: join(dir, 'admin.sock'), madeDir: dir };
  }
  throw new ConfigError(
    `the admin socket path would be longer than ${MAX_SOCKET_PATH} bytes in DATA_DIR (${dataDir}), ` +
      'XDG_RUNTIME_DIR and the temporary directory: use a shorter DATA_DIR or TMPDIR',
  );
}

/** Remove what a dead server left at `path`; refuse what is not ours to remove. */
function clearStale(path: string): void {
  const stat = statOf(path);
  if (stat === null) return;
  if (stat.uid !== myUid()) {
    throw new ConfigError(
      `${path} (the admin socket) exists and belongs to another user (uid ${stat.uid}): ` +
        'remove it, or set XDG_RUNTIME_DIR to a private directory of this user',
    );
  }
  if (stat.isDirectory()) {
    throw new ConfigError(`${path} (the admin socket) exists and is a directory: remove it`);
  }
  // We hold the data directory lock, so a socket of ours here was left by a dead process.
  rmSync(path, { force: true });
}

/** Write the pointer file through a temporary file renamed over the old one (0600: DATA_DIR is private too). */
function writePointer(dataDir: string, path: string): void {
  const pointer = join(dataDir, SOCKET_POINTER);
  const temporary = `${pointer}.${process.pid}.tmp`;
  writeFileSync(temporary, `${path}\n`, { mode: 0o600 });
  chmodSync(temporary, 0o600);
  renameSync(temporary, pointer);
}

/** The CLI could not reach the running server's admin socket. */
export class AdminSocketError extends Error {
  override name = 'AdminSocketError';
}

/** The socket the server of `dataDir` listens on: DATA_DIR/admin.sock, or the one its pointer file names. */
export function adminSocketPath(dataDir: string): string {
  const inDataDir = join(dataDir, 'admin.sock');
  if (fits(inDataDir)) return inDataDir;
  const pointer = join(dataDir, SOCKET_POINTER);
  let recorded: string;
  try {
    recorded = readFileSync(pointer, 'utf8').trim();
  } catch (error) {
    throw new AdminSocketError(
      `cannot read ${pointer}, where the running server records its admin socket: ${(error as NodeJS.ErrnoException).code ?? error}`,
    );
  }
  if (!isAbsolute(recorded) || recorded.includes('\0')) {
    throw new AdminSocketError(`${pointer} does not hold a socket path`);
  }
  return recorded;
}

export async function startAdminSocket(
  deps: Deps,
  dataDir: string,
  env: NodeJS.ProcessEnv = process.env,
): Promise<Server> {
  const { path, madeDir } = placeSocket(dataDir, env);
  const pointer = join(dataDir, SOCKET_POINTER);
  try {
    clearStale(path);
  } catch (error) {
    if (madeDir) rmSync(madeDir, { recursive: true, force: true });
    throw error;
  }
  const server = createServer((req, res) => {
    if (req.method !== 'POST' || req.url !== '/run') {
      res.writeHead(404).end();
      return;
    }
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      let argv: string[];
      let actor: string;
      let inputs = noInputs;
      try {
        const body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as {
          argv?: unknown;
          actor?: unknown;
          inputs?: unknown;
        };
        if (!Array.isArray(body.argv) || !body.argv.every((a) => typeof a === 'string')) throw new Error('argv');
        argv = body.argv;
        actor = typeof body.actor === 'string' && /^staff:[\w.@-]{1,64}$/.test(body.actor) ? body.actor : 'staff';
        if (body.inputs !== undefined) inputs = replayInputs(readInputs(body.inputs));
      } catch {
        res.writeHead(400).end();
        return;
      }
      deps.logger.info(
        {
          command: argv
            .filter((a) => !a.startsWith('-'))
            .slice(0, 2)
            .join(' '),
        },
        'admin command',
      );
      runAdmin(argv, async () => deps, actor, inputs).then(
        (result) => res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(result)),
        (error: unknown) => {
          deps.logger.error({ err: error }, 'admin command failed');
          const result: AdminResult = {
            exitCode: 1,
            stdout: '',
            stderr: 'error: the command failed inside the server; see its log\n',
          };
          res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(result));
        },
      );
    });
  });
  const cleanUp = () => {
    rmSync(path, { force: true });
    if (madeDir) rmSync(madeDir, { recursive: true, force: true });
    if (path !== join(dataDir, 'admin.sock')) rmSync(pointer, { force: true });
  };
  try {
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(path, () => resolve());
    });
    chmodSync(path, 0o600);
    // A pointer left by an earlier run (another DATA_DIR length, another directory) is replaced.
    if (path === join(dataDir, 'admin.sock')) rmSync(pointer, { force: true });
    else writePointer(dataDir, path);
  } catch (error) {
    server.close();
    cleanUp();
    throw error;
  }
  server.on('close', cleanUp);
  return server;
}

/** What the CLI read from its standard input and files, checked for shape. */
function readInputs(raw: unknown): ReadInputs {
  if (raw === null || typeof raw !== 'object') throw new Error('inputs');
  const { stdin, files } = raw as { stdin?: unknown; files?: unknown };
  if (stdin !== undefined && typeof stdin !== 'string') throw new Error('inputs.stdin');
  if (files !== undefined) {
    if (files === null || typeof files !== 'object') throw new Error('inputs.files');
    if (!Object.values(files).every((text) => typeof text === 'string')) throw new Error('inputs.files');
  }
  return {
    ...(stdin === undefined ? {} : { stdin }),
    ...(files === undefined ? {} : { files: files as Record<string, string> }),
  };
}

/** Run a command inside the server that holds `dataDir`, with what the CLI read for it. */
export function runRemote(
  dataDir: string,
  argv: string[],
  actor: string,
  inputs: ReadInputs = {},
): Promise<AdminResult> {
  return new Promise((resolve, reject) => {
    // Thrown here, it rejects the promise.
    const socketPath = adminSocketPath(dataDir);
    const req = request(
      {
        socketPath,
        path: '/run',
        method: 'POST',
        headers: { 'content-type': 'application/json' },
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (chunk: Buffer) => chunks.push(chunk));
        res.on('end', () => {
          try {
            resolve(JSON.parse(Buffer.concat(chunks).toString('utf8')) as AdminResult);
          } catch (error) {
            reject(error);
          }
        });
      },
    );
    req.on('error', (error: NodeJS.ErrnoException) =>
      reject(
        new AdminSocketError(`cannot reach the server's admin socket ${socketPath}: ${error.code ?? error.message}`),
      ),
    );
    req.end(JSON.stringify({ argv, actor, inputs }));
  });
}

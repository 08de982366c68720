// The admin socket. An embedded database belongs to one process, so while `npm start` holds
// DATA_DIR the staff CLI cannot open it; instead it sends its argv over a Unix socket in
// DATA_DIR (mode 0600: only the same OS user can connect) and the server runs the command
// on its own Deps. PostgreSQL deployments never need this: the CLI connects directly.

import { createHash } from 'node:crypto';
import { chmodSync, rmSync } from 'node:fs';
import { createServer, request, type Server } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Deps } from '../core/deps.ts';
import { noInputs, type ReadInputs, replayInputs } from './inputs.ts';
import { type AdminResult, runAdmin } from './run.ts';

const MAX_SOCKET_PATH = 100; // sun_path is 108 bytes on Linux, 104 on macOS

export function adminSocketPath(dataDir: string): string {
  const inDataDir = join(dataDir, 'admin.sock');
  if (Buffer.byteLength(inDataDir) <= MAX_SOCKET_PATH) return inDataDir;
  const digest = createHash('sha256').update(dataDir).digest('hex').slice(0, 16);
  return join(tmpdir(), `hostplane-${digest}.sock`);
}

export async function startAdminSocket(deps: Deps, dataDir: string): Promise<Server> {
  const path = adminSocketPath(dataDir);
  // We hold the data directory lock, so any socket file here was left by a dead process.
  rmSync(path, { force: true });
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
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(path, () => resolve());
  });
  chmodSync(path, 0o600);
  server.on('close', () => rmSync(path, { force: true }));
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
    const req = request(
      {
        socketPath: adminSocketPath(dataDir),
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
    req.on('error', reject);
    req.end(JSON.stringify({ argv, actor, inputs }));
  });
}

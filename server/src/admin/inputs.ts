// What a staff command reads besides its command line: secrets such as node credentials, which
// must not be arguments (other local users read /proc/<pid>/cmdline, and shells keep history).
// The CLI process reads them (from its standard input or a file of the staff user's), so a
// command that runs inside a server through the admin socket gets the same text.

import { open } from 'node:fs/promises';
import { resolve } from 'node:path';
import { type InputReader, UsageError } from './command.ts';

/** At most this many bytes from standard input or a file: credentials are small. */
export const MAX_INPUT_BYTES = 64 * 1024;

/** At most this many bytes from a file that is no secret: a year of a busy bank statement. */
export const MAX_FILE_BYTES = 8 * 1024 * 1024;

/** What the CLI process read, sent along with the command line over the admin socket. */
export interface ReadInputs {
  stdin?: string;
  files?: Record<string, string>;
}

/** For callers without a terminal (tests, the admin socket without recorded inputs). */
export const noInputs: InputReader = {
  stdin: async () => {
    throw new UsageError('standard input is not available here');
  },
  secretFile: async (path) => {
    throw new UsageError(`cannot read ${path} here`);
  },
  file: async (path) => {
    throw new UsageError(`cannot read ${path} here`);
  },
};

function tooLarge(what: string, limit = MAX_INPUT_BYTES): UsageError {
  return new UsageError(`${what} is larger than ${limit / 1024} KiB`);
}

/** Read a stream whole, refusing more than `limit` bytes. */
export async function readStream(
  stream: AsyncIterable<Buffer | string>,
  what: string,
  limit = MAX_INPUT_BYTES,
): Promise<string> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of stream) {
    const buffer = typeof chunk === 'string' ? Buffer.from(chunk) : chunk;
    size += buffer.length;
    if (size > limit) throw tooLarge(what, limit);
    chunks.push(buffer);
  }
  return Buffer.concat(chunks).toString('utf8');
}

/** Read a secret file: a regular file (or a pipe, e.g. `<(pass show …)`) only its owner can use. */
export async function readSecretFile(path: string): Promise<string> {
  let handle: Awaited<ReturnType<typeof open>>;
  try {
    handle = await open(resolve(path), 'r');
  } catch (error) {
    throw new UsageError(`cannot read ${path}: ${(error as NodeJS.ErrnoException).code ?? (error as Error).message}`);
  }
  try {
    const stat = await handle.stat();
    if (stat.isFile()) {
      if ((stat.mode & 0o077) !== 0) {
        const mode = (stat.mode & 0o777).toString(8).padStart(4, '0');
        throw new UsageError(
          `${path} holds a secret but other users may read or change it (mode ${mode}); run \`chmod 600 ${path}\` first`,
        );
      }
      if (stat.size > MAX_INPUT_BYTES) throw tooLarge(path);
    } else if (!stat.isFIFO()) {
      throw new UsageError(`${path} is not a file`);
    }
    return await readStream(handle.createReadStream({ autoClose: false }), path);
  } finally {
    await handle.close();
  }
}

/** Read a file that is no secret (a statement to import): a regular file or a pipe, up to MAX_FILE_BYTES. */
export async function readPlainFile(path: string): Promise<string> {
  let handle: Awaited<ReturnType<typeof open>>;
  try {
    handle = await open(resolve(path), 'r');
  } catch (error) {
    throw new UsageError(`cannot read ${path}: ${(error as NodeJS.ErrnoException).code ?? (error as Error).message}`);
  }
  try {
    const stat = await handle.stat();
    if (!stat.isFile() && !stat.isFIFO()) throw new UsageError(`${path} is not a file`);
    if (stat.size > MAX_FILE_BYTES) throw tooLarge(path, MAX_FILE_BYTES);
    return await readStream(handle.createReadStream({ autoClose: false }), path, MAX_FILE_BYTES);
  } finally {
    await handle.close();
  }
}

/** The CLI's own reader: its standard input and the staff user's files. */
export function localInputs(input: NodeJS.ReadStream = process.stdin, prompt?: (text: string) => void): InputReader {
  let stdin: Promise<string> | null = null;
  return {
    stdin() {
      if (stdin === null) {
        if (input.isTTY) prompt?.('Paste the JSON, then press Ctrl-D on a line of its own:\n');
        stdin = readStream(input, 'standard input');
      }
      return stdin;
    },
    secretFile: readSecretFile,
    file: readPlainFile,
  };
}

/** Wrap a reader so that what it read can be sent over the admin socket. */
export function recordingInputs(inner: InputReader): { reader: InputReader; read: ReadInputs } {
  const read: ReadInputs = {};
  return {
    read,
    reader: {
      async stdin() {
        read.stdin = await inner.stdin();
        return read.stdin;
      },
      async secretFile(path) {
        const text = await inner.secretFile(path);
        read.files = { ...read.files, [path]: text };
        return text;
      },
      async file(path) {
        const text = await inner.file(path);
        read.files = { ...read.files, [path]: text };
        return text;
      },
    },
  };
}

/** Inside the server: give a command what the CLI process read. */
export function replayInputs(read: ReadInputs): InputReader {
  return {
    stdin: async () => read.stdin ?? noInputs.stdin(),
    secretFile: async (path) => read.files?.[path] ?? noInputs.secretFile(path),
    file: async (path) => read.files?.[path] ?? noInputs.file(path),
  };
}

// Questions to the person at the terminal, through `read` (npm's own prompt): the token is read
// without echo. Prompts are written to stderr, so `-o json` output stays clean; when standard
// input is not a terminal the answer is read from it (`echo "$TOKEN" | hostplane login`).

import { read } from 'read';
import { CliError } from './errors.ts';

export async function ask(prompt: string, options: { silent?: boolean } = {}): Promise<string> {
  // `read` waits for a line forever when standard input ends without one (a closed pipe).
  let onEnd = () => {};
  const ended = new Promise<never>((_resolve, reject) => {
    onEnd = () => reject(new Error('end'));
    process.stdin.once('end', onEnd);
  });
  try {
    const answer = await Promise.race([
      read({ prompt, silent: options.silent ?? false, replace: '', output: process.stderr }),
      ended,
    ]);
    return answer.trim();
  } catch (error) {
    if ((error as Error).message === 'canceled') throw new CliError('cancelled');
    throw new CliError(`no answer to "${prompt.trim()}" (standard input closed)`);
  } finally {
    process.stdin.off('end', onEnd);
    // Nothing echoed the Enter key (a silent prompt, or an answer from a pipe): end the line.
    if (options.silent || !process.stdin.isTTY) process.stderr.write('\n');
  }
}

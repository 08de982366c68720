// ci: one engine (this file uses no database and no Redis: the second engine would run it again unchanged)
// The process log's stdout sink (logging.ts LogSink): lines are gathered for a few milliseconds and
// written together (issue 18), in order, none lost; flush() waits for them; exit writes what waits.

import assert from 'node:assert/strict';
import { closeSync, mkdtempSync, openSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { LogSink } from '../src/logging.ts';

const dir = mkdtempSync(join(tmpdir(), 'hp-log-sink-'));
after(() => rmSync(dir, { recursive: true, force: true }));

function sinkOnFile(name: string) {
  const path = join(dir, name);
  const fd = openSync(path, 'w');
  return { sink: new LogSink(fd), read: () => readFileSync(path, 'utf8'), close: () => closeSync(fd) };
}

test('lines written in one tick and over several arrive whole and in order; flush waits for them', async () => {
  const { sink, read, close } = sinkOnFile('order.log');
  const expected: string[] = [];
  for (let i = 0; i < 500; i++) {
    const line = `{"n":${i},"msg":"line ${i}"}\n`;
    expected.push(line);
    sink.write(line);
    // Nothing is written while the writing code runs: the lines wait for the write that gathers them.
    if (i === 99) assert.equal(read(), '');
    if (i % 100 === 99) await new Promise((r) => setTimeout(r, 2));
  }
  await sink.flush(5_000);
  assert.equal(read(), expected.join(''));
  sink.write('last\n');
  await sink.flush(5_000);
  assert.ok(read().endsWith('}\nlast\n'));
  close();
});

test('a burst past the gathering size is written whole', async () => {
  const { sink, read, close } = sinkOnFile('burst.log');
  const line = `${'x'.repeat(1023)}\n`;
  const lines = Math.ceil(LogSink.COALESCE_CHARS / line.length) + 1;
  for (let i = 0; i < lines; i++) sink.write(line);
  await sink.flush(5_000);
  assert.equal(read(), line.repeat(lines));
  close();
});

test('flushSync at exit writes what is still gathered', () => {
  const { sink, read, close } = sinkOnFile('exit.log');
  sink.write('a\n');
  sink.write('b\n');
  sink.flushSync();
  assert.equal(read(), 'a\nb\n');
  close();
});

// ci: one engine (this file uses no database and no Redis: the second engine would run it again unchanged)
// The provisioning step runner (core/product-kit/steps.ts): each step recorded before it runs, a
// failure stops the run, and undo runs the undo of every step reached — by this attempt or,
// from the recorded progress, by an earlier one — last first, past a failing undo.

import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { reachedBefore, type Step, stepRun } from '../src/core/product-kit/steps.ts';

function steps(log: string[], failAt?: string): Step<null>[] {
  return ['a', 'b', 'c'].map((name, i) => ({
    name,
    progress: (i + 1) * 20,
    async run() {
      log.push(`run ${name}`);
      if (name === failAt) throw new Error(`${name} failed`);
    },
    async undo() {
      log.push(`undo ${name}`);
      if (name === 'b' && failAt === 'boom') throw new Error('undo failed');
    },
  }));
}

const recorder = (log: string[]) => ({
  reached: async (progress: number, name: string) => {
    log.push(`at ${progress} ${name}`);
  },
});

describe('step runner', () => {
  test('records each step before running it, in order', async () => {
    const log: string[] = [];
    await stepRun(steps(log), null, recorder(log), 0).run();
    assert.deepEqual(log, ['at 20 a', 'run a', 'at 40 b', 'run b', 'at 60 c', 'run c']);
  });

  test('a failure stops the run; undo runs the reached steps in reverse, the failed one included', async () => {
    const log: string[] = [];
    const run = stepRun(steps(log, 'b'), null, recorder(log), 0);
    await assert.rejects(run.run(), /b failed/);
    log.length = 0;
    await run.undo(() => assert.fail('no undo fails'));
    assert.deepEqual(log, ['undo b', 'undo a']);
  });

  test('an earlier attempt that got further is undone too (from the recorded progress)', async () => {
    assert.equal(reachedBefore(steps([]), 0), -1);
    assert.equal(reachedBefore(steps([]), 45), 1);
    const log: string[] = [];
    const run = stepRun(steps(log, 'a'), null, recorder(log), 60);
    await assert.rejects(run.run(), /a failed/);
    log.length = 0;
    await run.undo(() => assert.fail('no undo fails'));
    assert.deepEqual(log, ['undo c', 'undo b', 'undo a']);
  });

  test('a failing undo is reported and the others still run', async () => {
    const log: string[] = [];
    const failed: string[] = [];
    const run = stepRun(steps(log, 'boom'), null, recorder(log), 60);
    log.length = 0;
    await run.undo((step) => failed.push(step.name));
    assert.deepEqual(log, ['undo c', 'undo b', 'undo a']);
    assert.deepEqual(failed, ['b']);
  });
});

// Provisioning as explicit steps, each next to its undo. The runner records the step reached
// (the job's `progress` and `step`) before running it, so staff and clients see where a job
// is and a later attempt knows how far an earlier one got. Steps are idempotent: an attempt
// after a crash or a retryable failure runs them again from the first, each finding what an
// earlier run made (the VM by its name, the stored password) instead of making it twice; the
// recorded progress never moves back meanwhile. When the job gives up, `undo` runs the undo of
// every step reached, by any attempt, in reverse order.

export interface Step<C> {
  /** What the job is doing, as clients see it in the job's `step`. */
  name: string;
  /** The job's progress (0–100) once this step has started; increasing along the list. */
  progress: number;
  run(c: C): Promise<void>;
  /** Remove what `run` made; best effort, safe when `run` made nothing. */
  undo?(c: C): Promise<void>;
}

export interface StepRecorder {
  /** Record that the job reached `step` (never lowering the recorded progress). */
  reached(progress: number, name: string): Promise<void>;
}

/** Index of the last step an earlier attempt reached, from the job's recorded progress (-1: none). */
export function reachedBefore<C>(steps: readonly Step<C>[], recordedProgress: number): number {
  let index = -1;
  steps.forEach((step, i) => {
    if (step.progress <= recordedProgress) index = i;
  });
  return index;
}

export interface StepRun<C> {
  /** Run every step in order, recording each; throws the first failure. */
  run(): Promise<void>;
  /** Undo the steps reached (this attempt or an earlier one), last first; a failing undo is reported and skipped. */
  undo(onError: (step: Step<C>, error: unknown) => void): Promise<void>;
}

export function stepRun<C>(
  steps: readonly Step<C>[],
  c: C,
  recorder: StepRecorder,
  recordedProgress: number,
): StepRun<C> {
  let reached = reachedBefore(steps, recordedProgress);
  return {
    async run() {
      for (const [i, step] of steps.entries()) {
        await recorder.reached(step.progress, step.name);
        if (i > reached) reached = i;
        await step.run(c);
      }
    },
    async undo(onError) {
      for (let i = reached; i >= 0; i--) {
        const step = steps[i] as Step<C>;
        if (!step.undo) continue;
        try {
          await step.undo(c);
        } catch (error) {
          onError(step, error);
        }
      }
    },
  };
}

// Answers leave together at the end of the event loop's turn (issue 18, seventh pass).
//
// An answer written as soon as its request is done wakes the client's side once per answer. Under
// load on this machine's two virtual CPUs each of those wake-ups is an interrupt to a CPU that had
// gone idle, and its cost lands on the writing system call: with every request finishing in its own
// callback (the in-memory rate limit, i.e. every embedded server), `writev` was 30 % of the main
// thread's time, the machine made 18,000 context switches a second against 6,000, and /plans served
// 0.32–0.35× the raw baseline. The answers of the requests handled in one turn, written one after
// the other when the turn's I/O is done, reach a client that is still busy with the first: 0.48×,
// the main thread's CPU per request 67 → 40 µs (docs/BENCHMARKS.md). An answer waits for the other
// callbacks of its turn at most; when the server is idle a turn holds one request and it leaves at
// once.

/** Queue `run` for the end of this turn of the event loop; everything queued in a turn runs together. */
export type TurnBatch = (run: () => void) => void;

export function createTurnBatch(onError: (error: unknown) => void): TurnBatch {
  let waiting: (() => void)[] = [];
  const release = (): void => {
    // What runs now and queues more goes into the next turn's batch, so a batch always ends.
    const now = waiting;
    waiting = [];
    for (const run of now) {
      try {
        run();
      } catch (error) {
        onError(error);
      }
    }
  };
  return (run) => {
    if (waiting.length === 0) setImmediate(release);
    waiting.push(run);
  };
}

// Answers leave together at the end of the event loop's turn.
//
// An answer written as soon as its request is done wakes the idle client side once per answer, and
// on a virtual machine under load each wake-up is an interrupt charged to the writing system call
// (with every request finishing in its own callback, as with the in-memory rate limit of every
// embedded server). The answers of the requests handled in one turn, written one after the other
// when the turn's I/O is done, reach a client that is still busy with the first. An answer waits
// for the other callbacks of its turn at most; when the server is idle a turn holds one request and
// it leaves at once.

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

// The upstream timing and retry policy every provisioning test runs with: the in-process worker
// of createUpstreamApp (./upstreams.ts) and the worker processes of kill-drills.test.ts
// (./worker-process.ts). Kept apart from the emulators so that a worker process loads only this.

/** Upstream timing of the tests: fast polls, short timeouts, a call budget no test reaches. */
export const TEST_DRIVER_TIMING = {
  pollIntervalMs: 10,
  requestTimeoutMs: 1500,
  taskTimeoutMs: 5000,
  budget: { perMinute: 600_000, burst: 10_000 },
};

/** The service queues' retry policy of the tests: a second apart, `retryLimit` retries of provisioning. */
export function testQueues(retryLimit: number) {
  return {
    'service.provision': { retryDelay: 1, retryBackoff: false, retryLimit },
    'service.action': { retryDelay: 1, retryBackoff: false, retryLimit: 1 },
  };
}

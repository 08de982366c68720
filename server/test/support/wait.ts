// Waiting for a condition in tests: poll until it holds. The deadline only guards against a hang
// (60 s by default); no test asserts on durations.

/** Poll until `check` returns a value, or fail with what was last seen. */
export async function waitFor<T>(
  what: string,
  check: () => Promise<T | null | undefined | false>,
  ms = 60_000,
): Promise<T> {
  const deadline = Date.now() + ms;
  let last: unknown;
  for (;;) {
    const value = await check();
    if (value) return value;
    last = value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what} (last: ${JSON.stringify(last)})`);
    await new Promise((r) => setTimeout(r, 40));
  }
}

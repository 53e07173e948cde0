/**
 * Polls `read` every `everyMs` (25 ms by default) until it returns a truthy value and resolves with
 * it; past `ms` it fails with `what` (what was awaited) instead of hanging until the test timeout.
 */
type Truthy<T> = Exclude<T, false | 0 | '' | null | undefined>;

export async function eventually<T>(
  read: () => Promise<T> | T,
  ms = 5_000,
  what = 'condition',
  everyMs = 25,
): Promise<Truthy<T>> {
  const deadline = Date.now() + ms;
  for (;;) {
    const v = await read();
    if (v) return v as Truthy<T>;
    if (Date.now() > deadline) throw new Error(`${what}: not met within ${ms} ms`);
    await new Promise((r) => setTimeout(r, everyMs));
  }
}

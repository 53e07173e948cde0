/** Polls `read` every 25 ms until it returns a truthy value; fails after `ms` instead of hanging. */
export async function eventually<T>(read: () => Promise<T>, ms = 5_000): Promise<T> {
  const deadline = Date.now() + ms;
  for (;;) {
    const v = await read();
    if (v) return v;
    if (Date.now() > deadline) throw new Error('condition not met before the deadline');
    await new Promise((r) => setTimeout(r, 25));
  }
}

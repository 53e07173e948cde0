/**
 * `Promise.all(items.map(run))` with at most `limit` runs in flight: the results in item order,
 * each run started only when an earlier one has settled. A JSON-RPC batch runs its calls through
 * it (JSONRPC_BATCH_CONCURRENCY), so one request never has more than that many reads open at once.
 * `run` must not reject (a call's failure is its error answer).
 */
export async function boundedAll<T, R>(
  items: readonly T[],
  limit: number,
  run: (item: T, index: number) => R | Promise<R>,
): Promise<R[]> {
  const results = new Array<R>(items.length);
  let next = 0;
  // Runs that answer at once (not a promise) are taken in this turn, with no worker: the common
  // batch of calls answered from memory costs no promise at all.
  let first: { i: number; r: Promise<R> } | null = null;
  while (next < items.length && !first) {
    const i = next++;
    const r = run(items[i] as T, i);
    if (r instanceof Promise) first = { i, r };
    else results[i] = r;
  }
  if (!first) return results;
  const worker = async (pending: { i: number; r: Promise<R> } | null): Promise<void> => {
    if (pending) results[pending.i] = await pending.r;
    while (next < items.length) {
      const i = next++;
      const r = run(items[i] as T, i);
      results[i] = r instanceof Promise ? await r : r;
    }
  };
  const others = Math.min(limit, items.length - first.i) - 1;
  await Promise.all([worker(first), ...Array.from({ length: Math.max(0, others) }, () => worker(null))]);
  return results;
}

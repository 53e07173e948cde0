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
  // A run that answers at once (not a promise) is taken without waiting a turn.
  const worker = async (): Promise<void> => {
    while (next < items.length) {
      const i = next++;
      const r = run(items[i] as T, i);
      results[i] = r instanceof Promise ? await r : r;
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker));
  return results;
}

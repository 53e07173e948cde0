/**
 * A job's progress as its worker reports it (generation, export): `rows_done` of `rows_total`,
 * handed to `save` at most once per `everyMs` (the KV record is written from the hot loop's
 * callback, so most calls only compare a clock).
 */
export type JobProgress = { rows_done: number; rows_total: number };

export function throttledProgress(
  everyMs: number,
  save: (progress: JobProgress) => void,
): (done: number, total: number) => void {
  let last = 0;
  return (done, total) => {
    const now = Date.now();
    if (now - last < everyMs) return;
    last = now;
    save({ rows_done: done, rows_total: Math.max(total, done) });
  };
}

/**
 * Waiting for generation jobs to finish, with one KV watch per process (updates only, every key
 * of the `jobs` bucket) shared by every waiter, rather than one watch (one server-side consumer,
 * kept by the server for minutes after it stops) per synchronous request.
 * Invariant: a waiter gets the first completed-or-failed record of its job, whether written before
 * it started waiting (read once the watch runs) or after (from the watch); it is removed from the
 * map when it settles, at its deadline and when its signal aborts, so the map holds exactly the
 * requests waiting now (bounded by the caller's cap on synchronous requests).
 */
import type { JobRecord } from '../../../contracts/jobs.ts';
import type { Bucket } from '../../../platform/kv.ts';
import { decode } from '../../../platform/msgpack.ts';

export type WaitOutcome = JobRecord | 'deadline' | 'aborted';

const isFinal = (r: JobRecord | null): r is JobRecord => r?.status === 'completed' || r?.status === 'failed';

export class JobWaiters {
  private readonly waiters = new Map<string, Set<(r: JobRecord) => void>>();
  private watch: Promise<{ stop(): void }> | null = null;
  private closed = false;

  constructor(private readonly jobs: Bucket<JobRecord>) {}

  /** Requests waiting now. */
  get size(): number {
    let n = 0;
    for (const set of this.waiters.values()) n += set.size;
    return n;
  }

  async wait(jobId: string, deadlineMs: number, signal?: AbortSignal): Promise<WaitOutcome> {
    if (signal?.aborted) return 'aborted';
    let settle: (o: WaitOutcome) => void = () => {};
    const outcome = new Promise<WaitOutcome>((resolve) => {
      settle = resolve;
    });
    const onRecord = (r: JobRecord) => settle(r);
    const onAbort = () => settle('aborted');
    const timer = setTimeout(() => settle('deadline'), deadlineMs);
    signal?.addEventListener('abort', onAbort, { once: true });
    const set = this.waiters.get(jobId) ?? new Set();
    set.add(onRecord);
    this.waiters.set(jobId, set);
    try {
      await this.watching();
      const current = await this.jobs.get(jobId);
      if (isFinal(current)) settle(current);
      return await outcome;
    } finally {
      clearTimeout(timer);
      signal?.removeEventListener('abort', onAbort);
      set.delete(onRecord);
      if (set.size === 0 && this.waiters.get(jobId) === set) this.waiters.delete(jobId);
    }
  }

  /** Stops the shared watch (process shutdown). */
  async close(): Promise<void> {
    this.closed = true;
    (await this.watch?.catch(() => null))?.stop();
  }

  /** Starts the shared watch once; a watch that ended (or failed to start) is started again. */
  private watching(): Promise<unknown> {
    this.watch ??= this.jobs.raw.watch({ key: '>', include: 'updates' }).then((it) => {
      void (async () => {
        for await (const e of it) {
          if (e.operation !== 'PUT' || e.value.length === 0) continue;
          const handlers = this.waiters.get(e.key);
          if (!handlers) continue;
          const r = decode<JobRecord>(e.value);
          if (isFinal(r)) for (const h of handlers) h(r);
        }
      })().finally(() => {
        if (!this.closed) this.watch = null;
      });
      return it;
    });
    this.watch.catch(() => {
      this.watch = null;
    });
    return this.watch;
  }
}

/**
 * Retention of stored files (Parquet artifacts and cache exports, in either storage backend):
 * files older than the retention age (by modification time: a file is stored once complete and
 * never rewritten) are deleted, at start and then every interval. Deleting frees the space (the
 * object store purges the object's chunks). A file being read while it is removed stays readable
 * to that reader on the local disk (POSIX unlink); an object store read in flight may end short.
 * A download of a removed artifact is a 404 saying so. Running it in several processes on one
 * store is harmless: removal is idempotent.
 */
import type { ArtifactStore } from '../../platform/artifact-store/store.ts';
import type { Logger } from '../../platform/logger.ts';

export type RetentionSweepOptions = {
  /** Stores whose files expire (artifacts, cache exports). */
  stores: readonly ArtifactStore[];
  /** Files last modified longer ago than this are removed, ms. */
  maxAgeMs: number;
  /** Time between sweeps, ms. */
  intervalMs: number;
  log: Logger;
  now?: () => number;
};

export type RetentionSweep = {
  /** Runs one sweep now (after the one running, if any); resolves with where the removed files were. */
  sweep(): Promise<string[]>;
  stop(): Promise<void>;
};

/** Removes the files of `stores` modified before `cutoff` (Unix ms); returns their locations. */
export async function removeFilesOlderThan(
  stores: readonly ArtifactStore[],
  cutoff: number,
): Promise<string[]> {
  const removed: string[] = [];
  for (const store of stores) {
    for (const file of await store.list()) {
      if (file.mtimeMs >= cutoff) continue;
      if (await store.delete(file.name)) removed.push(store.locate(file.name));
    }
  }
  return removed;
}

export function startRetentionSweep(opts: RetentionSweepOptions): RetentionSweep {
  const now = opts.now ?? Date.now;
  let running: Promise<string[]> | null = null;
  const sweep = async (): Promise<string[]> => {
    while (running) await running;
    running = removeFilesOlderThan(opts.stores, now() - opts.maxAgeMs)
      .then((removed) => {
        if (removed.length > 0) opts.log.info({ removed: removed.length }, 'retention: old files removed');
        return removed;
      })
      .catch((err: unknown) => {
        opts.log.warn({ err: String(err) }, 'retention sweep failed');
        return [];
      })
      .finally(() => {
        running = null;
      });
    return running;
  };
  const timer = setInterval(() => {
    if (!running) void sweep();
  }, opts.intervalMs);
  timer.unref();
  void sweep();
  return {
    sweep,
    async stop() {
      clearInterval(timer);
      await running;
    },
  };
}

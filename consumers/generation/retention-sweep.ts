/**
 * Retention of files on disk: Parquet artifacts and cache exports older than the retention age
 * (by modification time: an artifact is renamed into place once complete, an export written
 * once) are deleted, at start and then every interval. Only regular files directly inside the
 * given directories are touched, never subdirectories; a file being read while it is removed
 * stays readable to that reader (POSIX unlink). A download of a removed artifact is a 404 saying
 * so. Running it in several processes on one directory is harmless: removal is idempotent.
 */
import { readdir, rm, stat } from 'node:fs/promises';
import { join } from 'node:path';
import type { Logger } from '../../platform/logger.ts';

export type RetentionSweepOptions = {
  /** Directories whose files expire (artifacts, cache exports). */
  dirs: readonly string[];
  /** Files last modified longer ago than this are removed, ms. */
  maxAgeMs: number;
  /** Time between sweeps, ms. */
  intervalMs: number;
  log: Logger;
  now?: () => number;
};

export type RetentionSweep = {
  /** Runs one sweep now (after the one running, if any); resolves with the paths it removed. */
  sweep(): Promise<string[]>;
  stop(): Promise<void>;
};

/** Removes the regular files of `dirs` modified before `cutoff` (Unix ms); returns their paths. */
export async function removeFilesOlderThan(dirs: readonly string[], cutoff: number): Promise<string[]> {
  const removed: string[] = [];
  for (const dir of dirs) {
    const entries = await readdir(dir, { withFileTypes: true }).catch(() => []);
    for (const entry of entries) {
      if (!entry.isFile()) continue;
      const path = join(dir, entry.name);
      const info = await stat(path).catch(() => null);
      if (!info || info.mtimeMs >= cutoff) continue;
      await rm(path, { force: true });
      removed.push(path);
    }
  }
  return removed;
}

export function startRetentionSweep(opts: RetentionSweepOptions): RetentionSweep {
  const now = opts.now ?? Date.now;
  let running: Promise<string[]> | null = null;
  const sweep = async (): Promise<string[]> => {
    while (running) await running;
    running = removeFilesOlderThan(opts.dirs, now() - opts.maxAgeMs)
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

/**
 * `profiled(name, fn)`: with BENCH_PROFILE_DIR set, a profile of this process while `fn` runs,
 * written to `<dir>/<name>.cpuprofile` (open it in Chrome's DevTools); otherwise just `fn`. For a
 * phase of a benchmark whose process does other work before and after (fills, other phases).
 * BENCH_PROFILE_KIND=heap samples allocations instead (`<name>.heapprofile`), the collected ones
 * included: where a phase's garbage comes from, not only what it keeps.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { Session } from 'node:inspector/promises';
import { join } from 'node:path';

export async function profiled<T>(name: string, fn: () => Promise<T>): Promise<T> {
  const dir = process.env.BENCH_PROFILE_DIR;
  if (!dir) return fn();
  const heap = process.env.BENCH_PROFILE_KIND === 'heap';
  const session = new Session();
  session.connect();
  if (heap)
    await session.post('HeapProfiler.startSampling', {
      samplingInterval: 1_024,
      includeObjectsCollectedByMajorGC: true,
      includeObjectsCollectedByMinorGC: true,
    });
  else {
    await session.post('Profiler.enable');
    await session.post('Profiler.start');
  }
  try {
    return await fn();
  } finally {
    const { profile } = heap
      ? await session.post('HeapProfiler.stopSampling')
      : await session.post('Profiler.stop');
    mkdirSync(dir, { recursive: true });
    writeFileSync(join(dir, `${name}.${heap ? 'heapprofile' : 'cpuprofile'}`), JSON.stringify(profile));
    session.disconnect();
  }
}

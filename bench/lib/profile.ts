/**
 * `profiled(name, fn)`: with BENCH_PROFILE_DIR set, a CPU profile of this process while `fn` runs,
 * written as `<dir>/<name>.cpuprofile` (open it in Chrome's DevTools); otherwise just `fn`. For a
 * phase of a benchmark whose process does other work before and after (fills, other phases).
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { Session } from 'node:inspector/promises';
import { join } from 'node:path';

export async function profiled<T>(name: string, fn: () => Promise<T>): Promise<T> {
  const dir = process.env.BENCH_PROFILE_DIR;
  if (!dir) return fn();
  const session = new Session();
  session.connect();
  await session.post('Profiler.enable');
  await session.post('Profiler.start');
  try {
    return await fn();
  } finally {
    const { profile } = await session.post('Profiler.stop');
    mkdirSync(dir, { recursive: true });
    writeFileSync(join(dir, `${name}.cpuprofile`), JSON.stringify(profile));
    session.disconnect();
  }
}

/**
 * Every failed attempt of a test says why, on stderr, also one that its retry then passes
 * (`retry: 1`, vitest.config.ts): vitest's report names a retried test but not its first error,
 * so a flaky test would otherwise leave nothing to diagnose it by.
 */
import { beforeEach } from 'vitest';

beforeEach(({ onTestFailed, task }) => {
  onTestFailed(() => {
    const errors = (task.result?.errors ?? [])
      .map((e) => (e.stack ?? e.message).split('\n').slice(0, 6).join('\n'))
      .join('\n');
    process.stderr.write(`[failed attempt] ${task.file?.name} > ${task.name}\n${errors}\n`);
  });
});

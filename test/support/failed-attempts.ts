/**
 * Every failed test says why, on stderr, as it fails (`[failed attempt]`, its first stack lines):
 * with `retry: 0` (vitest.config.ts) a flaky test fails the run, and `.ci/run` fails on any such
 * line, so it leaves its error behind to diagnose it by even where the report is cut short.
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

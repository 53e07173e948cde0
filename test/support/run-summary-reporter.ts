/**
 * A vitest reporter (next to 'default' in vitest.config.ts) that, at the end of every run:
 * - prints the ten slowest test files (path and seconds), so a file that grows slow is seen (the
 *   summary JSON keeps every file's time, slowest first);
 * - writes a summary JSON (TEST_SUMMARY, default .data/test-summary.json) of the run's failed
 *   attempts (a test that failed, or passed only on a retry, or a file whose hook failed) and of every test that did not run
 *   (skipped, or a todo), each with its file, so .ci/run (test/support/ci-check.ts) can fail a run
 *   where a test CI is meant to run was skipped (chromium or haproxy missing, say).
 * It only reports: the run's exit status stays vitest's.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname, relative, resolve } from 'node:path';
import type { Reporter, TestModule } from 'vitest/node';

/** How many of the slowest files are printed. */
const SLOWEST = 10;

export type NotRun = { file: string; test: string; mode: 'skipped' | 'todo' };
export type FailedAttempt = { file: string; test: string; retries: number; state: string };
export type RunSummary = {
  files: number;
  /** Every file's own time, slowest first. */
  slowest: { file: string; seconds: number }[];
  failedAttempts: FailedAttempt[];
  notRun: NotRun[];
  /** Files in which no test ran at all (a whole file skipped). */
  skippedFiles: string[];
};

/** A file's own time: importing it and its setup files, then its tests and hooks. */
function moduleMs(m: TestModule): number {
  const d = m.diagnostic();
  return d.environmentSetupDuration + d.prepareDuration + d.collectDuration + d.setupDuration + d.duration;
}

export const summaryPath = (): string => resolve(process.env.TEST_SUMMARY ?? '.data/test-summary.json');

export default class RunSummaryReporter implements Reporter {
  onTestRunEnd(testModules: ReadonlyArray<TestModule>): void {
    const root = process.cwd();
    const fileOf = (m: TestModule) => relative(root, m.moduleId);
    const summary: RunSummary = {
      files: testModules.length,
      slowest: testModules
        .map((m) => ({ file: fileOf(m), seconds: Math.round(moduleMs(m) / 100) / 10 }))
        .sort((a, b) => b.seconds - a.seconds),
      failedAttempts: [],
      notRun: [],
      skippedFiles: [],
    };
    for (const m of testModules) {
      const file = fileOf(m);
      let ran = 0;
      for (const t of m.children.allTests()) {
        const state = t.result().state;
        const retries = t.diagnostic()?.retryCount ?? 0;
        if (state === 'failed' || retries > 0)
          summary.failedAttempts.push({ file, test: t.fullName, retries, state });
        if (state === 'skipped') {
          summary.notRun.push({
            file,
            test: t.fullName,
            mode: t.options.mode === 'todo' ? 'todo' : 'skipped',
          });
        } else ran++;
      }
      if (ran === 0) summary.skippedFiles.push(file);
      // A hook (beforeAll, afterAll) or the import failing fails the file outside any test.
      if (m.state() === 'failed' && !summary.failedAttempts.some((f) => f.file === file))
        summary.failedAttempts.push({
          file,
          test: '(the file: a hook or its import failed)',
          retries: 0,
          state: 'failed',
        });
    }
    const out = summaryPath();
    mkdirSync(dirname(out), { recursive: true });
    writeFileSync(out, `${JSON.stringify(summary, null, 2)}\n`);
    const slowest = summary.slowest.slice(0, SLOWEST);
    const lines = slowest.map((s) => `  ${s.seconds.toFixed(1).padStart(7)} s  ${s.file}`);
    process.stdout.write(`\nSlowest ${slowest.length} test files:\n${lines.join('\n')}\n`);
    if (summary.notRun.length > 0)
      process.stdout.write(
        `Not run (${summary.notRun.length}):\n${summary.notRun.map((n) => `  ${n.mode}: ${n.file} > ${n.test}`).join('\n')}\n`,
      );
    process.stdout.write(`Summary: ${relative(root, out)}\n`);
  }
}

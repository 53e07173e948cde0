import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    testTimeout: 60_000,
    hookTimeout: 60_000,
    // Integration files each start their own nats-server; two cores, so keep it to two at once.
    maxWorkers: 2,
    // A test passes only if one of two runs passes: a real defect fails both, while a 2-core
    // machine's scheduling stall in a process-heavy test (they start nats-servers, clusters,
    // browsers) gets one more try. The report names every retried test, so flakiness stays visible.
    retry: 1,
    // Each failed attempt prints its error, the ones a retry then passes too.
    setupFiles: ['test/support/failed-attempts.ts'],
    reporters: ['default'],
  },
});

import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    testTimeout: 60_000,
    hookTimeout: 60_000,
    // Integration files each start their own nats-server; two cores, so keep it to two at once.
    maxWorkers: 2,
    // A test passes on its first try: no retry hides an intermittent defect. Known setup failures of
    // the environment (a port taken between pick and bind, a cluster still electing) are retried
    // inside their helpers, by their exact error.
    retry: 0,
    // Each failed test prints its error as it fails (test/support/failed-attempts.ts).
    setupFiles: ['test/support/failed-attempts.ts'],
    reporters: ['default'],
  },
});

import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    testTimeout: 60_000,
    hookTimeout: 60_000,
    // Integration files each start their own nats-server; two cores, so keep it to two at once.
    maxWorkers: 2,
    reporters: ['default'],
  },
});

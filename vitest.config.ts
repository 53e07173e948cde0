import { defineConfig } from 'vitest/config';

/**
 * `npm test` runs two projects one after the other: 'main' (every file outside test/fault, three
 * at once) and then 'fault' (the cluster fault files, one at a time: each kills and restarts nodes
 * of a 3-node cluster and judges failovers against stated bounds). TEST_FULL=1 (`npm run
 * test:full`) adds to 'fault' the files below, which `npm test` leaves out to stay within ten
 * minutes on two cores.
 */
const FULL_ONLY_FAULTS = [
  // Two minutes of traffic and faults on every transport; also `npm run soak` (bench/soak.ts).
  'test/fault/soak.test.ts',
  // The two slowest fault files after the soak (49 s and 38 s alone on the machine, 90 s and more
  // when it is shared): gRPC and disk-sync clients through NATS node kills at 1,000 events/s, and
  // the rate, filter and disk-sync limits with their KV leader killed.
  'test/fault/cluster-clients.test.ts',
  'test/fault/cluster-limits.test.ts',
  // SSE through a NATS node kill, a partition, the whole cluster restarted and a gateway replica
  // killed: 61–101 s alone, run after every other file, which put npm test past ten minutes
  // (540–716 s on fresh clones). npm test keeps the kill of the node a gateway is connected to
  // (e2e/nats-cluster-external), the worker crash on the cluster and the full disk.
  'test/fault/cluster-faults.test.ts',
  // Two regions' faults (a 60 s link cut at 1,000 events/s, the home MD leader and the JP server
  // killed): 58 s alone with a 10 s cut. npm test keeps test/fault/regions.test.ts (cross-region
  // resume on every transport, region_lag, a cut link, revocation, client failover: 35 s).
  'test/fault/regions-faults.test.ts',
];
const full = process.env.TEST_FULL === '1';

export default defineConfig({
  // tsconfig.json `paths`: @mdp/contracts and @mdp/client by name, resolved to their sources.
  resolve: { tsconfigPaths: true },
  test: {
    // Each project names its files (a root `include` would be added to each project's list).
    testTimeout: 60_000,
    hookTimeout: 60_000,
    // Integration files each start their own nats-server and processes, and most of a file's time
    // is waiting on them (real-time windows, TTLs, kills, restarts), not CPU: three files at once on
    // two cores. The fault files run alone afterwards (project 'fault').
    maxWorkers: 3,
    // A test passes on its first try: no retry hides an intermittent defect. Known setup failures of
    // the environment (a port taken between pick and bind, a cluster still electing) are retried
    // inside their helpers, by their exact error.
    retry: 0,
    // Each failed test prints its error as it fails (test/support/failed-attempts.ts).
    setupFiles: ['test/support/failed-attempts.ts'],
    // The slowest files and a summary for .ci/run (failed attempts, tests not run) after the run.
    reporters: ['default', './test/support/run-summary-reporter.ts'],
    projects: [
      {
        extends: true,
        test: { name: 'main', include: ['test/**/*.test.ts'], exclude: ['test/fault/**'] },
      },
      {
        extends: true,
        test: {
          name: 'fault',
          include: ['test/fault/**/*.test.ts'],
          exclude: full ? [] : FULL_ONLY_FAULTS,
          maxWorkers: 1,
          sequence: { groupOrder: 1 },
        },
      },
    ],
  },
});

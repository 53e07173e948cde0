/**
 * The soak's short version (the "CI runs a 2-minute version"): `bench/soak.ts` for
 * SOAK_CI_MINUTES (2) on the local cluster — 3 NATS nodes, two replicas of every edge, SSE, gRPC
 * and disk-sync clients resuming by their own position, JSON-RPC calls, faults every few seconds.
 * It must pass its own rule: every client holds every sequence once and in order, no server error
 * outside a fault's 15 s. (Memory flatness is judged from 10-minute runs on; docs/testing.md reports a
 * 30-minute run.)
 */
import { describe, expect, it } from 'vitest';
import { run } from '../../bench/soak.ts';

const MINUTES = Number(process.env.SOAK_CI_MINUTES ?? 2);

describe('soak (short)', () => {
  it(`${MINUTES} minutes of traffic on every transport with faults: nothing lost, repeated or failed`, {
    timeout: 20 * 60_000,
    retry: 0,
  }, async () => {
    const result = await run(MINUTES);
    const transports = new Set(result.clients.map((c) => c.transport));
    expect([...transports].sort()).toEqual(['disksync', 'grpc', 'sse']);
    result.clients.forEach((c, i) => {
      const seen = {
        client: `${c.transport} #${i}`,
        missing: c.missing,
        repeated: c.repeated,
        in_order: c.in_order,
      };
      expect(seen).toEqual({ client: seen.client, missing: 0, repeated: 0, in_order: true });
      expect(c.events).toBeGreaterThan(0);
    });
    expect(result.events).toBeGreaterThan(0);
    expect(result.faults.length).toBeGreaterThan(0);
    expect(result.jsonrpc.fivexx_outside_faults).toBe(0);
    expect(result.pass).toBe(true);
  });
});

/**
 * A disk-sync holder that cannot renew its key's lease ends before the lease can run out, whatever
 * DISKSYNC_NATS_GRACE_MS says: past the lease's TTL another replica may admit a second connection
 * of the key (the one-connection rule, disksync/lease.ts). Here the grace is ten minutes and the
 * TTL 3 s: with NATS killed, the holder is closed 4009 within the TTL of the kill (its last renewal
 * came before the kill), not after the grace. Seen in test/fault/cluster-limits: a KV leader's
 * failover longer than the TTL let the other replica admit the key while the holder stayed open.
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import { connectSync, refusal, type SyncClient, startDisksyncEdge, stopAll } from '../support/disksync.ts';
import { testConfig } from '../support/gateway.ts';
import type { ServiceProcess } from '../support/process.ts';
import { type BaseStack, startBase } from '../support/stack.ts';

const LEASE_TTL_MS = 3_000;
const PING_MS = 200;
const config = testConfig();
let base: BaseStack;
let url: string;
const processes: ServiceProcess[] = [];
const clients: SyncClient[] = [];

beforeAll(async () => {
  base = await startBase(config);
  url = await startDisksyncEdge(
    base.server.url,
    config.API_KEY_SECRET,
    'us',
    {
      DISKSYNC_PING_INTERVAL_MS: String(PING_MS),
      DISKSYNC_LEASE_TTL_MS: String(LEASE_TTL_MS),
      DISKSYNC_NATS_GRACE_MS: '600000',
      NATS_LOST_CLOSE_MS: '0',
    },
    processes,
  ).url;
}, 120_000);

afterAll(async () => {
  await stopAll(clients, processes, 'SIGKILL');
  await base?.close();
});

it('ends the holder (4009) before its lease can run out, with a grace longer than the TTL', async () => {
  const { key } = await base.accounts.key('quant');
  const c = connectSync(url, { key });
  clients.push(c);
  c.send({ op: 'subscribe', id: 'x' });
  await c.control('caught_up');
  await base.server.kill('SIGKILL');
  const killedAt = performance.now();
  const r = await refusal(c);
  const closedAfterMs = performance.now() - killedAt;
  console.log(JSON.stringify({ closedAfterMs }));
  expect(r).toMatchObject({ code: 4009, error: { code: 'upstream_unavailable', close_code: 4009 } });
  expect(closedAfterMs).toBeLessThan(LEASE_TTL_MS);
});

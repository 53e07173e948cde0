/**
 * Streams set up on a cluster still forming: a 3-node cluster whose third node has not joined yet
 * refuses to place a 3-replica stream ("no suitable peers for placement"). `ensureStreams` waits
 * for it (platform/nats.ts PLACEMENT_WAIT_MS) instead of failing the process that starts, and the
 * stream is placed on all three once the node joins.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import type { StreamDefinition } from '../../contracts/streams.ts';
import { createLogger } from '../../platform/logger.ts';
import { connectNats, ensureStreams, type Nats } from '../../platform/nats.ts';
import { type NatsCluster, startNatsCluster } from '../../platform/nats-cluster.ts';

const dir = mkdtempSync(join(tmpdir(), 'mdp-placement-'));
let cluster: NatsCluster;
let nats: Nats;

beforeAll(async () => {
  cluster = await startNatsCluster({ baseDir: dir, startNodes: 2, readyTimeoutMs: 120_000 });
  nats = await connectNats(cluster.nodes[0]?.url as string, 'placement-test', createLogger('error'));
}, 180_000);

afterAll(async () => {
  await nats?.nc.close();
  await cluster?.stop();
  rmSync(dir, { recursive: true, force: true });
});

const def = (name: string): StreamDefinition => ({
  name,
  subjects: [`${name.toLowerCase()}.>`],
  retention: 'limits',
  maxAgeSeconds: 0,
  maxMsgs: -1,
  maxBytes: -1,
  duplicateWindowSeconds: 120,
  replicas: 3,
});

it('waits for the node that has not joined, then places the stream on all three', async () => {
  // What the server says while the third node is away: the condition waited for.
  await expect(
    nats.jsm.streams.add({ name: 'PROBE', subjects: ['probe.>'], num_replicas: 3 }),
  ).rejects.toThrow(/no suitable peers/i);
  let settled: string | null = null;
  const ensured = ensureStreams(nats.jsm, [def('PLACED')]).then(
    () => {
      settled = 'created';
    },
    (err) => {
      settled = String(err);
    },
  );
  await new Promise((r) => setTimeout(r, 2_000));
  expect(settled).toBeNull(); // still waiting, not failed
  await cluster.start(2);
  await ensured;
  expect(settled).toBe('created');
  const info = await nats.jsm.streams.info('PLACED');
  expect(info.config.num_replicas).toBe(3);
  expect(info.cluster?.replicas?.length).toBe(2);
}, 60_000);

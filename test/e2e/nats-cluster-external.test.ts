/**
 * An external NATS cluster from configuration: three nats-server nodes that require a user and
 * password (their routes through cut proxies and each with HTTP monitoring:
 * test/support/routed-cluster.ts), given to a real gateway process as a comma-separated NATS_URL
 * (with a dead address in the list) plus NATS_USER / NATS_PASSWORD. It connects and serves
 * /healthz 200. Three times over, the node its NATS connection is on (found by its connection
 * name in each node's /connz) is killed with kill -9 while events are published: the gateway says
 * it reconnected, its connection is on another node, and the stream it serves holds every
 * published sequence once and in order, both for a client reading through the kill and for one
 * reading the whole run from the gateway after the reconnect, compared with what MD stores
 * (exactly one stored message per acknowledged publish). With a wrong password it stops at start
 * with exit code 1 and says so, never hangs.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { freePort } from '../../platform/free-port.ts';
import type { Nats } from '../../platform/nats.ts';
import { startTestAccounts, type TestAccounts } from '../support/accounts.ts';
import { readSequences, resumingReader, seqRange } from '../support/cluster.ts';
import { connectClusterNats } from '../support/cluster-nats.ts';
import { eventually } from '../support/eventually.ts';
import { testConfig } from '../support/gateway.ts';
import { killAll, type ServiceProcess, startService, startUnifiedGateways } from '../support/process.ts';
import { publishAtRate } from '../support/publisher.ts';
import { type RoutedCluster, startRoutedCluster } from '../support/routed-cluster.ts';

const RATE = 200;
/** The gateway's own NATS connection (app/main.ts names it `mdp-<role>`). */
const GATEWAY_CONNECTION = 'mdp-gateway-unified';
const dir = mkdtempSync(join(tmpdir(), 'mdp-ext-cluster-'));
const auth = { user: 'mdp', pass: `pw-${Date.now()}` };
const config = testConfig({ STREAM_REPLICAS: '3' });
let cluster: RoutedCluster;
let nats: Nats | undefined;
let accounts: TestAccounts | undefined;
const services: ServiceProcess[] = [];

beforeAll(async () => {
  cluster = await startRoutedCluster({
    baseDir: dir,
    extraArgs: ['--user', auth.user, '--pass', auth.pass],
    auth,
  });
}, 120_000);

afterAll(async () => {
  await killAll(services);
  accounts?.stop();
  await nats?.nc.close();
  await cluster?.stop();
  rmSync(dir, { recursive: true, force: true });
});

/** The MD stream's last sequence, once JetStream answers (it may be electing a leader). */
const lastSeq = async (n: Nats) =>
  (await eventually(() => n.jsm.streams.info('MD').catch(() => null), 60_000, 'MD stream info')).state
    .last_seq;

/** `read()`, again while it is refused with a 503 (retry shortly), for at most 30 s. */
async function readAfterRetries<T>(read: () => Promise<T>): Promise<T> {
  const deadline = Date.now() + 30_000;
  for (;;) {
    try {
      return await read();
    } catch (err) {
      if (!/HTTP 503/.test(String(err)) || Date.now() > deadline) throw err;
      await new Promise((r) => setTimeout(r, 500));
    }
  }
}

/** Whether every stream of the account (the platform's and the KV buckets') has a leader. */
async function everyStreamLed(n: Nats): Promise<boolean> {
  try {
    for (const info of await n.jsm.streams.list().next()) if (!info.cluster?.leader) return false;
    return true;
  } catch {
    return false;
  }
}

/** Whether every stream has a leader and both other replicas, each current (caught up). */
async function everyReplicaCurrent(n: Nats): Promise<boolean> {
  try {
    for (const info of await n.jsm.streams.list().next()) {
      const replicas = info.cluster?.replicas ?? [];
      if (!info.cluster?.leader || replicas.length !== 2 || replicas.some((r) => !r.current || r.offline))
        return false;
    }
    return true;
  } catch {
    return false;
  }
}

it('a comma-separated NATS_URL with credentials: serves, and survives losing the node it is on', {
  timeout: 300_000,
}, async () => {
  const natsUrl = `nats://127.0.0.1:${await freePort()},${cluster.url}`;
  const [url] = (await startUnifiedGateways(1, natsUrl, config.API_KEY_SECRET, services, {
    NATS_USER: auth.user,
    NATS_PASSWORD: auth.pass,
    STREAM_REPLICAS: '3',
  })) as [string];
  const gateway = services[0] as ServiceProcess;
  const healthz = () => url.replace('/api/v1/unified/stream', '/healthz');
  const healthy = async () => (await fetch(healthz()).catch(() => null))?.status === 200;
  await eventually(healthy, 60_000, 'healthy on the cluster');
  const n = await connectClusterNats(cluster.url, config, 120_000, auth);
  nats = n;
  accounts = await startTestAccounts(n, config);
  const key = (await accounts.key('pro')).key;
  const reconnects = () => gateway.logs.filter((l) => l.nats === 'reconnect').length;
  const rounds: unknown[] = [];
  for (let round = 1; round <= 3; round++) {
    const on =
      (await eventually(
        async () => (await cluster.nodeOf(GATEWAY_CONNECTION)) + 1,
        30_000,
        'the node the gateway is connected to',
      )) - 1;
    const from = await lastSeq(n);
    const publisher = publishAtRate(n.js, ['BTC', 'ETH'], RATE);
    const through = resumingReader([url], key, from);
    try {
      await eventually(() => through.last() > from + RATE / 2, 30_000, `round ${round}: reading`);
      const before = reconnects();
      const t0 = Date.now();
      await cluster.kill(on);
      await eventually(() => reconnects() > before, 60_000, `round ${round}: gateway reconnected`);
      const reconnectMs = Date.now() - t0;
      const now = await cluster.nodeOf(GATEWAY_CONNECTION);
      expect(now, `round ${round}: on a live node other than the killed one`).not.toBe(on);
      expect(now).toBeGreaterThanOrEqual(0);
      await eventually(healthy, 60_000, `round ${round}: healthy without ${cluster.nodes[on]?.name}`);
      // The killed node's streams and buckets (stream slots, keys) elect new leaders: until they
      // have, opening a stream is refused 503 "retry shortly".
      await eventually(() => everyStreamLed(n), 60_000, `round ${round}: every stream led`, 250);
      // Events published after the reconnect too.
      const after = publisher.published();
      await eventually(() => publisher.published() > after + RATE / 2, 30_000, 'publishing after it');
      const published = await publisher.stop();
      const end = await lastSeq(n);
      expect(end - from, `round ${round}: one stored message per acknowledged publish`).toBe(published);
      // The whole run read from the gateway after its reconnect, and by the client that read through it.
      // A 503 (with Retry-After) is the spec's "retry shortly" while the cluster settles after the
      // kill (a bucket's leader still being elected): a client retries it, and so does this read,
      // for at most 30 s; any other refusal fails at once.
      const read = await readAfterRetries(() => readSequences(url, key, from, end - from, 60_000)).catch(
        (err: Error) => {
          const said = gateway.logs.filter((l) => Number(l.level) >= 50).slice(-3);
          throw new Error(`${err.message}; the gateway's last errors: ${JSON.stringify(said)}`);
        },
      );
      expect(read).toEqual(seqRange(from, end));
      await eventually(() => through.last() >= end, 60_000, `round ${round}: reader at the end`);
      expect(through.seqs, `round ${round}: read through the kill`).toEqual(seqRange(from, end));
      rounds.push({ round, killed: cluster.nodes[on]?.name, reconnectMs, published });
    } finally {
      through.stop();
      await publisher.stop();
    }
    await cluster.start(on);
    await cluster.ready(cluster.url);
    // One node lost at a time: the next round kills another only once the restarted node has
    // caught up every stream (a node still catching up, with another killed, leaves no majority
    // that is current, and the streams wait for it before they elect).
    await eventually(
      () => everyReplicaCurrent(n),
      120_000,
      `round ${round}: every replica current again`,
      250,
    );
  }
  console.log(JSON.stringify({ external_cluster: rounds }));
});

it('a wrong password: exit code 1 at start, with the reason', { timeout: 120_000 }, async () => {
  const service = startService(['gateway', 'unified', '--region', 'us'], {
    NATS_URL: cluster.url,
    NATS_USER: auth.user,
    NATS_PASSWORD: 'wrong-password',
    NODE_ENV: 'test',
    API_KEY_SECRET: config.API_KEY_SECRET,
    UNIFIED_PORT_US: '0',
  });
  services.push(service);
  expect(await service.exited).toBe(1);
  expect(service.output()).toMatch(/fatal: .*(auth|Authorization)/i);
});

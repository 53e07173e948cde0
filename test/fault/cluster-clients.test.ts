/**
 * Faults on the cluster seen by the gRPC and disk-sync clients (cluster-faults.test.ts does the
 * same for SSE): a 3-node nats-server cluster with every stream and KV bucket R3, two real
 * `gateway grpc --region us` and two real `gateway disksync --region us` processes on it (the
 * comma-separated NATS_URL of every node), events published at FAULT_EVENTS_PER_S (1,000 by
 * default) throughout. Per transport two resuming clients, one starting on each replica: gRPC
 * StreamEvents resuming with `after_seq`, disk-sync WebSockets (json and msgpack, a Quant key
 * each: one connection per key) resuming with `from_seq`. After each fault, once the publisher
 * has stored every event it was acknowledged for: the MD stream holds exactly that many new
 * events, and every client ends holding every sequence exactly once, in order.
 * 1. kill -9 the NATS node most gateway processes are connected to (found from their sockets),
 *    restarted from its store at once; gRPC health (grpc.health.v1, overall and
 *    price.PriceService) is SERVING and disk-sync /healthz 200 on every replica afterwards (and the
 *    same with the node kept down until every client has read on: see NODE_KILL);
 * 2. kill -9 one gRPC replica and one disk-sync replica: their clients resume on the other replica
 *    from their last position and miss nothing.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import type { Nats } from '../../platform/nats.ts';
import { type NatsCluster, startNatsCluster } from '../../platform/nats-cluster.ts';
import { startTestAccounts, type TestAccounts } from '../support/accounts.ts';
import type { ResumingReader } from '../support/cluster.ts';
import { connectClusterNats } from '../support/cluster-nats.ts';
import { startDisksyncEdge } from '../support/disksync.ts';
import { eventually } from '../support/eventually.ts';
import { testConfig } from '../support/gateway.ts';
import { healthStatus } from '../support/grpc-discovery.ts';
import { killAll, type ServiceProcess, startService } from '../support/process.ts';
import { mostConnected } from '../support/process-peers.ts';
import { publishAtRate } from '../support/publisher.ts';
import { exactlyOnce, resumingDiskReader, resumingGrpcReader } from '../support/resuming-transports.ts';

const RATE = Number(process.env.FAULT_EVENTS_PER_S ?? 1_000);
/**
 * The node kept down (on unless FAULT_NODE_KILL_CLIENTS=0): a gateway whose live tail's ordered
 * consumer (R1, placed on any node) lived on the killed node while the gateway's own NATS
 * connection is on another node used to stop delivering until that node returned (no reconnect,
 * so the ordered reader did not reopen; nats.js kept asking the lost consumer for its info instead
 * of recreating it; nothing was logged): seen in 2 of 7 runs. The ordered reader now stops a
 * consumer after two missed heartbeats and reopens it on a live node (5 of 5 runs pass).
 */
const NODE_KILL = process.env.FAULT_NODE_KILL_CLIENTS !== '0';
const dir = mkdtempSync(join(tmpdir(), 'mdp-fault-clients-'));
const config = testConfig({ STREAM_REPLICAS: '3' });
// A killed disk-sync replica's leases free within 3 s (renewed every second), so its clients'
// keys are usable on the other replica soon after.
const EDGE_ENV = { STREAM_REPLICAS: '3', DISKSYNC_PING_INTERVAL_MS: '1000', DISKSYNC_LEASE_TTL_MS: '3000' };
let cluster: NatsCluster;
let nats: Nats;
let accounts: TestAccounts;
const processes: ServiceProcess[] = [];
const grpcEdges: ServiceProcess[] = [];
const diskEdges: ServiceProcess[] = [];
let grpcTargets: string[] = [];
let diskUrls: string[] = [];
let grpcKey = '';
let diskKeys: string[] = [];

type Readers = { grpc: ResumingReader[]; disk: ResumingReader[] };

function startGrpcEdge(): Promise<string> {
  const p = startService(['gateway', 'grpc', '--region', 'us'], {
    NATS_URL: cluster.url,
    NODE_ENV: 'test',
    API_KEY_SECRET: config.API_KEY_SECRET,
    GRPC_PORT_US: '0',
    ...EDGE_ENV,
  });
  processes.push(p);
  grpcEdges.push(p);
  return p.waitForLog((l) => l.msg === 'grpc listening', 120_000).then((l) => `127.0.0.1:${l.port}`);
}

function startDiskEdge(): Promise<string> {
  const edge = startDisksyncEdge(cluster.url, config.API_KEY_SECRET, 'us', EDGE_ENV, processes);
  diskEdges.push(edge.process);
  return edge.url;
}

/** Where each client is, and each gateway's last warnings: what a failed wait prints. */
const diagnosis = (readers: Readers) =>
  JSON.stringify({
    clients: Object.fromEntries(
      Object.entries(readers).map(([t, list]) => [t, list.map((r) => [r.last(), r.reconnects])]),
    ),
    gateways: processes.map((p) => ({
      pid: p.child.pid,
      exit: p.child.exitCode ?? p.child.signalCode,
      warnings: p.logs
        .filter((l) => Number(l.level) >= 40)
        .slice(-6)
        .map((l) => `${l.time ?? ''} ${l.msg} ${String(l.err ?? '').slice(0, 160)}`),
      ...(p.child.exitCode !== null ? { output: p.output().slice(-800) } : {}),
    })),
  });

/** The MD stream's last sequence, once JetStream answers (it may be electing a leader). */
const lastSeq = async () =>
  (await eventually(() => nats.jsm.streams.info('MD').catch(() => null), 90_000, 'MD stream info', 250)).state
    .last_seq;

const diskHealthz = async (url: string) =>
  (await fetch(`${url.replace(/^ws/, 'http')}/healthz`).catch(() => null))?.status ?? 0;

beforeAll(async () => {
  cluster = await startNatsCluster({ baseDir: dir, readyTimeoutMs: 120_000 });
  nats = await connectClusterNats(cluster.url, config);
  accounts = await startTestAccounts(nats, config);
  grpcKey = (await accounts.key('quant')).key;
  diskKeys = [(await accounts.key('quant')).key, (await accounts.key('quant')).key];
  [grpcTargets, diskUrls] = await Promise.all([
    Promise.all([startGrpcEdge(), startGrpcEdge()]),
    Promise.all([startDiskEdge(), startDiskEdge()]),
  ]);
}, 240_000);

afterAll(async () => {
  await killAll(processes);
  accounts?.stop();
  await nats?.nc.close().catch(() => {});
  await cluster?.stop();
  rmSync(dir, { recursive: true, force: true });
});

/**
 * Publishes and reads around `fault`: clients start at the log's end, the fault runs once they
 * have read some events, then publishing goes on until every client has read past the point
 * where the fault ended; then the exactly-once check.
 */
async function throughFault(name: string, fault: (readers: Readers) => Promise<void>) {
  const from = await lastSeq();
  const publisher = publishAtRate(nats.js, ['BTC', 'ETH'], RATE);
  const readers: Readers = {
    grpc: [0, 1].map((i) => resumingGrpcReader(grpcTargets, grpcKey, from, i)),
    disk: [0, 1].map((i) =>
      resumingDiskReader(diskUrls, diskKeys[i] as string, from, i ? 'msgpack' : 'json', i),
    ),
  };
  const all = [...readers.grpc, ...readers.disk];
  const progress = () => diagnosis(readers);
  try {
    await eventually(
      () => all.every((r) => r.last() > from + RATE / 2),
      90_000,
      `${name}: clients reading past ${from}`,
      100,
    ).catch((err: Error) => {
      throw new Error(`${err.message}; ${progress()}`);
    });
    const faultAt = Date.now();
    await fault(readers);
    const recovered = await lastSeq();
    await eventually(
      () => all.every((r) => r.last() > recovered + RATE / 2),
      120_000,
      `${name}: clients reading past ${recovered} after the fault`,
      100,
    ).catch((err: Error) => {
      throw new Error(`${err.message}; ${progress()}`);
    });
    const recoveryMs = Date.now() - faultAt;
    const published = await publisher.stop();
    const end = await lastSeq();
    expect(end - from, `${name}: stored once each`).toBe(published);
    await eventually(
      () => all.every((r) => r.last() >= end),
      60_000,
      `${name}: clients at the end`,
      100,
    ).catch((err: Error) => {
      throw new Error(`${err.message}: end ${end}, ${progress()}`);
    });
    for (const [transport, list] of Object.entries(readers))
      list.forEach((r: ResumingReader, i: number) => {
        expect(exactlyOnce(r.seqs, from, end), `${name}: ${transport} client ${i}`).toBe('ok');
      });
    console.log(
      JSON.stringify({
        fault: name,
        rate: RATE,
        published,
        recoveryMs,
        reconnects: {
          grpc: readers.grpc.map((r) => r.reconnects),
          disk: readers.disk.map((r) => r.reconnects),
        },
      }),
    );
  } finally {
    await publisher.stop();
    for (const r of all) r.stop();
  }
}

/**
 * kill -9 the NATS node most gateway processes are connected to; with `stayDown`, every client
 * must read on with that node down before it is restarted from its store; then health is checked.
 */
async function nodeKill(name: string, stayDown: boolean) {
  const healthMeanwhile: Record<string, number> = {};
  let victim = { index: 0, processes: 0 };
  await throughFault(name, async (readers) => {
    const all = [...readers.grpc, ...readers.disk];
    victim = mostConnected(
      processes.map((p) => p.child.pid as number),
      cluster.nodes.map((n) => n.clientPort),
    );
    await cluster.kill(victim.index);
    // What health says meanwhile, for the log (a gateway reconnected within a second may never say it).
    const watching = setInterval(() => {
      for (const t of grpcTargets)
        void healthStatus(t).then((s) => {
          const said = s.startsWith('error') ? 'no answer in 2 s' : s;
          healthMeanwhile[said] = (healthMeanwhile[said] ?? 0) + 1;
        });
    }, 500);
    try {
      if (stayDown) {
        const down = await lastSeq();
        await eventually(
          () => all.every((r) => r.last() > down + RATE / 2),
          120_000,
          `clients reading past ${down} with one node down`,
          100,
        ).catch((err: Error) => {
          throw new Error(`${err.message}; ${diagnosis(readers)}`);
        });
      }
      await cluster.start(victim.index);
      await cluster.ready(cluster.url, 120_000);
    } finally {
      clearInterval(watching);
    }
  });
  for (const t of grpcTargets) {
    await eventually(async () => (await healthStatus(t)) === 'SERVING', 60_000, `${t} SERVING`, 250);
    expect(await healthStatus(t, 'price.PriceService')).toBe('SERVING');
  }
  for (const u of diskUrls)
    await eventually(async () => (await diskHealthz(u)) === 200, 60_000, `${u} /healthz 200`, 250);
  console.log(
    JSON.stringify({
      killed: cluster.nodes[victim.index]?.name,
      gatewayProcessesOnIt: victim.processes,
      healthMeanwhile,
    }),
  );
}

it(
  'kill -9 the gateways’ NATS node at 1,000 events/s, restarted: gRPC and disk-sync clients get every sequence once',
  {
    timeout: 300_000,
  },
  () => nodeKill('nats node kill -9', false),
);

it.skipIf(!NODE_KILL)(
  'the same with the node down until every client has read on without it',
  {
    timeout: 300_000,
  },
  () => nodeKill('nats node kill -9, kept down', true),
);

it('kill -9 a gRPC and a disk-sync replica: their clients resume on the other replicas and miss nothing', {
  timeout: 240_000,
}, async () => {
  await throughFault('gateway replicas kill -9', async (readers) => {
    const killed = [grpcEdges[0], diskEdges[0]] as ServiceProcess[];
    for (const p of killed) p.child.kill('SIGKILL');
    await Promise.all(killed.map((p) => p.exited));
    // Client 0 of each transport started on the replica killed: it must have moved.
    await eventually(
      () => (readers.grpc[0]?.reconnects ?? 0) > 0 && (readers.disk[0]?.reconnects ?? 0) > 0,
      60_000,
      'clients of the killed replicas reconnected',
      100,
    );
  });
});

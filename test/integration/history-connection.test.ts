/**
 * The history connection (platform/nats-wire/history-connection.ts) in a 3-node nats-server
 * cluster: a node leaving and rejoining makes the server send the connection a new INFO (its
 * `connect_urls` change), which must change nothing: the same connection keeps serving history
 * reads, every sequence once, in order. A server that goes silent without closing the socket
 * (SIGSTOP) is found by the connection's PINGs: it closes itself, and says so.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { createLogger } from '../../platform/logger.ts';
import { connectNats, type Nats } from '../../platform/nats.ts';
import { type NatsCluster, startNatsCluster } from '../../platform/nats-cluster.ts';
import { HistoryConnection } from '../../platform/nats-wire/history-connection.ts';
import { eventually } from '../support/eventually.ts';
import { readHistory } from '../support/history-read.ts';
import { replicasCurrent } from '../support/stream-leader.ts';

const dir = mkdtempSync(join(tmpdir(), 'mdp-history-conn-'));
const STREAM = 'HISTORY_CONN';
const N = 400;
let cluster: NatsCluster;
let nats: Nats;

beforeAll(async () => {
  cluster = await startNatsCluster({ baseDir: dir, readyTimeoutMs: 120_000 });
  nats = await connectNats(cluster.nodes[0]?.url as string, 'history-conn-test', createLogger('error'));
  await nats.jsm.streams.add({ name: STREAM, subjects: ['hc.>'], num_replicas: 3 });
  for (let i = 0; i < N; i++) nats.nc.publish('hc.a', JSON.stringify({ i }));
  await nats.nc.flush();
  await eventually(async () => (await nats.jsm.streams.info(STREAM)).state.messages === N, 20_000);
}, 180_000);

afterAll(async () => {
  await nats?.nc.close();
  await cluster?.stop();
  rmSync(dir, { recursive: true, force: true });
});

const all = Array.from({ length: N }, (_, k) => k + 1);

it('keeps serving history reads on the same connection after the cluster changes under it', async () => {
  const before = await readHistory(nats, STREAM, 'hc.>', N);
  expect(before.over).not.toBeNull();
  expect(before.subscriptions).toBe(1);
  expect(before.seqs).toEqual(all);
  await cluster.kill(2);
  await cluster.start(2);
  await cluster.ready(cluster.nodes[0]?.url as string, 60_000);
  // The stream answers again once it has a leader and the rejoined node is current (an election
  // may follow the rejoin, and the read's stream info is asked once).
  await replicasCurrent(nats, STREAM, 2, 60_000);
  // The rejoined node's route is announced to clients in an INFO; give it time to arrive.
  await new Promise((r) => setTimeout(r, 2_000));
  expect(before.over?.isClosed).toBe(false);
  const after = await readHistory(nats, STREAM, 'hc.>', N);
  expect(after.over).toBe(before.over);
  expect(after.subscriptions).toBe(1);
  expect(after.seqs).toEqual(all);
}, 180_000);

it('closes itself when the server goes silent with the socket open, after two unanswered PINGs', async () => {
  const node = cluster.nodes[1];
  const reports: string[] = [];
  const conn = await HistoryConnection.open(
    [node?.url as string],
    'silent-test',
    {},
    {
      report: (what) => reports.push(what),
      keepaliveMs: 300,
    },
  );
  await new Promise((r) => setTimeout(r, 1_000));
  expect(conn.isClosed).toBe(false); // answered PINGs keep it open
  let lost = false;
  conn.subscribe(
    '_INBOX.silent',
    () => {},
    () => {
      lost = true;
    },
  );
  node?.server?.process.kill('SIGSTOP');
  try {
    await eventually(() => conn.isClosed, 5_000, 'closed after unanswered PINGs');
    expect(lost).toBe(true);
    expect(reports.some((r) => r.includes('no PONG'))).toBe(true);
  } finally {
    node?.server?.process.kill('SIGCONT');
  }
});

/**
 * Where a JetStream stream lives on a test cluster (a KV bucket `b` is the stream `KV_b`): which
 * node leads it (stream info `cluster.leader`), so a fault test can kill exactly that node, and
 * when every replica is current again, so a restarted node is back in the stream's quorum before
 * the next fault. Both poll the real state with a bound (an election may be under way).
 */
import type { Nats } from '../../platform/nats.ts';
import type { NatsCluster } from '../../platform/nats-cluster.ts';
import { eventually } from './eventually.ts';

const clusterInfo = async (nats: Nats, stream: string) =>
  (await nats.jsm.streams.info(stream).catch(() => null))?.cluster;

/** The index in `cluster.nodes` of the node leading `stream`. */
export async function leaderIndex(nats: Nats, cluster: NatsCluster, stream: string, ms = 20_000) {
  return eventually(
    async () => {
      const leader = (await clusterInfo(nats, stream))?.leader;
      const i = cluster.nodes.findIndex((n) => n.name === leader);
      return i >= 0 ? i + 1 : 0;
    },
    ms,
    `${stream}: a leader`,
    100,
  ).then((i) => i - 1);
}

const allCurrent = async (nats: Nats, stream: string, replicas: number) => {
  const info = await clusterInfo(nats, stream);
  const peers = info?.replicas ?? [];
  return Boolean(info?.leader) && peers.length === replicas && peers.every((p) => p.current && !p.offline);
};

/** Resolves once `stream` has a leader and every one of its `replicas` others is current. */
export async function replicasCurrent(nats: Nats, stream: string, replicas = 2, ms = 30_000) {
  await eventually(() => allCurrent(nats, stream, replicas), ms, `${stream}: every replica current`, 100);
}

/**
 * Resolves once every stream of the account (KV buckets included) has a leader and `replicas`
 * current others: a restarted node is back in every quorum, so killing another one next loses none.
 */
export async function everyStreamCurrent(nats: Nats, replicas = 2, ms = 30_000) {
  let behind = '';
  await eventually(
    async () => {
      const names: string[] = [];
      try {
        for await (const name of nats.jsm.streams.names()) names.push(name);
      } catch {
        return false;
      }
      for (const name of names) {
        if (await allCurrent(nats, name, replicas)) continue;
        behind = name;
        return false;
      }
      return true;
    },
    ms,
    'every stream current',
    100,
  ).catch((err: Error) => {
    throw new Error(`${err.message} (${behind} behind)`);
  });
}

/**
 * The soak's faults, injected one at a time in this order (then again from the top): a NATS node
 * kill -9 (restarted from its store); per transport (unified SSE, gRPC, disk-sync) a kill -9 of one
 * replica (a new one started on the same port, as a supervisor would) and then a slow client; a
 * key revoked under an open SSE stream. Each returns what happened, for the report.
 */
import type { AppProcess, LocalCluster } from '../app/cluster-topology.ts';
import type { TestAccounts } from '../test/support/accounts.ts';
import { openSse } from '../test/support/sse.ts';
import { sleep } from './lib/ipc.ts';
import { slowDisk, slowGrpc, slowSse } from './soak-slow.ts';

export type ReplicatedEdge = 'unified' | 'grpc' | 'disksync';

/** Replicas that listen: a killed process has a signal and no exit code, both mean gone. */
export const liveReplicas = (cluster: LocalCluster, edge: ReplicatedEdge): AppProcess[] =>
  cluster.processes.filter(
    (p) =>
      p.name.startsWith(`${edge}-`) &&
      p.url !== null && // still starting
      p.child.exitCode === null &&
      p.child.signalCode === null,
  );

export type Fault = { name: string; inject(): Promise<unknown> };

export function soakFaults(
  cluster: LocalCluster,
  accounts: TestAccounts,
  /** How long a slow client stops reading, ms. */
  slowMs: () => number,
): Fault[] {
  let nodeKills = 0;
  let replacements = 0;
  const urlOf = (edge: ReplicatedEdge) => liveReplicas(cluster, edge)[0]?.url as string;
  const killReplica = async (edge: ReplicatedEdge) => {
    const victim = liveReplicas(cluster, edge)[0] as AppProcess;
    const port = new URL(victim.url as string).port;
    victim.child.kill('SIGKILL');
    await victim.exited;
    const name = `${victim.name.replace(/-r\d+$/, '')}-r${++replacements}`;
    const p = await cluster.spawn(name, victim.args, { [`${edge.toUpperCase()}_PORT_US`]: port });
    return { killed: victim.name, started: p.name, port: Number(port) };
  };
  const quantKey = async () => (await accounts.key('quant')).key;
  return [
    {
      name: 'nats node kill -9',
      async inject() {
        const i = nodeKills++ % cluster.nats.nodes.length;
        await cluster.nats.kill(i);
        await cluster.nats.start(i);
        return { node: cluster.nats.nodes[i]?.name };
      },
    },
    { name: 'unified replica kill -9', inject: () => killReplica('unified') },
    { name: 'slow SSE client', inject: async () => slowSse(urlOf('unified'), await quantKey(), slowMs()) },
    { name: 'grpc replica kill -9', inject: () => killReplica('grpc') },
    {
      name: 'slow gRPC client',
      inject: async () => slowGrpc(new URL(urlOf('grpc')).host, await quantKey(), slowMs()),
    },
    { name: 'disksync replica kill -9', inject: () => killReplica('disksync') },
    {
      name: 'slow disk-sync client',
      inject: async () => slowDisk(urlOf('disksync'), await quantKey(), slowMs()),
    },
    {
      name: 'key revoked under an open stream',
      async inject() {
        const k = await accounts.key('pro');
        let ended = false;
        const sse = await openSse(urlOf('unified'), () => {}, { 'x-api-key': k.key });
        const done = sse.done.then(() => (ended = true));
        const t0 = Date.now();
        await accounts.service.revokeKey(k.accountId, k.keyId);
        await Promise.race([done, sleep(15_000)]);
        sse.abort();
        return { status: sse.status, ended, ms: Date.now() - t0 };
      },
    },
  ];
}

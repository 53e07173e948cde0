/**
 * The soak's faults, injected one at a time in this order (then again from the top): a NATS node
 * kill -9 (restarted from its store, the cluster answering JetStream again); per transport (unified
 * SSE, gRPC, disk-sync) a kill -9 of one replica (a new one started on the same port, as a
 * supervisor would) and then a slow client; a key revoked under an open SSE stream. Each returns
 * what happened, and `judge` says what is wrong with it (nothing: the fault took place and the
 * platform answered it as it must): a slow client ended by the server and resumed exactly from
 * its last sequence; the revoked key's open stream ended by an `auth_expired` error event.
 * `destructive` faults (kills) are followed by a grace in which server errors are expected; the
 * others are not: an error while a client is slow or a key is revoked counts.
 */
import type { AppProcess, LocalCluster } from '../app/cluster-topology.ts';
import type { TestAccounts } from '../test/support/accounts.ts';
import { openSse } from '../test/support/sse.ts';
import { sleep } from './lib/ipc.ts';
import { type SlowResult, slowDisk, slowGrpc, slowSse } from './soak-slow.ts';

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

export type Fault = {
  name: string;
  destructive: boolean;
  inject(): Promise<unknown>;
  /** What is wrong with the outcome `inject` returned (empty: as it must be). */
  judge(detail: unknown): string[];
};

const slowJudge = (detail: unknown): string[] => {
  const d = detail as SlowResult;
  const wrong: string[] = [];
  if (!d.ended_by_server) wrong.push('the slow client was not ended by the server');
  if (!d.in_order) wrong.push('the slow client got events out of order');
  if (!d.resumed?.exact)
    wrong.push(
      `not resumed exactly: ${JSON.stringify(d.resumed ?? 'no resumption (no event before the end)')}`,
    );
  return wrong;
};
const none = () => [];

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
      destructive: true,
      async inject() {
        const i = nodeKills++ % cluster.nats.nodes.length;
        await cluster.nats.kill(i);
        await cluster.nats.start(i);
        await cluster.nats.ready();
        return { node: cluster.nats.nodes[i]?.name };
      },
      judge: none,
    },
    { name: 'unified replica kill -9', destructive: true, inject: () => killReplica('unified'), judge: none },
    {
      name: 'slow SSE client',
      destructive: false,
      inject: async () => slowSse(urlOf('unified'), await quantKey(), slowMs()),
      judge: slowJudge,
    },
    { name: 'grpc replica kill -9', destructive: true, inject: () => killReplica('grpc'), judge: none },
    {
      name: 'slow gRPC client',
      destructive: false,
      inject: async () => slowGrpc(new URL(urlOf('grpc')).host, await quantKey(), slowMs()),
      judge: slowJudge,
    },
    {
      name: 'disksync replica kill -9',
      destructive: true,
      inject: () => killReplica('disksync'),
      judge: none,
    },
    {
      name: 'slow disk-sync client',
      destructive: false,
      inject: async () => slowDisk(urlOf('disksync'), await quantKey(), slowMs()),
      judge: slowJudge,
    },
    {
      name: 'key revoked under an open stream',
      destructive: false,
      async inject() {
        const k = await accounts.key('pro');
        let ended = false;
        let code: string | null = null;
        const sse = await openSse(
          urlOf('unified'),
          (m) => {
            if (m.event !== 'error') return;
            try {
              code = (JSON.parse(m.data) as { code?: string }).code ?? null;
            } catch {
              code = `unparsed: ${m.data}`;
            }
          },
          { 'x-api-key': k.key },
        );
        const done = sse.done.then(() => (ended = true));
        const t0 = Date.now();
        await accounts.service.revokeKey(k.accountId, k.keyId);
        await Promise.race([done, sleep(15_000)]);
        sse.abort();
        return { status: sse.status, ended, code, ms: Date.now() - t0 };
      },
      judge(detail) {
        const d = detail as { status: number; ended: boolean; code: string | null };
        const got = { status: d.status, ended: d.ended, code: d.code };
        const want = { status: 200, ended: true, code: 'auth_expired' };
        return JSON.stringify(got) === JSON.stringify(want)
          ? []
          : [`revoked key's stream: ${JSON.stringify(got)}, want ${JSON.stringify(want)}`];
      },
    },
  ];
}

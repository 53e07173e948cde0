/**
 * A 3-node nats-server cluster like platform/nats-cluster.ts (loopback, JetStream on each node with
 * its own store, ports and store kept across a kill and a restart, no client URLs advertised), with
 * two things a test needs to see and cut the cluster's links while every node keeps running:
 * - every route goes through a cut proxy (test/support/cut-proxy.ts), one per ordered pair of nodes
 *   (node a dials node b on the proxy a→b), so `partition(i)` holds the four proxies to and from
 *   node i: its routes drop and stay down, node i and its clients go on running; `heal(i)` lets
 *   them through again and the nodes' own route reconnection joins it back. Each node advertises a
 *   route address nothing listens on, so no node learns a direct (implicit) route that would pass
 *   the proxies by;
 * - every node serves nats-server's HTTP monitoring on a port of its own: `connz(i)` is its
 *   client connections, `nodeOf(name)` the node a named client connection is on.
 */
import { mkdirSync } from 'node:fs';
import { freePort } from '../../platform/free-port.ts';
import {
  type ClusterNode,
  clusterNodeArgs,
  clusterOf,
  firstStart,
  pickNodes,
} from '../../platform/nats-cluster.ts';
import { startNatsServer } from '../../platform/nats-server.ts';
import { type CutProxy, startCutProxy } from './cut-proxy.ts';

export type RoutedNode = ClusterNode & { monitorPort: number };

/** A client connection as nats-server's /connz lists it (the fields tests read). */
export type Connz = { cid: number; name?: string; ip: string; port: number };

export type RoutedCluster = {
  nodes: RoutedNode[];
  /** Every node's client URL, comma-separated: the platform's NATS_URL. */
  url: string;
  /** Signals node `i` (SIGKILL: a crash) and resolves once it has exited. */
  kill(i: number, signal?: NodeJS.Signals): Promise<void>;
  /** (Re)starts node `i` on its ports and store, its routes through the proxies. */
  start(i: number): Promise<void>;
  /** Resolves once JetStream answers API requests through `url` (a meta leader exists). */
  ready(url?: string, timeoutMs?: number): Promise<void>;
  /** Cuts node `i`'s routes and keeps them down (it keeps running); the route connections cut. */
  partition(i: number): number;
  /** Lets node `i`'s routes through again. */
  heal(i: number): void;
  /** Node `i`'s client connections (its /connz). */
  connz(i: number): Promise<Connz[]>;
  /** Node `i`'s routes to other nodes, by the remote server's id (its /routez). */
  routes(i: number): Promise<string[]>;
  /** Index of the node holding a client connection named `name`, or -1. */
  nodeOf(name: string): Promise<number>;
  stop(): Promise<void>;
};

export type RoutedClusterOptions = {
  baseDir: string;
  size?: number;
  name?: string;
  /** More flags for every node (e.g. `--user`/`--pass`). */
  extraArgs?: string[];
  /** Credentials of the readiness check when `extraArgs` requires them. */
  auth?: { user: string; pass: string };
  readyTimeoutMs?: number;
};

export async function startRoutedCluster(opts: RoutedClusterOptions): Promise<RoutedCluster> {
  const size = opts.size ?? 3;
  const clusterName = opts.name ?? 'mdp';
  const nodes: RoutedNode[] = [];
  /** proxies[a][b]: how node a reaches node b's route port. */
  let proxies: (CutProxy | null)[][] = [];
  let deadAdvertise = 0;
  const closeProxies = () => Promise.all(proxies.flat().map((p) => p?.close()));

  const pick = async () => {
    nodes.length = 0;
    for (const node of await pickNodes(size, clusterName, opts.baseDir))
      nodes.push({ ...node, monitorPort: await freePort() });
    deadAdvertise = await freePort();
    proxies = await Promise.all(
      nodes.map((_, a) =>
        Promise.all(
          nodes.map((to, b) => (a === b ? null : startCutProxy(`tcp://127.0.0.1:${to.routePort}`))),
        ),
      ),
    );
  };
  const proxyPort = (p: CutProxy | null) => new URL((p as CutProxy).url).port;
  const linksOf = (i: number) =>
    proxies.flatMap((row, a) => row.filter((p, b) => p && (a === i || b === i)) as CutProxy[]);

  const start = async (i: number) => {
    const node = nodes[i];
    if (!node) throw new Error(`no node ${i}`);
    mkdirSync(node.storeDir, { recursive: true });
    const routes = nodes
      .map((_, b) => (b === i ? null : `nats-route://127.0.0.1:${proxyPort(proxies[i]?.[b] ?? null)}`))
      .filter((r) => r !== null);
    node.server = await startNatsServer({
      storeDir: node.storeDir,
      port: node.clientPort,
      extraArgs: [
        ...clusterNodeArgs(node.name, clusterName, node.routePort),
        '--cluster_advertise',
        `127.0.0.1:${deadAdvertise}`,
        '--no_advertise',
        '--routes',
        routes.join(','),
        '-m',
        String(node.monitorPort),
        ...(opts.extraArgs ?? []),
      ],
    });
  };
  const monitor = async <T>(i: number, path: string): Promise<T> => {
    const res = await fetch(`http://127.0.0.1:${nodes[i]?.monitorPort}${path}`);
    if (!res.ok) throw new Error(`${nodes[i]?.name} ${path}: HTTP ${res.status}`);
    return (await res.json()) as T;
  };

  const base = clusterOf(nodes, start, opts);
  const cluster: RoutedCluster = {
    ...base,
    partition: (i) => linksOf(i).reduce((n, p) => n + p.hold(), 0),
    heal(i) {
      for (const p of linksOf(i)) p.restore();
    },
    connz: async (i) => (await monitor<{ connections: Connz[] }>(i, '/connz')).connections ?? [],
    routes: async (i) =>
      ((await monitor<{ routes: { remote_id: string }[] }>(i, '/routez')).routes ?? []).map(
        (r) => r.remote_id,
      ),
    async nodeOf(name) {
      for (const [i, n] of nodes.entries()) {
        if (!n.server) continue;
        if ((await cluster.connz(i)).some((c) => c.name === name)) return i;
      }
      return -1;
    },
    async stop() {
      await base.stop();
      await closeProxies();
    },
  };
  // As platform/nats-cluster.ts: a port taken between picking and binding starts over on fresh ones.
  return firstStart(cluster, nodes, {
    pick,
    startAll: () => Promise.all(nodes.map((_, i) => start(i))),
    cleanup: closeProxies,
  });
}

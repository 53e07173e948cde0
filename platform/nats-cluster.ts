/**
 * A NATS cluster of real nats-server processes on this machine (what `npm run cluster` and the
 * fault tests run): every node on loopback with a free client port and a free route port, JetStream
 * on each with its own store, routes to every other node, and no client URLs advertised (clients
 * are given every node's URL, so a client pinned to one node stays there: partitions stay
 * partitions). A node keeps its ports and store across a kill and a restart, so the platform's
 * comma-separated NATS_URL stays valid. Clustering is nats-server's own; nothing here replicates.
 */
import { mkdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { jetstreamManager } from '@nats-io/jetstream';
import { connect } from '@nats-io/transport-node';
import { freePort } from './free-port.ts';
import {
  type NatsServerHandle,
  PORT_ATTEMPTS,
  PortTakenError,
  startError,
  startNatsServer,
} from './nats-server.ts';

export type NatsClusterOptions = {
  /** Each node stores under `<baseDir>/<node name>`. */
  baseDir: string;
  /** Nodes (3: an R3 stream survives the loss of any one; 1: one server, not clustered). */
  size?: number;
  /** Cluster name (also the prefix of node names: `<name>-1`…). */
  name?: string;
  binary?: string;
  /** Run each node in a process group of its own (see `NatsServerOptions.ownProcessGroup`). */
  ownProcessGroup?: boolean;
  /** Longest wait for JetStream to elect its meta leader, ms. */
  readyTimeoutMs?: number;
  /** More flags for every node (e.g. `--user`/`--pass` to require client credentials). */
  extraArgs?: string[];
  /** Credentials of the readiness check when `extraArgs` requires them. */
  auth?: { user: string; pass: string };
  /** Flags of one node beside the others' (a region's per-node config file: domain, leaf-node port). */
  nodeArgs?: (node: ClusterNode) => string[];
  /** Nodes started at once (default: all); the others join with `start(i)`, as a late node does. */
  startNodes?: number;
};

export type ClusterNode = {
  name: string;
  storeDir: string;
  clientPort: number;
  routePort: number;
  url: string;
  /** The running server, or null while the node is down. */
  server: NatsServerHandle | null;
};

export type NatsCluster = {
  nodes: ClusterNode[];
  /** Every node's client URL, comma-separated: the platform's NATS_URL. */
  url: string;
  /** Signals node `i` (SIGKILL: a crash) and resolves once it has exited. */
  kill(i: number, signal?: NodeJS.Signals): Promise<void>;
  /**
   * (Re)starts node `i` on its ports and store. `isolated`: on another route port, with a route to
   * a port nothing listens on, so no node reaches it nor it any node (a partition from the rest).
   */
  start(i: number, opts?: { isolated?: boolean }): Promise<void>;
  /** Resolves once JetStream answers API requests through `url` (a meta leader exists). */
  ready(url?: string, timeoutMs?: number): Promise<void>;
  /** Stops every node (SIGTERM, SIGKILL after 5 s). */
  stop(): Promise<void>;
};

export async function startNatsCluster(opts: NatsClusterOptions): Promise<NatsCluster> {
  const size = opts.size ?? 3;
  const clusterName = opts.name ?? 'mdp';
  const nodes: ClusterNode[] = [];
  const pickPorts = async () => {
    nodes.length = 0;
    nodes.push(...(await pickNodes(size, clusterName, opts.baseDir)));
  };

  const start = async (i: number, startOpts: { isolated?: boolean } = {}) => {
    const node = nodes[i];
    if (!node) throw new Error(`no node ${i}`);
    mkdirSync(node.storeDir, { recursive: true });
    const routePort = startOpts.isolated ? await freePort() : node.routePort;
    // Isolated: routes to a port nothing listens on (JetStream clustering refuses to start with none).
    const routes = startOpts.isolated
      ? [`nats-route://127.0.0.1:${await freePort()}`]
      : nodes.filter((n) => n !== node).map((n) => `nats-route://127.0.0.1:${n.routePort}`);
    node.server = await startNatsServer({
      storeDir: node.storeDir,
      port: node.clientPort,
      ...(opts.binary ? { binary: opts.binary } : {}),
      ownProcessGroup: opts.ownProcessGroup ?? false,
      extraArgs: [
        // One node (a region's lean test layout): a server of its own, no routes.
        ...(size === 1
          ? ['--server_name', node.name]
          : [
              ...clusterNodeArgs(node.name, clusterName, routePort),
              '--no_advertise',
              '--routes',
              routes.join(','),
            ]),
        ...(opts.extraArgs ?? []),
        ...(opts.nodeArgs?.(node) ?? []),
      ],
    });
  };

  const cluster: NatsCluster = clusterOf(nodes, start, opts);
  return firstStart(cluster, nodes, {
    pick: pickPorts,
    startAll: () => Promise.all(nodes.slice(0, opts.startNodes ?? size).map((_, i) => start(i))),
  });
}

/** A cluster node's identity and route listener (nats-server flags). */
export const clusterNodeArgs = (name: string, clusterName: string, routePort: number): string[] => [
  '--server_name',
  name,
  '--cluster_name',
  clusterName,
  '--cluster',
  `nats://127.0.0.1:${routePort}`,
];

/** `size` nodes on fresh loopback ports, named `<clusterName>-<i>`, each with a store under `baseDir`. */
export async function pickNodes(size: number, clusterName: string, baseDir: string): Promise<ClusterNode[]> {
  const nodes: ClusterNode[] = [];
  for (let i = 1; i <= size; i++) {
    const clientPort = await freePort();
    const name = `${clusterName}-${i}`;
    nodes.push({
      name,
      storeDir: join(baseDir, name),
      clientPort,
      routePort: await freePort(),
      url: `nats://127.0.0.1:${clientPort}`,
      server: null,
    });
  }
  return nodes;
}

/** The parts every local cluster shares: its nodes, their URL, kill, (re)start, readiness, stop. */
export function clusterOf<N extends ClusterNode, S extends (i: number) => Promise<void>>(
  nodes: N[],
  start: S,
  opts: { readyTimeoutMs?: number; auth?: { user: string; pass: string } },
) {
  const cluster = {
    nodes,
    url: '',
    start,
    async kill(i: number, signal: NodeJS.Signals = 'SIGKILL') {
      const node = nodes[i];
      await node?.server?.kill(signal);
      if (node) node.server = null;
    },
    /** Readiness through `url`, by default every node's (what `url` is once the ports are picked). */
    ready: (url = nodes.map((n) => n.url).join(','), timeoutMs = opts.readyTimeoutMs ?? 60_000) =>
      jetStreamReady(url, timeoutMs, opts.auth),
    async stop() {
      await Promise.all(nodes.map((n) => n.server?.stop()));
      for (const n of nodes) n.server = null;
    },
  };
  return cluster;
}

/**
 * The first start of a cluster: pick ports, start the nodes, wait until JetStream answers. A node
 * whose port was taken between picking and binding (PortTakenError) restarts the whole first start
 * on fresh ports and stores (up to PORT_ATTEMPTS); a node that died after starting is said with its
 * log. `cleanup` runs after a failed attempt (test clusters close their route proxies there).
 */
export async function firstStart<C extends { url: string; ready(): Promise<void> }>(
  cluster: C,
  nodes: ClusterNode[],
  steps: { pick(): Promise<void>; startAll(): Promise<unknown>; cleanup?(): Promise<unknown> },
): Promise<C> {
  for (let attempt = 1; ; attempt++) {
    await steps.pick();
    cluster.url = nodes.map((n) => n.url).join(',');
    try {
      await steps.startAll();
      await cluster.ready();
      for (const n of nodes) {
        if (n.server && n.server.process.exitCode !== null)
          throw startError(`${n.name} exited`, n.server.log());
      }
      return cluster;
    } catch (err) {
      await Promise.all(nodes.map((n) => n.server?.kill('SIGKILL')));
      await steps.cleanup?.();
      if (!(err instanceof PortTakenError) || attempt >= PORT_ATTEMPTS) throw err;
      for (const n of nodes) rmSync(n.storeDir, { recursive: true, force: true });
    }
  }
}

/**
 * Polls JetStream's account info through `url` until it answers (meta leader elected); of another
 * JetStream domain when `domain` is given (a region's home, reached over its leaf-node link).
 */
export async function jetStreamReady(
  url: string,
  timeoutMs: number,
  auth: { user: string; pass: string } = { user: '', pass: '' },
  domain?: string,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  const nc = await connect({
    servers: url.split(','),
    maxReconnectAttempts: -1,
    reconnectTimeWait: 100,
    ...(auth.user ? auth : {}),
  });
  try {
    for (;;) {
      try {
        await (
          await jetstreamManager(nc, { timeout: 2_000, ...(domain ? { domain } : {}) })
        ).getAccountInfo();
        return;
      } catch (err) {
        if (Date.now() > deadline) throw new Error(`JetStream not ready at ${url}: ${String(err)}`);
        await new Promise((r) => setTimeout(r, 250));
      }
    }
  } finally {
    await nc.close();
  }
}

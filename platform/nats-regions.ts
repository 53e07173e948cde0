/**
 * Two regions on one machine, as NATS joins regions (ARCHITECTURE.md, regions): the home region
 * (US) is a nats-server cluster with JetStream domain `us`, holding the writable streams; the
 * other region (JP) is one nats-server with JetStream domain `jp`, joined to the home cluster as a
 * leaf node through one delaying proxy per home node (platform/delay-proxy.ts: the Pacific on
 * loopback, 80 ms each way by default, and a link that can be cut). JP's streams are mirrors made
 * through the home domain's API (`$JS.us.API`, app/region-copies.ts); its clients' requests to the
 * home domain, and core NATS subjects, cross the same link. Each server keeps its ports and store
 * across a kill and a restart.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { type DelayProxy, startDelayProxy } from './delay-proxy.ts';
import { freePort } from './free-port.ts';
import { jetStreamReady, type NatsCluster, startNatsCluster } from './nats-cluster.ts';
import { type NatsServerHandle, startNatsServer } from './nats-server.ts';

export const HOME_DOMAIN = 'us';
export const REGION_DOMAIN = 'jp';

export type RegionLink = {
  /** Delay each way, ms (changeable while running). */
  delayMs: number;
  isCut(): boolean;
  /** Drops the link (every leaf-node connection) and refuses it until `restore()`. */
  cut(): void;
  restore(): void;
};

export type RegionServer = {
  name: string;
  url: string;
  storeDir: string;
  server: NatsServerHandle | null;
  kill(signal?: NodeJS.Signals): Promise<void>;
  /** Starts again on its port and store. */
  start(): Promise<void>;
};

export type NatsRegions = {
  home: NatsCluster;
  jp: RegionServer;
  link: RegionLink;
  /** Resolves once JP's server answers for the home domain's JetStream through the link. */
  linked(timeoutMs?: number): Promise<void>;
  stop(): Promise<void>;
};

export type NatsRegionsOptions = {
  baseDir: string;
  /** Nodes of the home cluster (3). */
  homeSize?: number;
  /** Delay each way on the inter-region link, ms (80). */
  linkDelayMs?: number;
  binary?: string;
  ownProcessGroup?: boolean;
  /** Starts the link's proxies (`startDelayProxy` in this process by default). */
  startProxy?: typeof startDelayProxy;
};

export async function startNatsRegions(opts: NatsRegionsOptions): Promise<NatsRegions> {
  const size = opts.homeSize ?? 3;
  // Each home node's leaf-node listener, and the proxy in front of it (started first: the node
  // advertises the proxy, so a leaf that reconnects to an address it was told still crosses the link).
  const listens = new Map<string, number>();
  const proxies = new Map<string, DelayProxy>();
  const links = () => [...proxies.values()];
  const stopProxies = () => Promise.all(links().map((p) => p.close()));
  let home: NatsCluster | null = null;
  try {
    for (let i = 1; i <= size; i++) {
      const leafPort = await freePort();
      listens.set(`us-${i}`, leafPort);
      const start = opts.startProxy ?? startDelayProxy;
      proxies.set(`us-${i}`, await start({ port: leafPort }, { delayMs: opts.linkDelayMs ?? 80 }));
    }
    home = await startNatsCluster({
      baseDir: join(opts.baseDir, 'us'),
      size,
      name: 'us',
      ...(opts.binary ? { binary: opts.binary } : {}),
      ownProcessGroup: opts.ownProcessGroup ?? false,
      nodeArgs: (node) => {
        const file = join(opts.baseDir, `${node.name}.conf`);
        const listen = listens.get(node.name);
        const advertised = proxies.get(node.name)?.port;
        writeFileSync(
          file,
          `jetstream { domain: ${HOME_DOMAIN} }\nleafnodes { listen: "127.0.0.1:${listen}", advertise: "127.0.0.1:${advertised}" }\n`,
        );
        return ['-c', file];
      },
    });
    const jp = await startRegionServer(opts, links());
    const cluster = home;
    const link: RegionLink = {
      get delayMs() {
        return links()[0]?.delayMs ?? 0;
      },
      set delayMs(ms: number) {
        for (const p of links()) p.delayMs = ms;
      },
      isCut: () => links().every((p) => p.isCut()),
      cut: () => {
        for (const p of links()) p.cut();
      },
      restore: () => {
        for (const p of links()) p.restore();
      },
    };
    return {
      home: cluster,
      jp,
      link,
      linked: (timeoutMs = 60_000) => jetStreamReady(jp.url, timeoutMs, undefined, HOME_DOMAIN),
      async stop() {
        await jp.kill('SIGTERM');
        await stopProxies();
        await cluster.stop();
      },
    };
  } catch (err) {
    await stopProxies();
    await home?.stop();
    throw err;
  }
}

async function startRegionServer(opts: NatsRegionsOptions, proxies: DelayProxy[]): Promise<RegionServer> {
  const port = await freePort();
  const storeDir = join(opts.baseDir, REGION_DOMAIN, 'jp-1');
  const file = join(opts.baseDir, 'jp-1.conf');
  const remotes = proxies.map((p) => `"nats-leaf://127.0.0.1:${p.port}"`).join(', ');
  writeFileSync(
    file,
    `server_name: jp-1\njetstream { domain: ${REGION_DOMAIN} }\nleafnodes { reconnect: 1, remotes: [ { urls: [ ${remotes} ] } ] }\n`,
  );
  const jp: RegionServer = {
    name: 'jp-1',
    url: `nats://127.0.0.1:${port}`,
    storeDir,
    server: null,
    async kill(signal: NodeJS.Signals = 'SIGKILL') {
      await jp.server?.kill(signal);
      jp.server = null;
    },
    async start() {
      jp.server = await startNatsServer({
        storeDir,
        port,
        ...(opts.binary ? { binary: opts.binary } : {}),
        ownProcessGroup: opts.ownProcessGroup ?? false,
        extraArgs: ['-c', file],
      });
      await jetStreamReady(jp.url, 30_000);
    },
  };
  await jp.start();
  return jp;
}

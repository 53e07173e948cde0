/**
 * The scale-out topology as local processes: a 3-node nats-server cluster (platform/nats-cluster.ts),
 * then `app/main.ts` once per role process: the simulator producer, the derived producer, two workers and two replicas
 * of every gateway edge (http; unified, JSON-RPC, gRPC and disk-sync per region). Every process gets every node's
 * URL in NATS_URL, STREAM_REPLICAS=3 (streams and KV buckets at R3) and ARTIFACT_STORE=nats (the
 * two workers and two `{base_url}` replicas share artifacts through the cluster, as in compose).
 * Each process runs in a process group of its own, so a Ctrl-C reaches the launcher only, which
 * then stops the gateways, then producer and workers, then the cluster last.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { copyFileSync, createWriteStream, existsSync, mkdirSync, readFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { type NatsCluster, startNatsCluster } from '../platform/nats-cluster.ts';
import { HOME_DOMAIN, type NatsRegions, startNatsRegions } from '../platform/nats-regions.ts';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..');

/** Edges with a US and a JP listener (`<EDGE>_PORT_US|JP`), and `http` (`{base_url}`, one listener). */
const REGIONAL = ['unified', 'jsonrpc', 'grpc', 'disksync'] as const;
export type Edge = (typeof REGIONAL)[number] | 'http';
export const EDGES: readonly Edge[] = [...REGIONAL, 'http'];

export type ClusterOptions = {
  /** Stores, data directories and logs: `<baseDir>/nats/<node>`, `<baseDir>/<process>`, `<baseDir>/logs`. */
  baseDir: string;
  /** Environment of every app process (secrets, NODE_ENV, rates), on top of this process's. */
  env?: Record<string, string>;
  edges?: readonly Edge[];
  /**
   * With `jp`, two regions (platform/nats-regions.ts): JP's edges on a NATS of their own, a leaf
   * node of the home cluster through a delaying link, reading mirrors (app/region-copies.ts).
   */
  regions?: readonly ('us' | 'jp')[];
  /** Delay each way on the inter-region link, ms (80). */
  linkDelayMs?: number;
  /** Replicas of each gateway (2). */
  replicas?: number;
  workers?: number;
  /** Start the simulator producer and the derived producer (default true). */
  producer?: boolean;
  natsServerBin?: string;
  /** Longest wait for one process to say it is running, ms. */
  startTimeoutMs?: number;
};

export type AppProcess = {
  name: string;
  args: string[];
  /** Where it listens (gateways), once running. */
  url: string | null;
  child: ChildProcess;
  logFile: string;
  exited: Promise<number | null>;
};

export type LocalCluster = {
  /** The home region's cluster. */
  nats: NatsCluster;
  /** The JP region's NATS and its link to home, when `regions` has `jp`. */
  regions: Pick<NatsRegions, 'jp' | 'link'> | null;
  processes: AppProcess[];
  /** Roles this build does not have (e.g. `gateway jsonrpc` before it lands), with the reason. */
  skipped: { name: string; reason: string }[];
  /** The demo key (development mode only), else null. */
  demoKey: string | null;
  /** Starts one more app process of the topology's kind (tests restart killed replicas with it). */
  spawn(name: string, args: string[], env?: Record<string, string>): Promise<AppProcess>;
  /** Gateways, then producer and workers, then the NATS cluster. */
  stop(): Promise<void>;
};

type Planned = { name: string; args: string[]; env: Record<string, string> };

/** The app processes of the topology, in start order. */
export function plan(opts: ClusterOptions): Planned[] {
  const replicas = opts.replicas ?? 2;
  const edges = opts.edges ?? EDGES;
  const regions = opts.regions ?? ['us', 'jp'];
  const out: Planned[] = [];
  if (opts.producer ?? true) {
    out.push({ name: 'producer-sim', args: ['producer', 'sim'], env: {} });
    out.push({ name: 'producer-derived', args: ['producer', 'derived'], env: {} });
  }
  for (let i = 1; i <= (opts.workers ?? 2); i++) out.push({ name: `worker-${i}`, args: ['worker'], env: {} });
  for (let i = 1; i <= replicas; i++) {
    if (edges.includes('http'))
      out.push({ name: `http-${i}`, args: ['gateway', 'http'], env: { HTTP_PORT: '0' } });
    for (const region of regions)
      for (const edge of REGIONAL)
        if (edges.includes(edge))
          out.push({
            name: `${edge}-${region}-${i}`,
            args: ['gateway', edge, '--region', region],
            env: { [`${edge.toUpperCase()}_PORT_${region.toUpperCase()}`]: '0' },
          });
  }
  return out;
}

const isGateway = (p: { args: string[] }) => p.args[0] === 'gateway';

/** App processes still running: killed if this process exits without stopping them (a crash). */
const live = new Set<ChildProcess>();
process.once('exit', () => {
  for (const child of live) child.kill('SIGKILL');
});

export async function startLocalCluster(opts: ClusterOptions): Promise<LocalCluster> {
  mkdirSync(join(opts.baseDir, 'logs'), { recursive: true });
  const natsOpts = {
    baseDir: join(opts.baseDir, 'nats'),
    ownProcessGroup: true,
    ...(opts.natsServerBin ? { binary: opts.natsServerBin } : {}),
  };
  const regions =
    (opts.regions?.includes('jp') ?? true)
      ? await startNatsRegions({
          ...natsOpts,
          ...(opts.linkDelayMs !== undefined ? { linkDelayMs: opts.linkDelayMs } : {}),
        })
      : null;
  const nats = regions?.home ?? (await startNatsCluster(natsOpts));
  // JP's processes: on JP's own NATS, reading its mirrors of the home region's streams.
  const jpEnv: Record<string, string> = regions
    ? { NATS_URL: regions.jp.url, NATS_HOME_DOMAIN: HOME_DOMAIN, STREAM_REPLICAS: '1' }
    : {};
  const common = {
    NATS_URL: nats.url,
    // The home region's status shows how far JP's copy is behind.
    ...(regions ? { NATS_REGION_DOMAINS: 'jp' } : {}),
    STREAM_REPLICAS: '3',
    ARTIFACT_STORE: 'nats',
    ...opts.env,
  };
  const processes: AppProcess[] = [];
  const skipped: LocalCluster['skipped'] = [];
  const launch = async (name: string, args: string[], env: Record<string, string> = {}) => {
    const region = args.includes('--region') && args[args.indexOf('--region') + 1] === 'jp' ? jpEnv : {};
    const p = startApp(
      name,
      args,
      { ...common, DATA_DIR: join(opts.baseDir, name), ...region, ...env },
      opts.baseDir,
    );
    processes.push(p);
    await untilRunning(p, opts.startTimeoutMs ?? 180_000);
    return p;
  };
  const cluster: LocalCluster = {
    nats,
    regions,
    processes,
    skipped,
    demoKey: null,
    spawn: launch,
    async stop() {
      await stopAll(processes.filter(isGateway));
      await stopAll(processes.filter((p) => !isGateway(p)));
      await (regions ?? nats).stop();
    },
  };
  try {
    const planned = plan(opts);
    // The first `{base_url}` replica makes the demo key (development) before the others start,
    // and the second reuses it (same file in its data directory) rather than make another.
    const first = planned.filter((p) => !isGateway(p) || p.name === 'http-1');
    for (const p of first) await launch(p.name, p.args, p.env);
    cluster.demoKey = shareDemoKey(opts.baseDir, planned);
    await Promise.all(
      planned
        .filter((p) => !first.includes(p))
        .map((p) =>
          launch(p.name, p.args, p.env).catch((err: Error) => {
            if (!/unknown role/.test(err.message)) throw err;
            skipped.push({ name: p.name, reason: `not in this build (${p.args.join(' ')})` });
          }),
        ),
    );
  } catch (err) {
    await cluster.stop();
    throw err;
  }
  return cluster;
}

function shareDemoKey(baseDir: string, planned: Planned[]): string | null {
  const file = join(baseDir, 'http-1', 'demo-api-key');
  if (!existsSync(file)) return null;
  for (const p of planned)
    if (p.args[1] === 'http' && p.name !== 'http-1') {
      mkdirSync(join(baseDir, p.name), { recursive: true });
      copyFileSync(file, join(baseDir, p.name, 'demo-api-key'));
    }
  return readFileSync(file, 'utf8').trim();
}

/** Spawns `app/main.ts <args>` in its own process group; its output goes to `<baseDir>/logs/<name>.log`. */
function startApp(name: string, args: string[], env: Record<string, string>, baseDir: string): AppProcess {
  const logFile = join(baseDir, 'logs', `${name}.log`);
  const child = spawn(process.execPath, ['--import', 'tsx', join(ROOT, 'app/main.ts'), ...args], {
    cwd: ROOT,
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
    detached: true,
  });
  live.add(child);
  child.once('exit', () => live.delete(child));
  const log = createWriteStream(logFile, { flags: 'a' });
  const p: AppProcess = {
    name,
    args,
    url: null,
    child,
    logFile,
    exited: new Promise((done) => child.once('exit', (code) => done(code))),
  };
  createInterface({ input: child.stdout as NodeJS.ReadableStream }).on('line', (line) => {
    log.write(`${line}\n`);
    const rec = parseLine(line);
    if (rec && typeof rec.url === 'string' && String(rec.msg).endsWith('listening')) p.url = rec.url;
    if (rec?.msg === 'running') child.emit('running');
  });
  let stderr = '';
  child.stderr?.on('data', (chunk: Buffer) => {
    log.write(chunk);
    stderr = (stderr + chunk.toString()).slice(-2_000);
  });
  child.once('exit', () => {
    child.emit('startup-failed', stderr.trim());
  });
  return p;
}

function parseLine(line: string): Record<string, unknown> | null {
  try {
    const v: unknown = JSON.parse(line);
    return typeof v === 'object' && v !== null ? (v as Record<string, unknown>) : null;
  } catch {
    return null;
  }
}

/** Resolves when the process logs `running`; rejects with its stderr if it exits first. */
function untilRunning(p: AppProcess, timeoutMs: number): Promise<void> {
  return new Promise((resolvePromise, reject) => {
    const timer = setTimeout(
      () => reject(new Error(`${p.name}: not running after ${timeoutMs} ms`)),
      timeoutMs,
    );
    p.child.once('running', () => {
      clearTimeout(timer);
      resolvePromise();
    });
    p.child.once('startup-failed', (stderr: string) => {
      clearTimeout(timer);
      reject(new Error(`${p.name} exited at start: ${stderr || 'no output'}`));
    });
  });
}

/** SIGTERM to each (its own graceful stop), SIGKILL to any still running 15 s later. */
async function stopAll(processes: AppProcess[]): Promise<void> {
  await Promise.all(
    processes.map(async (p) => {
      if (p.child.exitCode !== null || p.child.signalCode !== null) return;
      const timer = setTimeout(() => p.child.kill('SIGKILL'), 15_000);
      p.child.kill('SIGTERM');
      await p.exited;
      clearTimeout(timer);
    }),
  );
}

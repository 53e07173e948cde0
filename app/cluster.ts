/**
 * `npm run cluster [-- --edges unified,jsonrpc,grpc,disksync,http --regions us,jp --replicas 2 --workers 2]`:
 * the scale-out topology on this machine (app/cluster-topology.ts): a 3-node NATS cluster with
 * every stream and KV bucket at R3, the simulator producer, the workers and the gateway replicas;
 * with `jp` in `--regions` (the default), JP's edges run on a NATS of their own joined to the home
 * cluster through a delaying link (`--link-delay-ms`, 80; SIGUSR2 cuts and restores it).
 * Prints where each part listens, then runs until Ctrl-C (or SIGTERM), which stops the gateways,
 * then producer and workers, then the cluster last. Stores live under DATA_DIR/cluster, so a
 * second run resumes from them. Each process's log: DATA_DIR/cluster/logs/<name>.log.
 */
import { join, resolve } from 'node:path';
import { loadConfig } from '../platform/config.ts';
import { EDGES, type Edge, type LocalCluster, startLocalCluster } from './cluster-topology.ts';

const USAGE = `usage: cluster [--edges ${EDGES.join(',')}] [--regions us,jp] [--link-delay-ms 80] [--replicas N] [--workers N] [--no-producer]`;

function flag(argv: string[], name: string): string | undefined {
  const at = argv.indexOf(name);
  return at < 0 ? undefined : argv[at + 1];
}

function listOf<T extends string>(
  raw: string | undefined,
  allowed: readonly T[],
  name: string,
): T[] | undefined {
  if (raw === undefined) return undefined;
  const items = raw.split(',').map((s) => s.trim());
  const bad = items.find((s) => !allowed.includes(s as T));
  if (bad !== undefined)
    throw new Error(`${name}: unknown "${bad}" (one of ${allowed.join(', ')})\n${USAGE}`);
  return items as T[];
}

function countOf(raw: string | undefined, name: string): number | undefined {
  if (raw === undefined) return undefined;
  const n = Number(raw);
  if (!Number.isInteger(n) || n < 0 || n > 8) throw new Error(`${name} must be 0…8\n${USAGE}`);
  return n;
}

function describe(cluster: LocalCluster): string {
  const rows: [string, string][] = cluster.nats.nodes.map((n) => [
    n.name,
    `${n.url}  (routes 127.0.0.1:${n.routePort}, store ${n.storeDir})`,
  ]);
  const r = cluster.regions;
  if (r)
    rows.push([r.jp.name, `${r.jp.url}  (region jp, leaf node of us; link ${r.link.delayMs} ms each way)`]);
  for (const p of cluster.processes) rows.push([p.name, p.url ?? `pid ${p.child.pid}`]);
  for (const s of cluster.skipped) rows.push([s.name, `skipped: ${s.reason}`]);
  const width = Math.max(...rows.map(([name]) => name.length));
  const lines = rows.map(([name, where]) => `  ${name.padEnd(width)}  ${where}`);
  lines.push('', `NATS_URL=${cluster.nats.url}`);
  if (r)
    lines.push(
      `JP NATS_URL=${r.jp.url}  (kill -USR2 ${process.pid} cuts the inter-region link, again restores it)`,
    );
  if (cluster.demoKey) lines.push(`demo API key: ${cluster.demoKey}`);
  return `${lines.join('\n')}\n`;
}

async function main(): Promise<void> {
  const argv = process.argv.slice(2);
  if (argv.includes('--help')) {
    process.stdout.write(`${USAGE}\n`);
    return;
  }
  const config = loadConfig();
  const baseDir = resolve(join(config.DATA_DIR, 'cluster'));
  const edges = listOf<Edge>(flag(argv, '--edges'), EDGES, '--edges');
  const regions = listOf(flag(argv, '--regions'), ['us', 'jp'] as const, '--regions');
  const replicas = countOf(flag(argv, '--replicas'), '--replicas');
  const workers = countOf(flag(argv, '--workers'), '--workers');
  const delay = flag(argv, '--link-delay-ms');
  const linkDelayMs = delay === undefined ? undefined : Number(delay);
  if (
    linkDelayMs !== undefined &&
    !(Number.isInteger(linkDelayMs) && linkDelayMs >= 0 && linkDelayMs <= 10_000)
  )
    throw new Error(`--link-delay-ms must be 0…10000\n${USAGE}`);
  process.stdout.write(`starting the cluster under ${baseDir} …\n`);
  const startedMs = Date.now();
  const cluster = await startLocalCluster({
    baseDir,
    ...(edges ? { edges } : {}),
    ...(regions ? { regions } : {}),
    ...(replicas !== undefined ? { replicas } : {}),
    ...(workers !== undefined ? { workers } : {}),
    ...(linkDelayMs !== undefined ? { linkDelayMs } : {}),
    producer: !argv.includes('--no-producer'),
    ...(config.NATS_SERVER_BIN ? { natsServerBin: config.NATS_SERVER_BIN } : {}),
  });
  process.stdout.write(
    `cluster running (${((Date.now() - startedMs) / 1000).toFixed(1)} s); Ctrl-C stops it\n${describe(cluster)}`,
  );
  let stopping = false;
  const stop = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    process.stdout.write(`${signal}: stopping gateways, then producer and workers, then NATS …\n`);
    await cluster.stop();
    process.stdout.write('cluster stopped\n');
    process.exit(0);
  };
  process.on('SIGINT', () => void stop('SIGINT'));
  process.on('SIGTERM', () => void stop('SIGTERM'));
  process.on('SIGUSR2', () => {
    const link = cluster.regions?.link;
    if (!link) return;
    if (link.isCut()) link.restore();
    else link.cut();
    process.stdout.write(`inter-region link ${link.isCut() ? 'cut' : 'restored'}\n`);
  });
  for (const p of cluster.processes)
    p.exited.then((code) => {
      if (!stopping) process.stderr.write(`${p.name} exited (${code}); see ${p.logFile}\n`);
    });
}

main().catch((err) => {
  process.stderr.write(`fatal: ${err instanceof Error ? err.message : String(err)}\n`);
  process.exit(1);
});

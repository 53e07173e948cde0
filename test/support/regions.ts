/**
 * The two-region layout of the region tests (platform/nats-regions.ts): a home region and a JP one
 * joined by a delaying link, one real `gateway edges` process per region (JP's on JP's NATS with
 * NATS_HOME_DOMAIN, reading its mirrors), the test's own connections to both, and test accounts
 * made at home.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createLogger } from '../../platform/logger.ts';
import { connectNats, type Nats } from '../../platform/nats.ts';
import { HOME_DOMAIN, type NatsRegions, startNatsRegions } from '../../platform/nats-regions.ts';
import { startTestAccounts, type TestAccounts } from './accounts.ts';
import { connectClusterNats } from './cluster-nats.ts';
import { eventually } from './eventually.ts';
import { testConfig } from './gateway.ts';
import { killAll, type ServiceProcess, startService } from './process.ts';

export type Edges = { sse: string; rpc: string; grpc: string; disk: string; process: ServiceProcess };

export type TwoRegions = {
  regions: NatsRegions;
  home: Nats;
  jp: Nats;
  accounts: TestAccounts;
  edges: Record<'us' | 'jp', Edges>;
  processes: ServiceProcess[];
  /** Starts a region's edges again (after a kill), on the same NATS. */
  startEdges(region: 'us' | 'jp'): Promise<Edges>;
  /** Resolves once JP's copy of the keys holds every key made at home so far. */
  keysInJp(): Promise<void>;
  /** `n` Quant keys with Japan access, each of an account of its own, made at home and in JP's copy. */
  jpKeys(n: number): Promise<string[]>;
  stop(): Promise<void>;
};

export async function startTwoRegions(opts: {
  homeSize: number;
  /** Environment of both edge processes (and of JP's, `jpEnv` on top). */
  env?: Record<string, string>;
  jpEnv?: Record<string, string>;
}): Promise<TwoRegions> {
  const config = testConfig({ STREAM_REPLICAS: String(opts.homeSize) });
  const dir = mkdtempSync(join(tmpdir(), 'mdp-regions-'));
  const regions = await startNatsRegions({ baseDir: dir, homeSize: opts.homeSize, linkDelayMs: 80 });
  const processes: ServiceProcess[] = [];
  const home = await connectClusterNats(regions.home.url, config);
  const accounts = await startTestAccounts(home, config);
  const envOf = (region: 'us' | 'jp'): Record<string, string> =>
    region === 'us'
      ? { NATS_URL: regions.home.url, STREAM_REPLICAS: String(opts.homeSize), ...opts.env }
      : {
          NATS_URL: regions.jp.url,
          NATS_HOME_DOMAIN: HOME_DOMAIN,
          STREAM_REPLICAS: '1',
          ...opts.env,
          ...opts.jpEnv,
        };
  const startEdges = async (region: 'us' | 'jp'): Promise<Edges> => {
    const p = startService(['gateway', 'edges', '--region', region], {
      NODE_ENV: 'test',
      API_KEY_SECRET: config.API_KEY_SECRET,
      ...Object.fromEntries(
        ['UNIFIED', 'JSONRPC', 'GRPC', 'DISKSYNC'].map((e) => [`${e}_PORT_${region.toUpperCase()}`, '0']),
      ),
      ...envOf(region),
    });
    processes.push(p);
    const url = async (msg: string) => (await p.waitForLog((l) => l.msg === msg, 120_000)).url as string;
    const [sse, rpc, grpc, disk] = await Promise.all([
      url('unified stream listening'),
      url('json-rpc listening'),
      url('grpc listening'),
      url('disksync listening'),
    ]);
    return { sse, rpc, grpc: grpc.replace(/^[a-z]+:\/\//, ''), disk, process: p };
  };
  // Home first: its edges make the buckets JP mirrors.
  const us = await startEdges('us');
  await regions.linked();
  const jpEdges = await startEdges('jp');
  const jp = await connectNats(regions.jp.url, 'test-jp', createLogger('silent'));
  const keysInJp = async () => {
    const atHome = (await home.jsm.streams.info('KV_keys')).state.last_seq;
    await eventually(
      async () => (await jp.jsm.streams.info('KV_keys')).state.last_seq >= atHome,
      15_000,
      "the keys in JP's copy",
    );
  };
  return {
    regions,
    home,
    jp,
    accounts,
    edges: { us, jp: jpEdges },
    processes,
    startEdges,
    keysInJp,
    async jpKeys(n) {
      const keys = await Promise.all(
        Array.from({ length: n }, async () => (await accounts.key('quant', { jp: true })).key),
      );
      await keysInJp();
      return keys;
    },
    async stop() {
      accounts.stop();
      await killAll(processes);
      await home.nc.close().catch(() => {});
      await jp.nc.close().catch(() => {});
      await regions.stop();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/**
 * A disk-sync client for tests, on the real `ws` client: every frame it receives in order
 * (control messages parsed, data frames decoded into events of either encoding), the close code
 * and reason, and waits on them.
 */
import { unpack } from 'msgpackr';
import WebSocket from 'ws';
import { startDisksyncGateway } from '../../app/disksync-gateway.ts';
import { startEdgeGuard } from '../../app/edge-guard.ts';
import { openGuard } from '../../gateways/core/guard.ts';
import { LiveTail } from '../../gateways/core/live-tail.ts';
import {
  buildDisksyncApp,
  type DisksyncApp,
  type DisksyncSettings,
  disksyncSettings,
} from '../../gateways/disksync/app.ts';
import { KeyLeases } from '../../gateways/disksync/lease.ts';
import type { Config } from '../../platform/config.ts';
import { createLogger, type Logger } from '../../platform/logger.ts';
import type { Nats } from '../../platform/nats.ts';
import { eventually } from './eventually.ts';
import { connectTestNats, testConfig } from './gateway.ts';
import { killAll, type ServiceProcess, startService } from './process.ts';

export type Control = { type: string; [k: string]: unknown };
export type SyncedEvent = { seq: number; [k: string]: unknown };

export type SyncClient = {
  ws: WebSocket;
  controls: Control[];
  events: SyncedEvent[];
  /** Data frames received, with their byte sizes. */
  frameBytes: number[];
  closed: Promise<{ code: number; reason: string }>;
  send(m: unknown): void;
  control(type: string, pred?: (c: Control) => boolean, ms?: number): Promise<Control>;
  close(): Promise<void>;
};

export function connectSync(
  url: string,
  opts: { key?: string; query?: string; autoPong?: boolean; headers?: Record<string, string> } = {},
): SyncClient {
  const headers = { ...(opts.key ? { 'x-api-key': opts.key } : {}), ...opts.headers };
  const ws = new WebSocket(`${url}/${opts.query ?? ''}`, {
    headers,
    autoPong: opts.autoPong ?? true,
    rejectUnauthorized: false,
    maxPayload: 64 * 1024 * 1024,
  });
  const controls: Control[] = [];
  const events: SyncedEvent[] = [];
  const frameBytes: number[] = [];
  ws.on('message', (data: Buffer, isBinary: boolean) => {
    if (isBinary) {
      frameBytes.push(data.length);
      events.push(...(unpack(data) as SyncedEvent[]));
      return;
    }
    const text = data.toString();
    if (text.startsWith('[')) {
      frameBytes.push(data.length);
      events.push(...(JSON.parse(text) as SyncedEvent[]));
    } else controls.push(JSON.parse(text) as Control);
  });
  ws.on('error', () => {});
  const closed = new Promise<{ code: number; reason: string }>((resolve) =>
    ws.once('close', (code, reason) => resolve({ code, reason: reason.toString() })),
  );
  return {
    ws,
    controls,
    events,
    frameBytes,
    closed,
    send(m) {
      const text = typeof m === 'string' ? m : JSON.stringify(m);
      if (ws.readyState === ws.OPEN) ws.send(text);
      else if (ws.readyState === ws.CONNECTING) ws.once('open', () => ws.send(text));
    },
    control: (type, pred = () => true, ms = 15_000) =>
      eventually(() => controls.find((c) => c.type === type && pred(c)), ms, `control ${type}`),
    async close() {
      if (ws.readyState === ws.CLOSED) return;
      ws.close();
      await closed;
    },
  };
}

/** The close of a client refused at admission (the upgrade completes first), with its error message. */
export async function refusal(
  c: SyncClient,
): Promise<{ code: number; reason: string; error: Control | undefined }> {
  const close = await c.closed;
  return { ...close, error: c.controls.find((x) => x.type === 'error') };
}

/** Starts a real `gateway disksync` process (free ports, the test secret); pushed to `into` at once. */
export function startDisksyncEdge(
  natsUrl: string,
  apiKeySecret: string,
  region: 'us' | 'jp',
  env: Record<string, string>,
  into: ServiceProcess[],
): { process: ServiceProcess; url: Promise<string> } {
  const p = startService(['gateway', 'disksync', '--region', region], {
    NATS_URL: natsUrl,
    NODE_ENV: 'test',
    API_KEY_SECRET: apiKeySecret,
    DISKSYNC_PORT_US: '0',
    DISKSYNC_PORT_JP: '0',
    ...env,
  });
  into.push(p);
  return {
    process: p,
    url: p.waitForLog((l) => l.msg === 'disksync listening', 90_000).then((l) => l.url as string),
  };
}

/** Drops the clients and stops the processes (SIGKILL for whatever may hang on a dead NATS). */
export async function stopAll(
  clients: SyncClient[],
  processes: ServiceProcess[],
  signal: NodeJS.Signals,
): Promise<void> {
  for (const c of clients) c.ws.terminate();
  await killAll(processes, signal);
}

/** An open-guard US disk-sync edge over `parts`, listening on a free loopback port (`url`: its ws:// address). */
export async function listenOpenDisksync(parts: {
  nats: Nats;
  tail: LiveTail;
  leases: KeyLeases;
  log: Logger;
  settings: DisksyncSettings;
}): Promise<{ url: string; edge: DisksyncApp }> {
  const edge = buildDisksyncApp({ ...parts, guard: openGuard, region: 'us' });
  const address = await edge.app.listen({ host: '127.0.0.1', port: 0 });
  return { url: address.replace(/^http/, 'ws'), edge };
}

/** A disk-sync edge built in this process (open guard: no key, no lease), for tests that read its registry. */
export type InProcessDisksync = {
  url: string;
  nats: Nats;
  edge: DisksyncApp;
  close(): Promise<void>;
};

export async function startInProcessDisksync(
  natsUrl: string,
  settings: Partial<DisksyncSettings> = {},
): Promise<InProcessDisksync> {
  const config = testConfig();
  const log = createLogger(config.LOG_LEVEL, 'disksync');
  const nats = await connectTestNats(natsUrl, config);
  const tail = await LiveTail.start(nats, log, {
    ringSize: config.SSE_RING_SIZE,
    staleAfterMs: config.SSE_FEED_STALE_MS,
    expectedCoins: config.COINS,
  });
  const leases = await KeyLeases.open(nats, config.DISKSYNC_LEASE_TTL_MS);
  const { url, edge } = await listenOpenDisksync({
    nats,
    tail,
    leases,
    log,
    settings: { ...disksyncSettings(config), ...settings },
  });
  return {
    url,
    nats,
    edge,
    async close() {
      await edge.shutdown();
      tail.stop();
      await nats.nc.close();
    },
  };
}

/**
 * A disk-sync edge in this process behind the real key guard (the edge roles' own `startEdgeGuard`
 * and `startDisksyncGateway`), on a free port; `stop` stops the edge, then its guard.
 */
export async function startGuardedDisksync(
  nats: Nats,
  config: Config,
  log: Logger,
): Promise<{ address: string; stop(): Promise<void> }> {
  const parts = await startEdgeGuard(nats, config, log);
  try {
    const disk = await startDisksyncGateway(
      nats,
      { ...config, DISKSYNC_PORT_US: 0, HOST: '127.0.0.1' },
      log,
      'us',
      parts,
    );
    return {
      address: disk.address,
      async stop() {
        await disk.stop();
        await parts.part.stop();
      },
    };
  } catch (err) {
    await parts.part.stop();
    throw err;
  }
}

/**
 * The benchmark's market-data side: a private nats-server (free port, temporary store), the
 * platform's streams, a steady-rate publisher through the real `publishEvents`, and a fast bulk
 * fill of the MD stream (core NATS publishes, flushed, then checked against the stream state).
 */
import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { encodeStoredEvent } from '../../contracts/event-wire.ts';
import { STREAMS, streamDefinitions } from '../../contracts/streams.ts';
import { mdSubject } from '../../contracts/subjects.ts';
import { createLogger } from '../../platform/logger.ts';
import { connectNats, ensureStreams, type Nats } from '../../platform/nats.ts';
import { type NatsServerHandle, startNatsServer } from '../../platform/nats-server.ts';
import { nowUs, type Outgoing, publishEvents } from '../../producers/publish.ts';
import { trade } from '../../test/support/publisher.ts';
import { benchConfig } from './config.ts';

/** The same deterministic trades the tests publish. */
export { trade };

export const COINS = ['BTC', 'ETH', 'SOL', 'HYPE'];

export type BenchNats = { server: NatsServerHandle; nats: Nats; url: string; cleanup(): Promise<void> };

const silent = createLogger('silent', 'bench');

function streamDefs() {
  const c = benchConfig();
  return streamDefinitions({
    mdMaxAgeSeconds: c.MD_MAX_AGE_S,
    mdMaxMsgs: c.MD_MAX_MSGS,
    mdMaxBytes: c.MD_MAX_BYTES,
  });
}

export async function startBenchNats(): Promise<BenchNats> {
  const storeDir = mkdtempSync(join(tmpdir(), 'mdp-bench-nats-'));
  let server: NatsServerHandle | null = null;
  let nats: Nats | null = null;
  let stopping = false;
  try {
    server = await startNatsServer({ storeDir });
    server.process.once('exit', (code, signal) => {
      if (!stopping) process.stderr.write(`[bench] nats-server exited unexpectedly (${code ?? signal})\n`);
    });
    nats = await connectNats(
      server.url,
      'bench-publisher',
      silent,
      {},
      {
        historyWire: benchConfig().NATS_HISTORY_WIRE,
      },
    );
    await ensureStreams(nats.jsm, streamDefs());
  } catch (err) {
    stopping = true;
    await nats?.nc.close().catch(() => {});
    await server?.stop();
    rmSync(storeDir, { recursive: true, force: true });
    throw err;
  }
  const started = { server, nats };
  return {
    ...started,
    url: server.url,
    async cleanup() {
      stopping = true;
      await started.nats.nc.close().catch(() => {});
      await started.server.stop();
      rmSync(storeDir, { recursive: true, force: true });
    },
  };
}

/** Deletes and recreates MD, so that stream sequences start at 1 again. */
export async function resetMdStream(nats: Nats): Promise<void> {
  await nats.jsm.streams.delete(STREAMS.MD);
  await ensureStreams(
    nats.jsm,
    streamDefs().filter((d) => d.name === STREAMS.MD),
  );
}

export type RatePublisher = {
  stop(): Promise<{ published: number; failed: number; late_ticks: number; seconds: number }>;
};

/**
 * `perSecond` trades round-robin over COINS through `publishEvents` (which stamps `publish_us`
 * just before each publish), on a 1 ms tick, acks awaited in the background.
 */
export function publishAtRate(nats: Nats, perSecond: number): RatePublisher {
  const prefix = randomUUID();
  const start = performance.now();
  let i = 0;
  let inflight = 0;
  let failed = 0;
  let lateTicks = 0;
  const settled = new Set<Promise<unknown>>();
  const tick = () => {
    if (inflight > 20_000) {
      lateTicks++;
      return;
    }
    const due = Math.floor(((performance.now() - start) / 1_000) * perSecond);
    if (due <= i) return;
    const batch: Outgoing[] = [];
    for (; i < due; i++) {
      const coin = COINS[i % COINS.length] as string;
      batch.push({ event: trade(coin, i), id: `${prefix}.${i}`, ingestUs: nowUs() });
    }
    inflight += batch.length;
    const p = publishEvents(nats.js, batch, silent)
      .then((stored) => {
        failed += batch.length - stored;
      })
      .finally(() => {
        inflight -= batch.length;
        settled.delete(p);
      });
    settled.add(p);
  };
  const timer = setInterval(tick, 1);
  return {
    async stop() {
      clearInterval(timer);
      await Promise.allSettled([...settled]);
      return {
        published: i,
        failed,
        late_ticks: lateTicks,
        seconds: Math.round(performance.now() - start) / 1_000,
      };
    },
  };
}

/**
 * Stores `n` more trades in MD as fast as the server takes them: core NATS publishes (no acks),
 * flushed every `chunk`, then the stream's message count is checked and any shortfall topped up.
 */
export async function fillMdStream(
  nats: Nats,
  n: number,
): Promise<{ stored: number; seconds: number; per_s: number; top_ups: number }> {
  const t0 = performance.now();
  const before = (await nats.jsm.streams.info(STREAMS.MD)).state.messages;
  const templates = Array.from({ length: 256 }, (_, k) => {
    const ev = trade(COINS[k % COINS.length] as string, k);
    const us = nowUs();
    return {
      subject: mdSubject(ev.source, ev.symbol, ev.event_type),
      data: encodeStoredEvent(ev, { ingest_us: us, publish_us: us }),
    };
  });
  const chunk = 10_000;
  let topUps = 0;
  let remaining = n;
  for (;;) {
    for (let i = 0; i < remaining; i++) {
      const t = templates[i & 255] as { subject: string; data: Uint8Array };
      nats.nc.publish(t.subject, t.data);
      if (i % chunk === chunk - 1) await nats.nc.flush();
    }
    await nats.nc.flush();
    // The stream stores asynchronously from the flush: wait until its count stops moving.
    let stored = 0;
    for (let stable = 0, last = -1; stable < 3; ) {
      stored = (await nats.jsm.streams.info(STREAMS.MD)).state.messages - before;
      stable = stored === last ? stable + 1 : 0;
      last = stored;
      if (stored >= n) break;
      await new Promise((r) => setTimeout(r, 50));
    }
    remaining = n - stored;
    if (remaining <= 0 || topUps >= 5) break;
    topUps++;
  }
  const seconds = (performance.now() - t0) / 1_000;
  const stored = (await nats.jsm.streams.info(STREAMS.MD)).state.messages - before;
  return {
    stored,
    seconds: Math.round(seconds * 1_000) / 1_000,
    per_s: Math.round(stored / seconds),
    top_ups: topUps,
  };
}

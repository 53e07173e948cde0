/**
 * TypeScript stream client benchmark (`npm run bench -- client`, issue 14): the `@mdp/client`
 * iterator against a raw `EventSource` (the `eventsource` package) reading the same stream from
 * the real unified gateway (its own process), both measured in this run:
 *
 * 1. Events/s: each reads the same N stored events from position 0 (JetStream catch-up, so the
 *    gateway sends as fast as a reader takes them), in alternating rounds; each parses every
 *    event's JSON, as any consumer must.
 * 2. Added latency: both connected at once to the live stream at BENCH_RATE events/s; each records
 *    publish_us → the moment the event reaches user code; added = client p50 − EventSource p50.
 *
 * Scaling (environment): BENCH_EVENTS (default 200,000), BENCH_ROUNDS (3), BENCH_RATE (1,000/s),
 * BENCH_WARMUP_S (2), BENCH_MEASURE_S (10).
 */
import { EventSource } from 'eventsource';
import { stream } from '../clients/typescript/src/index.ts';
import { STREAMS } from '../contracts/streams.ts';
import { fillMdStream, publishAtRate, startBenchNats } from './lib/feed.ts';
import { Histogram } from './lib/histogram.ts';
import { sleep, startWorker } from './lib/ipc.ts';
import { wallUs } from './lib/proc-stats.ts';

const env = (name: string, fallback: number) => Number(process.env[name] ?? fallback);

type Reader = 'eventsource' | 'client';

/** Reads from position 0 until `last` (`base`: the stream URL); resolves with events/s. */
async function readAll(kind: Reader, base: string, last: number): Promise<number> {
  const t0 = performance.now();
  let n = 0;
  if (kind === 'client') {
    for await (const item of stream({ url: base, key: 'bench', from: 0 })) {
      if (item.type !== 'event') continue;
      n++;
      if (item.seq >= last) break;
    }
  } else {
    await new Promise<void>((resolve, reject) => {
      const es = new EventSource(`${base}?last_event_id=0`);
      es.onmessage = (m) => {
        n++;
        if ((JSON.parse(m.data) as { seq: number }).seq >= last) {
          es.close();
          resolve();
        }
      };
      es.onerror = (e) => {
        es.close();
        reject(
          new Error(
            `EventSource: ${JSON.stringify({ code: (e as { code?: number }).code, message: (e as { message?: string }).message, after_events: n, data: (e as { data?: string }).data })}`,
          ),
        );
      };
    });
  }
  if (n !== last) throw new Error(`${kind} read ${n} events, expected ${last}`);
  return last / ((performance.now() - t0) / 1_000);
}

/** Both readers on the live stream at once; publish → user code latency of each, µs. */
async function liveLatency(base: string, publish: () => { stop(): Promise<unknown> }) {
  const hist: Record<Reader, Histogram> = { eventsource: new Histogram(), client: new Histogram() };
  let measuring = false;
  const es = new EventSource(base);
  es.onmessage = (m) => {
    const e = JSON.parse(m.data) as { publish_us: number };
    if (measuring) hist.eventsource.record(wallUs() - e.publish_us);
  };
  const s = stream({ url: base, key: 'bench' });
  const clientLoop = (async () => {
    for await (const item of s) {
      if (item.type === 'event' && measuring && item.event.publish_us)
        hist.client.record(wallUs() - item.event.publish_us);
    }
  })();
  const publisher = publish();
  await sleep(env('BENCH_WARMUP_S', 2) * 1_000);
  measuring = true;
  await sleep(env('BENCH_MEASURE_S', 10) * 1_000);
  measuring = false;
  await publisher.stop();
  es.close();
  s.close();
  await clientLoop;
  return { eventsource: hist.eventsource.summary(), client: hist.client.summary() };
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] as number;

export async function run() {
  const nats = await startBenchNats();
  const server = await startWorker('sse-server');
  try {
    // The stream is filled before the gateway starts: filled after, its live tail would still be
    // taking the burst when a reader from 0 reached it, and the sink cuts a reader slower than a
    // live burst past its bound (`upstream_lag`, then the terminal `reconnect`: resume from the
    // log), which ended 1 of 20 runs.
    const events = env('BENCH_EVENTS', 200_000);
    process.stderr.write(`filling MD with ${events} events\n`);
    await fillMdStream(nats.nats, events);
    const { url } = await server.call<{ url: string }>('start', { mode: 'gateway', natsUrl: nats.url });
    const last = (await nats.nats.jsm.streams.info(STREAMS.MD)).state.last_seq;
    const rounds: Record<Reader, number[]> = { eventsource: [], client: [] };
    for (let r = 0; r < env('BENCH_ROUNDS', 3); r++) {
      for (const kind of (r % 2 ? ['client', 'eventsource'] : ['eventsource', 'client']) as Reader[]) {
        const perS = await readAll(kind, url, last);
        rounds[kind].push(Math.round(perS));
        process.stderr.write(`round ${r + 1} ${kind}: ${Math.round(perS)} events/s\n`);
      }
    }
    const rate = env('BENCH_RATE', 1_000);
    process.stderr.write(`live latency at ${rate} events/s\n`);
    const latency = await liveLatency(url, () => publishAtRate(nats.nats, rate));
    const es = median(rounds.eventsource);
    const client = median(rounds.client);
    return {
      events,
      throughput_events_per_s: {
        eventsource: { median: es, rounds: rounds.eventsource },
        client: { median: client, rounds: rounds.client },
        ratio: Math.round((client / es) * 100) / 100,
        goal: '>= 0.9',
      },
      live_latency_us: {
        rate_per_s: rate,
        eventsource: latency.eventsource,
        client: latency.client,
        added_p50_us: Math.round((latency.client.p50 - latency.eventsource.p50) * 10) / 10,
        goal: '<= 50',
      },
    };
  } finally {
    await server.close();
    await nats.cleanup();
  }
}

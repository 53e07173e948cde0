/**
 * The live-latency baseline and window shared by the edge benchmarks (gRPC, disk-sync): a raw
 * JetStream consumer of the kind every gateway's live tail is (`readOrdered`: an ordered pull
 * consumer, no acks), timing `publish_us` → its callback, and the 1,000 events/s window both the
 * raw side and the edge side are measured over. Beside them, the transport's floor: the same raw
 * consumer handing each message to a bare server of the edge's transport (a `ws` or grpc-js
 * server with nothing else), timed at its client in this process, as the edge's client is.
 *
 * The events come from a LiveFeed: by default a publisher in a process of its own
 * (bench/lib/live-publisher.ts), as the platform's producers are; LIVE_BENCH_PUBLISHER=bench
 * publishes from the bench process instead, whose event loop then also handles every JetStream
 * ack, between a reader's callback and its client's read.
 */
import type { Logger } from '../../platform/logger.ts';
import type { Nats } from '../../platform/nats.ts';
import { readOrdered } from '../../platform/ordered-reader.ts';
import { publishAtRate } from './feed.ts';
import { Histogram } from './histogram.ts';
import { sleep, startWorker } from './ipc.ts';

/** This process's wall clock in µs (the kind of clock `publish_us` is stamped on). */
export const nowUs = (): number => (performance.timeOrigin + performance.now()) * 1_000;

/** This process's wall clock minus the machine's monotonic clock (µs): fixed for a process's life. */
export const clockSkewUs = (): number => nowUs() - Number(process.hrtime.bigint()) / 1_000;

/** Where the live events come from, and how a `publish_us` stamp is read on this process's clock. */
export type LiveFeed = {
  /** `own process` (the default) or `bench process`. */
  readonly publisher: string;
  /**
   * One window: 300 ms for the readers to settle, the events (`perSecond`, default 1,000 a
   * second), 200 ms for the last to arrive.
   */
  window(perSecond?: number): Promise<void>;
  /** Now, in µs on the publisher's clock (`publish_us` stamps' own). */
  now(): number;
  /** What a process of skew `skewUs` (its `clockSkewUs`) adds to its `nowUs()` to read the publisher's clock. */
  offsetFor(skewUs: number): number;
  close(): Promise<void>;
};

/** 1,000 events/s for `seconds` a window, from a worker process or (LIVE_BENCH_PUBLISHER=bench) this one. */
export async function startLiveFeed(nats: Nats, natsUrl: string, seconds: number): Promise<LiveFeed> {
  if (process.env.LIVE_BENCH_PUBLISHER === 'bench')
    return {
      publisher: 'bench process',
      async window(perSecond = 1_000) {
        await sleep(300);
        const pub = publishAtRate(nats, perSecond);
        await sleep(seconds * 1_000);
        await pub.stop();
        await sleep(200);
      },
      now: nowUs,
      offsetFor: (skewUs) => clockSkewUs() - skewUs,
      close: async () => {},
    };
  const worker = await startWorker('live-publisher');
  await worker.call('connect', { url: natsUrl });
  const theirs = await worker.call<number>('skew');
  // publish_us (their wall clock) → this process's: both clocks are the monotonic clock plus a skew.
  const offset = theirs - clockSkewUs();
  return {
    publisher: 'own process',
    async window(perSecond = 1_000) {
      await sleep(300);
      await worker.call('publish', { seconds, perSecond }, seconds * 1_000 + 30_000);
      await sleep(200);
    },
    now: () => nowUs() + offset,
    offsetFor: (skewUs) => theirs - skewUs,
    close: () => worker.close(),
  };
}

/** A bare server of one transport and its client: `send` one stored event; the client calls `received`. */
export type Relay = {
  send(json: Uint8Array): void;
  close(): Promise<void> | void;
};

/**
 * The floor: publish_us → receipt at the client of `open`'s bare relay, fed by a raw ordered
 * consumer of MD from its end, over one window. What the edge adds above this is its own work.
 */
export async function relayedLive(
  feed: LiveFeed,
  nats: Nats,
  log: Logger,
  open: (received: (publishUs: number) => void) => Promise<Relay>,
): Promise<Histogram> {
  const h = new Histogram();
  const relay = await open((publishUs) => h.record(feed.now() - publishUs));
  await readWindow(feed, nats, log, (m) => relay.send(m.data));
  await relay.close();
  return h;
}

/**
 * The baseline: publish_us → receipt on a raw ordered consumer of MD from its end, over one
 * window. Nothing else reads the stream meanwhile; each payload's JSON is parsed, as a client
 * decodes each message.
 */
export async function rawLive(feed: LiveFeed, nats: Nats, log: Logger): Promise<Histogram> {
  const h = new Histogram();
  await readWindow(feed, nats, log, (m) => {
    const t = feed.now();
    const o = JSON.parse(new TextDecoder().decode(m.data.subarray(m.data.indexOf(123)))) as {
      publish_us?: number;
    };
    if (o.publish_us) h.record(t - o.publish_us);
  });
  return h;
}

/** A raw ordered consumer of MD from its end, handing `onMessage` every event of one window. */
export async function readWindow(
  feed: LiveFeed,
  nats: Nats,
  log: Logger,
  onMessage: (m: { data: Uint8Array }) => void,
  perSecond?: number,
): Promise<void> {
  const raw = readOrdered(
    nats,
    { stream: 'MD', filter: 'md.>', startSeq: (await nats.jsm.streams.info('MD')).state.last_seq + 1 },
    onMessage,
    log,
  );
  await feed.window(perSecond);
  raw.stop();
}

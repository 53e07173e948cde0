/**
 * The live-latency baseline and window shared by the edge benchmarks (gRPC, disk-sync): a raw
 * JetStream consumer of the kind every gateway's live tail is (`readOrdered`: an ordered pull
 * consumer, no acks), timing `publish_us` → its callback, and the 1,000 events/s window both the
 * raw side and the edge side are measured over. Beside them, the transport's floor: the same raw
 * consumer handing each message to a bare server of the edge's transport (a `ws` or grpc-js
 * server with nothing else), timed at its client in this process, as the edge's client is.
 */
import type { Logger } from '../../platform/logger.ts';
import type { Nats } from '../../platform/nats.ts';
import { readOrdered } from '../../platform/ordered-reader.ts';
import { publishAtRate } from './feed.ts';
import { Histogram } from './histogram.ts';
import { sleep } from './ipc.ts';

/** Wall-clock µs, comparable with the producer's `publish_us`. */
export const nowUs = (): number => (performance.timeOrigin + performance.now()) * 1_000;

/** 1,000 events/s for `seconds`, once the reader is in place; then the last events settle. */
export async function publishWindow(nats: Nats, seconds: number): Promise<void> {
  await sleep(300);
  const pub = publishAtRate(nats, 1_000);
  await sleep(seconds * 1_000);
  await pub.stop();
  await sleep(200);
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
  nats: Nats,
  seconds: number,
  log: Logger,
  open: (received: (publishUs: number) => void) => Promise<Relay>,
): Promise<Histogram> {
  const h = new Histogram();
  const relay = await open((publishUs) => h.record(nowUs() - publishUs));
  await readWindow(nats, seconds, log, (m) => relay.send(m.data));
  await relay.close();
  return h;
}

/**
 * The baseline: publish_us → receipt on a raw ordered consumer of MD from its end, over one
 * window. Nothing else reads the stream meanwhile; each payload's JSON is parsed, as a client
 * decodes each message.
 */
export async function rawLive(nats: Nats, seconds: number, log: Logger): Promise<Histogram> {
  const h = new Histogram();
  await readWindow(nats, seconds, log, (m) => {
    const t = nowUs();
    const o = JSON.parse(new TextDecoder().decode(m.data.subarray(m.data.indexOf(123)))) as {
      publish_us?: number;
    };
    if (o.publish_us) h.record(t - o.publish_us);
  });
  return h;
}

/** A raw ordered consumer of MD from its end, handing `onMessage` every event of one window. */
async function readWindow(
  nats: Nats,
  seconds: number,
  log: Logger,
  onMessage: (m: { data: Uint8Array }) => void,
): Promise<void> {
  const raw = readOrdered(
    nats,
    { stream: 'MD', filter: 'md.>', startSeq: (await nats.jsm.streams.info('MD')).state.last_seq + 1 },
    onMessage,
    log,
  );
  await publishWindow(nats, seconds);
  raw.stop();
}

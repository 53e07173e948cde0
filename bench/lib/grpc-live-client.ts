/**
 * The live client of `npm run bench -- grpc` in a process of its own (`GRPC_BENCH_LIVE_CLIENT=1`,
 * bench/lib/ipc.ts): one StreamEvents stream with the generated grpc-js client (decoding every
 * FeedMessage), timing `publish_us` → receipt of each trade on the publisher's clock. As in
 * production, where the client is on another machine, its decoding does not share the edge's
 * event loop; the edge's side of the bench still runs in the bench process.
 */
import type { ClientReadableStream } from '@grpc/grpc-js';
import { keyMetadata, priceClient } from '../../test/support/grpc.ts';
import { Histogram, type SerializedHistogram } from './histogram.ts';
import { serveWorker } from './ipc.ts';
import { clockSkewUs, nowUs } from './live-latency.ts';

/** A StreamEvents stream (no filter) calling `received` with each trade's `publish_us`. */
export function streamTrades(
  client: ReturnType<typeof priceClient>,
  received: (publishUs: number) => void,
): ClientReadableStream<unknown> {
  const call = client.StreamEvents({}, keyMetadata(null)) as ClientReadableStream<unknown>;
  call.on('data', (m: { trade?: { publish_us: number } }) => {
    if (m.trade) received(m.trade.publish_us);
  });
  call.on('error', () => {});
  return call;
}

let open: {
  client: ReturnType<typeof priceClient>;
  call: ClientReadableStream<unknown>;
  h: Histogram;
} | null = null;

/**
 * Opens the stream on `target`; resolves once its headers are in (the edge has it). `offsetUs`
 * turns this process's clock into the publisher's (LiveFeed `offsetFor` this process's `skew`).
 */
async function start({ target, offsetUs }: { target: string; offsetUs: number }): Promise<void> {
  const client = priceClient(target);
  const h = new Histogram();
  const call = streamTrades(client, (publishUs) => h.record(nowUs() + offsetUs - publishUs));
  open = { client, call, h };
  await new Promise((r) => call.once('metadata', r));
}

/** Ends the stream; its latencies (µs). */
function stop(): SerializedHistogram {
  if (!open) throw new Error('no stream open');
  const { client, call, h } = open;
  open = null;
  call.cancel();
  client.close();
  return h.serialize();
}

if (process.env.GRPC_BENCH_LIVE_CLIENT === '1') serveWorker({ start, stop, skew: clockSkewUs });

/**
 * The catch-up client of `npm run bench -- grpc`: one StreamEvents stream from after_seq 0 until
 * the message holding the stream's last event, with a real grpc-js client over HTTP/2, in two
 * kinds, both reported (bench/grpc.ts):
 * - `decode`: the method as the generated client has it, which decodes every FeedMessage into an object (protobufjs);
 * - `bytes`: the same method with a deserializer that keeps each message's bytes and reads its
 *   `seq` from them (the trade's or book's field 1, which the edge writes first), as the raw
 *   ordered consumer only counts its messages and disk-sync's client finds seqs by bytes. The
 *   first and the last message are decoded with the proto and checked (seq 1, then `last`);
 * - `batch`: as `bytes`, on a stream opened with `batch: true`: each `FeedMessage.batch` is
 *   walked by bytes (its messages' tags and lengths) and every message in it counted.
 * Runs in the bench process or, as a worker process (`GRPC_BENCH_CLIENT=1`, bench/lib/ipc.ts), in one of its own, where
 * the edge has the event loop to itself as it does in production. `window` sets the client's
 * HTTP/2 receive window (`grpc-node.flow_control_window`; 0: grpc-js's default, 64 KiB).
 */
import {
  type ClientReadableStream,
  credentials,
  Metadata,
  type MethodDefinition,
  makeGenericClientConstructor,
} from '@grpc/grpc-js';
import { BATCH_TAG, MESSAGE_TAG } from '../../gateways/grpc/batch-frames.ts';
import { packageDefinition, SERVICE_NAME } from '../../gateways/grpc/proto.ts';
import { serveWorker } from './ipc.ts';

export type ClientKind = 'decode' | 'bytes' | 'batch';
export type CatchUpRequest = { target: string; kind: ClientKind; last: number; window: number };
export type CatchUpResult = { kind: ClientKind; events: number; seconds: number; events_per_s: number };

type AnyMethod = MethodDefinition<unknown, unknown>;
const streamEvents = (packageDefinition[SERVICE_NAME] as unknown as Record<string, AnyMethod>)
  .StreamEvents as AnyMethod;
const asIs = (b: Buffer): Buffer => b;
/** The method as the generated client has it (decoding), and keeping the bytes. */
const DecodingClient = makeGenericClientConstructor({ StreamEvents: streamEvents }, 'Price');
const BytesClient = makeGenericClientConstructor(
  { StreamEvents: { ...streamEvents, responseDeserialize: asIs } },
  'PriceBytes',
);
type StreamClient = { StreamEvents(r: unknown, md: Metadata): ClientReadableStream<unknown>; close(): void };

/** A varint at `at`: [value, next offset]; values up to 2^53 (seqs are). */
function varintAt(b: Buffer, at: number): [number, number] {
  let v = 0;
  let scale = 1;
  for (;;) {
    const byte = b[at++];
    if (byte === undefined) return [-1, at];
    v += (byte & 127) * scale;
    if (byte < 128) return [v, at];
    scale *= 128;
  }
}

/** Each message of a FeedMessage: the messages of its batch, else itself. */
function messagesOf(b: Buffer): Buffer[] {
  if (b[0] !== BATCH_TAG) return [b];
  const out: Buffer[] = [];
  let [, at] = varintAt(b, 1);
  while (at < b.length && b[at] === MESSAGE_TAG) {
    const [len, from] = varintAt(b, at + 1);
    out.push(b.subarray(from, from + len));
    at = from + len;
  }
  return out;
}

/** The seq of a FeedMessage's trade (field 1) or book (field 2), read from its bytes; -1 for others. */
export function seqOfBytes(b: Buffer): number {
  if (b[0] !== 0x0a && b[0] !== 0x12) return -1;
  const [, at] = varintAt(b, 1);
  return b[at] === 0x08 ? (varintAt(b, at + 1)[0] as number) : seqOfDecoded(b);
}

function seqOfDecoded(b: Buffer): number {
  const m = streamEvents.responseDeserialize(b) as { trade?: { seq: number }; book?: { seq: number } };
  return (m.trade ?? m.book)?.seq ?? -1;
}

const options = (window: number) => (window > 0 ? { 'grpc-node.flow_control_window': window } : {});

export async function catchUp({ target, kind, last, window }: CatchUpRequest): Promise<CatchUpResult> {
  const Client = kind === 'decode' ? DecodingClient : BytesClient;
  const client = new Client(target, credentials.createInsecure(), options(window)) as unknown as StreamClient;
  let events = 0;
  let first: Buffer | null = null;
  let lastBytes: Buffer | null = null;
  let firstSeq = -1;
  let lastSeq = -1;
  const t0 = performance.now();
  const call = client.StreamEvents({ after_seq: 0, batch: kind === 'batch' }, new Metadata());
  await new Promise<void>((resolve, reject) => {
    call.on('error', reject);
    const one = (m: Buffer | { trade?: { seq: number }; book?: { seq: number } }) => {
      const seq = Buffer.isBuffer(m) ? seqOfBytes(m) : ((m.trade ?? m.book)?.seq ?? -1);
      if (seq < 0) return;
      events++;
      if (firstSeq < 0) {
        firstSeq = seq;
        if (Buffer.isBuffer(m)) first = m;
      }
      if (seq >= last) {
        lastSeq = seq;
        if (Buffer.isBuffer(m)) lastBytes = m;
        resolve();
      }
    };
    call.on('data', (m: Buffer | { trade?: { seq: number }; book?: { seq: number } }) => {
      if (!Buffer.isBuffer(m)) one(m);
      else for (const each of messagesOf(m)) one(each);
    });
  });
  const seconds = (performance.now() - t0) / 1_000;
  call.cancel();
  client.close();
  // The bytes client's first and last messages, decoded with the proto: the same seqs.
  if (first) firstSeq = seqOfDecoded(first);
  if (lastBytes) lastSeq = seqOfDecoded(lastBytes);
  if (firstSeq !== 1 || lastSeq !== last)
    throw new Error(`catch-up read seq ${firstSeq}..${lastSeq}, not 1..${last}`);
  if (events !== last) throw new Error(`catch-up delivered ${events} events, not ${last}`);
  return {
    kind,
    events,
    seconds: Math.round(seconds * 1_000) / 1_000,
    events_per_s: Math.round(events / seconds),
  };
}

// Started by bench/grpc.ts as a worker process (bench/lib/ipc.ts).
if (process.env.GRPC_BENCH_CLIENT === '1') serveWorker({ catchUp: (r: CatchUpRequest) => catchUp(r) });

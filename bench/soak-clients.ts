/**
 * The soak's steady clients on the gRPC and disk-sync edges, read on the raw wire: gRPC
 * price.PriceService/StreamEvents on grpc-js with `after_seq`, disk-sync a bare WebSocket with a
 * subscription `from_seq` (json or msgpack). Each keeps every sequence as it arrives on the wire,
 * repeats and gaps included (no client library drops a repeat before it is counted), and whenever
 * its stream ends or is refused connects to the next replica in turn with its last sequence. Each
 * counts its reconnections by cause (`grpc_status <code>`, `close_code <code>`) and the times a
 * cause was a server error (gRPC INTERNAL or UNKNOWN, disk-sync 1011: the transports' 5xx).
 */
import type { ClientReadableStream, ServiceError } from '@grpc/grpc-js';
import { unpack } from 'msgpackr';
import WebSocket from 'ws';
import type { ResumingReader } from '../test/support/cluster.ts';
import { keyMetadata, priceClient } from '../test/support/grpc.ts';

export type SoakClient = ResumingReader & {
  /** Reconnections by cause. */
  causes: Record<string, number>;
  /** When a reconnection's cause was a server error (ms since the epoch). */
  serverErrorsAt: number[];
};

const SERVER_ERRORS = new Set(['grpc_status 13', 'grpc_status 2', 'close_code 1011']);
const RETRY_MS = 200;

/** One connection: `ended` resolves with its cause once it is over. */
type Connection = { abort(): void; ended: Promise<string> };

function resuming(
  targets: () => string[],
  from: number,
  start: number,
  open: (target: string, after: number, push: (seq: number) => void) => Connection,
): SoakClient {
  const seqs: number[] = [];
  let stopped = false;
  let current: Connection | null = null;
  const client: SoakClient = {
    seqs,
    reconnects: 0,
    causes: {},
    serverErrorsAt: [],
    last: () => seqs.at(-1) ?? from,
    stop() {
      stopped = true;
      current?.abort();
    },
  };
  (async () => {
    for (let i = start; !stopped; i++) {
      const now = targets();
      const before = seqs.length;
      let cause = 'refused';
      try {
        current = open(now[i % now.length] as string, client.last(), (s) => seqs.push(s));
        cause = await current.ended;
      } catch (err) {
        cause = `failed ${(err as Error).message}`;
      }
      if (stopped) break;
      client.reconnects++;
      client.causes[cause] = (client.causes[cause] ?? 0) + 1;
      if (SERVER_ERRORS.has(cause)) client.serverErrorsAt.push(Date.now());
      if (seqs.length === before) await new Promise((r) => setTimeout(r, RETRY_MS));
    }
  })();
  return client;
}

/** StreamEvents (every coin) with `after_seq` on the gRPC replicas `targets` (host:port), from `targets[start]`. */
export function grpcClient(targets: string[], key: string, from: number, start: number): SoakClient {
  return resuming(
    () => targets,
    from,
    start,
    (target, after, push) => {
      const client = priceClient(target);
      const call: ClientReadableStream<Record<string, unknown>> = client.StreamEvents(
        { after_seq: after },
        keyMetadata(key),
      );
      call.on('data', (m: Record<string, unknown>) => {
        const seq = ((m.trade ?? m.book) as { seq?: number } | undefined)?.seq;
        if (seq !== undefined) push(Number(seq));
      });
      const ended = new Promise<string>((resolve) => {
        call.on('error', (err: ServiceError) => resolve(`grpc_status ${err.code}`));
        call.on('end', () => resolve('grpc_status 0'));
      }).finally(() => client.close());
      return { abort: () => call.cancel(), ended };
    },
  );
}

/** A disk-sync WebSocket subscribed to everything `from_seq`, on the replicas `urls()` (ws://) in turn. */
export function diskClient(
  urls: () => string[],
  key: string,
  from: number,
  start: number,
  encoding: 'json' | 'msgpack',
): SoakClient {
  return resuming(urls, from, start, (url, after, push) => {
    const ws = new WebSocket(`${url}/`, { headers: { 'x-api-key': key }, maxPayload: 64 * 1024 * 1024 });
    ws.on('open', () => ws.send(JSON.stringify({ op: 'subscribe', id: 'soak', from_seq: after, encoding })));
    ws.on('message', (data: Buffer, isBinary: boolean) => {
      const text = isBinary ? '' : data.toString();
      if (!isBinary && !text.startsWith('[')) return; // a control message
      const events = (isBinary ? unpack(data) : JSON.parse(text)) as { seq: number }[];
      for (const e of events) push(e.seq);
    });
    ws.on('error', () => {});
    const ended = new Promise<string>((resolve) =>
      ws.once('close', (code: number) => resolve(`close_code ${code}`)),
    );
    return { abort: () => ws.terminate(), ended };
  });
}

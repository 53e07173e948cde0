import type { ResumingReader } from '../test/support/cluster.ts';
import { diskSeqStream, grpcSeqStream } from '../test/support/resuming-transports.ts';

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
    (target, after, push) => grpcSeqStream(target, key, after, push),
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
  return resuming(urls, from, start, (url, after, push) => diskSeqStream(url, key, after, encoding, push));
}

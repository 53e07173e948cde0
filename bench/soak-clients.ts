/**
 * The soak's steady clients on the gRPC and disk-sync edges: the project's own client
 * (`streamGrpc` resuming with `after_seq`, `streamDisk` resuming with `from_seq`, both on the
 * resuming core clients/typescript/src/resuming-stream.ts), as users hold it, spread over the
 * edge's replicas. Each keeps the sequences its iterator yields, counts its reconnections by cause
 * (`<catalogue code>/<grpc status or close code>`) and the times a cause was a server error
 * (gRPC INTERNAL or UNKNOWN, disk-sync 1011: the transports' 5xx).
 *
 * What these counts can and cannot see: the iterator drops a sequence at or below its position,
 * so a repeat sent by the server is not yielded (the user never sees it; the raw-wire check is
 * test/fault/cluster-clients.test.ts); a gap or a reordering is yielded, so it is counted.
 */
import { type OpenSocket, openSocket, streamDisk } from '../clients/typescript/src/disk.ts';
import type { MdpError } from '../clients/typescript/src/errors.ts';
import { streamGrpc } from '../clients/typescript/src/grpc.ts';
import type { ResumingStream } from '../clients/typescript/src/resuming-stream.ts';
import type { ResumingReader } from '../test/support/cluster.ts';

export type SoakClient = ResumingReader & {
  /** Reconnections by cause. */
  causes: Record<string, number>;
  /** When a reconnection's cause was a server error (ms since the epoch). */
  serverErrorsAt: number[];
  /** The iterator's own end before `stop()` (a non-retryable error), else null. */
  endedWith: string | null;
};

const SERVER_ERRORS = new Set(['grpc_status 13', 'grpc_status 2', 'close_code 1011']);

function causeOf(error: MdpError): { key: string; server: boolean } {
  const d = (error.details ?? {}) as { grpc_status?: number; close_code?: number };
  const wire = d.grpc_status !== undefined ? `grpc_status ${d.grpc_status}` : `close_code ${d.close_code}`;
  return { key: `${error.code}/${wire}`, server: SERVER_ERRORS.has(wire) };
}

/** Reads `stream` to its end into a SoakClient. */
function drain(stream: ResumingStream, from: number): SoakClient {
  const seqs: number[] = [];
  const client: SoakClient = {
    seqs,
    reconnects: 0,
    causes: {},
    serverErrorsAt: [],
    endedWith: null,
    last: () => seqs.at(-1) ?? from,
    stop: () => stream.close(),
  };
  (async () => {
    try {
      for await (const item of stream) {
        if (item.type === 'event') seqs.push(item.seq);
        else if (item.type === 'reconnecting') {
          client.reconnects++;
          const cause = causeOf(item.error);
          client.causes[cause.key] = (client.causes[cause.key] ?? 0) + 1;
          if (cause.server) client.serverErrorsAt.push(Date.now());
        }
      }
    } catch (err) {
      client.endedWith =
        err instanceof Error ? `${(err as MdpError).code ?? ''} ${err.message}` : String(err);
    }
  })();
  return client;
}

/**
 * StreamEvents on every replica in `targets` (host:port), starting on `targets[start]`: one
 * grpc-js target naming them all (`ipv4:a,b`, pick_first), so a reconnection goes to the first
 * replica that answers. Replicas are restarted on their own port (soak-faults.ts).
 */
export function grpcClient(targets: string[], key: string, from: number, start: number): SoakClient {
  const ordered = targets.map((_, i) => targets[(start + i) % targets.length] as string);
  return drain(streamGrpc({ target: `ipv4:${ordered.join(',')}`, key, from }), from);
}

/** Each connection on the next live replica in turn, starting with `urls()[start]`. */
function rotating(urls: () => string[], start: number): OpenSocket {
  let next = start;
  return (_url, key, on) => {
    const now = urls();
    return openSocket(now[next++ % now.length] as string, key, on);
  };
}

/** A disk-sync WebSocket subscribed to everything, resuming on the replicas `urls()` (ws://). */
export function diskClient(
  urls: () => string[],
  key: string,
  from: number,
  start: number,
  encoding: 'json' | 'msgpack',
): SoakClient {
  const url = urls()[start % urls().length] as string;
  return drain(streamDisk({ url, key, from, encoding, openSocket: rotating(urls, start) }), from);
}

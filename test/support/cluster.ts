/** Helpers of the cluster, fault and soak tests: reading a unified stream by sequence. */
import { openSse } from './sse.ts';

/**
 * Opens `url` with `Last-Event-ID: from` and resolves with the ids of the first `count` events
 * (their stream sequences), then closes the stream. Rejects if the stream ends first, or (given
 * `timeoutMs`) if the events have not all come within it.
 */
export async function readSequences(
  url: string,
  key: string,
  from: number,
  count: number,
  timeoutMs?: number,
): Promise<number[]> {
  const seqs: number[] = [];
  let done = () => {};
  const enough = new Promise<void>((r) => (done = r));
  const sse = await openSse(
    url,
    (m) => {
      if (m.event !== 'message' || m.id === null) return;
      seqs.push(Number(m.id));
      if (seqs.length === count) done();
    },
    { 'x-api-key': key, 'last-event-id': String(from) },
  );
  if (sse.status !== 200) throw new Error(`${url}: HTTP ${sse.status}`);
  let timer: NodeJS.Timeout | undefined;
  const late =
    timeoutMs === undefined
      ? new Promise<never>(() => {})
      : new Promise<never>((_, reject) => {
          timer = setTimeout(
            () => reject(new Error(`${url}: ${seqs.length} of ${count} events in ${timeoutMs} ms`)),
            timeoutMs,
          );
        });
  try {
    await Promise.race([
      enough,
      late,
      sse.done.then(() => Promise.reject(new Error(`${url}: ended after ${seqs.length}`))),
    ]);
  } finally {
    clearTimeout(timer);
    sse.abort();
  }
  return seqs.slice(0, count);
}

/** A client that reads a unified stream and resumes after every cut from its own last position. */
export type ResumingReader = {
  seqs: number[];
  /** Times its stream ended or was refused and it connected again. */
  reconnects: number;
  /** How each connection ended (e.g. `grpc_status 14`, `close_code 1001`), where kept. */
  ends?: string[];
  /** When a connection was refused with a server error (HTTP 5xx; ms since the epoch), where kept. */
  serverErrorsAt?: number[];
  last(): number;
  stop(): void;
};

/**
 * Reads `urls[start]` with `Last-Event-ID: from` (`urls` may be a function: replicas that come and
 * go); whenever the stream ends (gateway gone, terminal
 * event) or is refused, reconnects to the next URL in turn with its last sequence, as an
 * EventSource with a list of replicas would (waiting `retryMs` after a refusal).
 */
export function resumingReader(
  urls: string[] | (() => string[]),
  key: string,
  from: number,
  start = 0,
  retryMs = 200,
): ResumingReader & { serverErrorsAt: number[] } {
  const list = typeof urls === 'function' ? urls : () => urls;
  const seqs: number[] = [];
  let stopped = false;
  let current: { abort(): void } | null = null;
  const reader: ResumingReader & { serverErrorsAt: number[] } = {
    seqs,
    reconnects: 0,
    serverErrorsAt: [],
    last: () => seqs.at(-1) ?? from,
    stop() {
      stopped = true;
      current?.abort();
    },
  };
  (async () => {
    for (let i = start; !stopped; i++) {
      const now = list();
      const url = now[i % now.length] as string;
      try {
        const sse = await openSse(
          url,
          (m) => {
            if (m.event === 'message' && m.id !== null) seqs.push(Number(m.id));
          },
          { 'x-api-key': key, 'last-event-id': String(reader.last()) },
        );
        current = sse;
        if (stopped) sse.abort();
        if (sse.status === 200) await sse.done;
        else {
          if (sse.status >= 500) reader.serverErrorsAt.push(Date.now());
          await new Promise((r) => setTimeout(r, retryMs));
        }
      } catch {
        await new Promise((r) => setTimeout(r, retryMs));
      }
      if (!stopped) reader.reconnects++;
    }
  })();
  return reader;
}

/** The sequences `from + 1 … to`, what a reader that missed nothing and repeated nothing holds. */
export const seqRange = (from: number, to: number): number[] =>
  Array.from({ length: Math.max(0, to - from) }, (_, i) => from + 1 + i);

/**
 * Resuming clients of the gRPC and disk-sync edges for the fault tests, as `resumingReader`
 * (cluster.ts) is for SSE: each keeps every sequence it receives, as received (no dedupe, so a
 * repeat or a gap stays visible to the test), and whenever its stream ends or is refused it
 * connects to the next replica in turn with its own last sequence (gRPC `after_seq`, disk-sync
 * `from_seq`), waiting `retryMs` first when that connection delivered nothing.
 */
import type { ClientReadableStream } from '@grpc/grpc-js';
import { unpack } from 'msgpackr';
import WebSocket from 'ws';
import type { ResumingReader } from './cluster.ts';
import { keyMetadata, priceClient } from './grpc.ts';

type Connection = { abort(): void; ended: Promise<unknown> };

/** The reconnect loop both readers share: `open(target, after, push)` is one connection. */
function resuming(
  targets: string[],
  from: number,
  start: number,
  retryMs: number,
  open: (target: string, after: number, push: (seq: number) => void) => Connection,
): ResumingReader {
  const seqs: number[] = [];
  let stopped = false;
  let current: Connection | null = null;
  const reader: ResumingReader = {
    seqs,
    reconnects: 0,
    ends: [],
    last: () => seqs.at(-1) ?? from,
    stop() {
      stopped = true;
      current?.abort();
    },
  };
  (async () => {
    for (let i = start; !stopped; i++) {
      const before = seqs.length;
      try {
        current = open(targets[i % targets.length] as string, reader.last(), (s) => seqs.push(s));
        const how = await current.ended;
        if (!stopped) reader.ends?.push(String(how));
      } catch {}
      if (stopped) break;
      if (seqs.length === before) await new Promise((r) => setTimeout(r, retryMs));
      reader.reconnects++;
    }
  })();
  return reader;
}

/** price.PriceService/StreamEvents (every coin) with `after_seq`, on gRPC `targets` (host:port). */
export function resumingGrpcReader(
  targets: string[],
  key: string,
  from: number,
  start = 0,
  retryMs = 200,
): ResumingReader {
  return resuming(targets, from, start, retryMs, (target, after, push) =>
    grpcSeqStream(target, key, after, push),
  );
}

/**
 * One StreamEvents call (every coin) after `after` on `target`, each event's sequence to `push`;
 * `ended` says how it ended (`grpc_status <code>`, 0 for OK).
 */
export function grpcSeqStream(
  target: string,
  key: string,
  after: number,
  push: (seq: number) => void,
): { abort(): void; ended: Promise<string> } {
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
    call.on('error', (err: { code?: number; details?: string }) =>
      resolve(`grpc_status ${err.code}${err.details ? ` ${err.details}` : ''}`),
    );
    call.on('end', () => resolve('grpc_status 0'));
  }).finally(() => client.close());
  return { abort: () => call.cancel(), ended };
}

/**
 * A disk-sync WebSocket on `urls` (ws://host:port) with one subscription to everything from
 * `from_seq`, in `encoding` (json: text frames holding arrays; msgpack: binary frames).
 */
export function resumingDiskReader(
  urls: string[],
  key: string,
  from: number,
  encoding: 'json' | 'msgpack',
  start = 0,
  retryMs = 200,
): ResumingReader {
  return resuming(urls, from, start, retryMs, (url, after, push) =>
    diskSeqStream(url, key, after, encoding, push),
  );
}

/**
 * One disk-sync connection subscribed to everything after `after` on `url` (ws://), each event's
 * sequence to `push`; `ended` says how it closed (`close_code <code>`).
 */
export function diskSeqStream(
  url: string,
  key: string,
  after: number,
  encoding: 'json' | 'msgpack',
  push: (seq: number) => void,
): { abort(): void; ended: Promise<string> } {
  const ws = new WebSocket(`${url}/`, { headers: { 'x-api-key': key }, maxPayload: 64 * 1024 * 1024 });
  ws.on('open', () => ws.send(JSON.stringify({ op: 'subscribe', id: 'reader', from_seq: after, encoding })));
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
}

/**
 * 'ok' when `seqs` is exactly `from + 1 … to` (every sequence once, in order), else what is wrong
 * in a line (a readable failure instead of a diff of thousands of numbers).
 */
export function exactlyOnce(seqs: number[], from: number, to: number): string {
  const seen = new Set<number>();
  let repeated = 0;
  let disordered = 0;
  for (let i = 0; i < seqs.length; i++) {
    const s = seqs[i] as number;
    if (seen.has(s)) repeated++;
    seen.add(s);
    if (i > 0 && s <= (seqs[i - 1] as number)) disordered++;
  }
  let missing = 0;
  let firstMissing: number | null = null;
  for (let s = from + 1; s <= to; s++)
    if (!seen.has(s)) {
      missing++;
      firstMissing ??= s;
    }
  const extra = [...seen].filter((s) => s <= from || s > to).length;
  if (!missing && !repeated && !disordered && !extra) return 'ok';
  return `${seqs.length} received for ${to - from}: ${missing} missing (first ${firstMissing}), ${repeated} repeated, ${disordered} out of order, ${extra} outside ${from + 1}..${to}`;
}

/**
 * The clients of `npm run bench -- replay`, one per streaming transport, each reading either a
 * catch-up (resume after 0 until the stream's last event) or a replay by time (`from`/`to` at
 * speed max, until the server ends it after `replay_complete`) with the same code, so the ratio
 * of the two is the replay's cost alone:
 * - SSE: node:http, counting `id:` lines in the bytes (no text decoding, no JSON parse);
 * - gRPC StreamEvents: grpc-js with a deserializer that keeps bytes, seqs read from them;
 * - disk-sync: ws (JSON encoding), counting events in each array message.
 * `firstEvent` times a replay from a given instant to its first event (then cancels it).
 */

import http from 'node:http';
import { credentials, Metadata, type MethodDefinition, makeGenericClientConstructor } from '@grpc/grpc-js';
import WebSocket from 'ws';
import { packageDefinition, SERVICE_NAME } from '../../gateways/grpc/proto.ts';
import { seqOfBytes } from './grpc-catchup-client.ts';

export type Read = { events: number; seconds: number; events_per_s: number };
/** A catch-up to `last`, or a replay by time (the server ends it). */
export type ReadSpec = { kind: 'catchup'; last: number } | { kind: 'replay'; from: number; to: number };
export type Transport = 'sse' | 'grpc' | 'disksync';

export const rate = (events: number, t0: number): Read => {
  const seconds = (performance.now() - t0) / 1000;
  return { events, seconds: Math.round(seconds * 1000) / 1000, events_per_s: Math.round(events / seconds) };
};

type AnyMethod = MethodDefinition<unknown, unknown>;
const streamEvents = (packageDefinition[SERVICE_NAME] as unknown as Record<string, AnyMethod>)
  .StreamEvents as AnyMethod;
const BytesClient = makeGenericClientConstructor(
  { StreamEvents: { ...streamEvents, responseDeserialize: (b: Buffer) => b } },
  'PriceReplayBytes',
);
type StreamCall = {
  on(e: 'data', f: (b: Buffer) => void): void;
  on(e: 'status' | 'error' | 'end', f: (x?: unknown) => void): void;
  cancel(): void;
};
type BytesStreams = { StreamEvents(r: unknown, md: Metadata): StreamCall; close(): void };

/** Where a first-event sample starts: a replay from an instant, or a resume after a sequence. */
export type Start = { from: number } | { after: number };

function sseUrl(base: string, spec: ReadSpec | { kind: 'first'; start: Start }): string {
  if (spec.kind === 'catchup') return `${base}/api/v1/unified/stream?last_event_id=0`;
  if (spec.kind === 'first')
    return 'from' in spec.start
      ? `${base}/api/v1/unified/stream?from=${spec.start.from}`
      : `${base}/api/v1/unified/stream?last_event_id=${spec.start.after}`;
  return `${base}/api/v1/unified/stream?from=${spec.from}&to=${spec.to}`;
}

/** A line's start, `\nid: `; the stream's first line is preceded by the carry's `\n`. */
const ID_LINE = Buffer.from('\nid: ');

/** The decimal number at `at` (an SSE id). */
function idAt(b: Buffer, at: number): number {
  let n = 0;
  for (let d = (b[at] as number) - 0x30; d >= 0 && d <= 9; d = (b[++at] as number) - 0x30) n = n * 10 + d;
  return n;
}

/**
 * node:http, counting `id:` lines in the bytes: with fetch and a TextDecoderStream the client
 * took a core's third at catch-up speed, on the two cores the edge and nats-server share.
 */
function readSse(base: string, spec: ReadSpec): Promise<Read> {
  const t0 = performance.now();
  const last = spec.kind === 'catchup' ? spec.last : Number.POSITIVE_INFINITY;
  return new Promise((resolve, reject) => {
    const req = http.get(sseUrl(base, spec), { headers: { accept: 'text/event-stream' } }, (res) => {
      if (res.statusCode !== 200) {
        res.resume();
        reject(new Error(`SSE ${res.statusCode}`));
        return;
      }
      let events = 0;
      let carry = Buffer.from('\n');
      res.on('data', (chunk: Buffer) => {
        const bytes = Buffer.concat([carry, chunk]);
        // Only lines a newline closes are counted; the last, open one is carried with its `\n`.
        const open = bytes.lastIndexOf(10);
        let lastLine = -1;
        for (let at = bytes.indexOf(ID_LINE); at >= 0 && at < open; at = bytes.indexOf(ID_LINE, at + 5)) {
          events++;
          lastLine = at;
        }
        carry = bytes.subarray(open);
        // A catch-up ends at the event whose id is the stream's last: the newest id read so far.
        if (lastLine >= 0 && idAt(bytes, lastLine + ID_LINE.length) >= last) {
          resolve(rate(events, t0));
          req.destroy();
        }
      });
      res.once('end', () => resolve(rate(events, t0)));
      res.once('error', reject);
    });
    req.once('error', reject);
  });
}

function readGrpc(target: string, spec: ReadSpec): Promise<Read> {
  const client = new BytesClient(target, credentials.createInsecure()) as unknown as BytesStreams;
  const t0 = performance.now();
  let events = 0;
  const request =
    spec.kind === 'catchup'
      ? { after_seq: 0, batch: true }
      : { start_ms: spec.from, end_ms: spec.to, batch: true };
  return new Promise((resolve, reject) => {
    const call = client.StreamEvents(request, new Metadata());
    const done = (err?: Error) => {
      client.close();
      if (err) reject(err);
      else resolve(rate(events, t0));
    };
    call.on('data', (b: Buffer) => {
      for (const m of messagesOf(b)) {
        const seq = seqOfBytes(m);
        if (seq < 0) continue;
        events++;
        if (spec.kind === 'catchup' && seq >= spec.last) {
          call.cancel();
          done();
        }
      }
    });
    call.on('error', (e) => {
      if (spec.kind === 'catchup' && events > 0) return;
      done(e as Error);
    });
    call.on('status', () => {
      if (spec.kind === 'replay') done();
    });
  });
}

/** Each message of a FeedMessage batch (field 7), else the message itself. */
function messagesOf(b: Buffer): Buffer[] {
  if (b[0] !== 0x3a) return [b];
  const out: Buffer[] = [];
  let at = 1;
  at = skipVarint(b, at);
  while (at < b.length && b[at] === 0x0a) {
    const [len, from] = varint(b, at + 1);
    out.push(b.subarray(from, from + len));
    at = from + len;
  }
  return out;
}

function varint(b: Buffer, at: number): [number, number] {
  let v = 0;
  let scale = 1;
  for (;;) {
    const byte = b[at++] as number;
    v += (byte & 127) * scale;
    if (byte < 128) return [v, at];
    scale *= 128;
  }
}
const skipVarint = (b: Buffer, at: number): number => varint(b, at)[1];

function readDisk(url: string, spec: ReadSpec): Promise<Read> {
  const t0 = performance.now();
  let events = 0;
  const ws = new WebSocket(url, { maxPayload: 64 * 1024 * 1024 });
  return new Promise((resolve, reject) => {
    ws.once('open', () =>
      ws.send(
        JSON.stringify(
          spec.kind === 'catchup'
            ? { op: 'subscribe', id: 'c', from_seq: 0 }
            : { op: 'subscribe', id: 'r', from_time: spec.from, to_time: spec.to },
        ),
      ),
    );
    ws.on('message', (data: Buffer) => {
      if (data[0] === 0x5b) {
        // `[{"seq":…},…]`: one `{"seq":` per event.
        for (let at = data.indexOf('{"seq":'); at >= 0; at = data.indexOf('{"seq":', at + 7)) events++;
        return;
      }
      if (spec.kind === 'catchup' && data.includes('"caught_up"')) ws.close();
    });
    ws.once('close', () => resolve(rate(events, t0)));
    ws.once('error', reject);
  });
}

export function read(transport: Transport, address: string, spec: ReadSpec): Promise<Read> {
  if (transport === 'sse') return readSse(address, spec);
  if (transport === 'grpc') return readGrpc(address, spec);
  return readDisk(address, spec);
}

/**
 * Milliseconds from asking for a replay from an instant (or a resume after a sequence) to its
 * first event; the stream is then cancelled.
 */
/** gRPC channels kept open for `firstEvent(…, { open: true })`, by address. */
const openChannels = new Map<string, BytesStreams>();

/**
 * `open`: on a gRPC channel already open (one per address, kept), as a client that holds one
 * asks; otherwise a new connection each time, as SSE and disk-sync always make.
 */
export async function firstEvent(
  transport: Transport,
  address: string,
  start: Start,
  opts: { open?: boolean } = {},
): Promise<number> {
  const t0 = performance.now();
  if (transport === 'sse') {
    const ctl = new AbortController();
    const res = await fetch(sseUrl(address, { kind: 'first', start }), { signal: ctl.signal });
    if (!res.body) throw new Error(`SSE ${res.status}`);
    const reader = res.body.pipeThrough(new TextDecoderStream()).getReader();
    for (;;) {
      const { value, done } = await reader.read();
      if (done || value.includes('\nid: ') || value.startsWith('id: ')) break;
    }
    const ms = performance.now() - t0;
    ctl.abort();
    return ms;
  }
  if (transport === 'grpc') {
    const open = opts.open ? openChannels.get(address) : undefined;
    const client =
      open ?? (new BytesClient(address, credentials.createInsecure()) as unknown as BytesStreams);
    if (opts.open && !open) openChannels.set(address, client);
    return new Promise((resolve) => {
      const call = client.StreamEvents(
        'from' in start ? { start_ms: start.from } : { after_seq: start.after },
        new Metadata(),
      );
      call.on('error', () => {});
      call.on('data', (b: Buffer) => {
        if (seqOfBytes(b) < 0) return;
        const ms = performance.now() - t0;
        call.cancel();
        if (!opts.open) client.close();
        resolve(ms);
      });
    });
  }
  const ws = new WebSocket(address);
  return new Promise((resolve, reject) => {
    ws.once('open', () =>
      ws.send(
        JSON.stringify({
          op: 'subscribe',
          id: 'f',
          ...('from' in start ? { from_time: start.from } : { from_seq: start.after }),
        }),
      ),
    );
    ws.on('message', (data: Buffer) => {
      if (data[0] !== 0x5b) return;
      const ms = performance.now() - t0;
      ws.terminate();
      resolve(ms);
    });
    ws.once('error', reject);
  });
}

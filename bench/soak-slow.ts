/**
 * The soak's slow clients, one per transport: each opens a stream of everything from now with a
 * key of its own, stops reading for `pauseMs` (the edge's buffers and the socket fill up), then
 * reads again and waits up to 15 s for the end the edge owes a client that fell behind (SSE: the
 * response closed; gRPC: a status with `x-error-code`, or CANCELLED when the edge reset a stream
 * still paused after its close grace; disk-sync: a close code). Each then resumes from the last
 * sequence it got (SSE `Last-Event-ID`, gRPC `after_seq`, disk-sync `from_seq`) and reads on for a
 * while: the resumed stream must go on from the next sequence without a gap (`resumed.exact`).
 * The soak judges both (soak-faults.ts): ended by the server, and resumed exactly.
 */
import { get } from 'node:http';
import type { ServiceError } from '@grpc/grpc-js';
import { unpack } from 'msgpackr';
import WebSocket from 'ws';
import { readSequences } from '../test/support/cluster.ts';
import { keyMetadata, seqsOf, trailers } from '../test/support/grpc.ts';
import { ownConnectionClient } from '../test/support/grpc-edge.ts';
import { sleep } from './lib/ipc.ts';

const AFTER_RESUME_MS = 15_000;

/** A resumed stream: from `after_seq`, `exact` when its events run `after_seq + 1`, `+ 2`, … without a gap. */
export type Resumed = {
  after_seq: number;
  first: number | null;
  events: number;
  exact: boolean;
  error?: string;
};

export type SlowResult = {
  ended_by_server: boolean;
  how?: string;
  received_bytes: number;
  /** The events the slow client got, whether in increasing order, and its resumption. */
  received_events?: number;
  in_order?: boolean;
  resumed?: Resumed;
};

/** Events read on a resumed SSE stream. */
const RESUME_EVENTS = 200;

const increasing = (seqs: number[]) => seqs.every((s, i) => i === 0 || s > (seqs[i - 1] as number));

/** Waits for `ended` at most AFTER_RESUME_MS once `resume` ran `pauseMs` after the start. */
/** What a slow client saw: how the server ended it, what it got, and its resume from its last sequence. */
async function slowResult(
  how: string | null,
  bytes: number,
  seqs: number[],
  resume: (last: number) => Promise<Resumed>,
): Promise<SlowResult> {
  const last = seqs.at(-1);
  const resumed = how !== null && last !== undefined ? await resume(last) : undefined;
  return {
    ended_by_server: how !== null,
    ...(how ? { how } : {}),
    received_bytes: bytes,
    received_events: seqs.length,
    in_order: increasing(seqs),
    ...(resumed ? { resumed } : {}),
  };
}

async function pauseThenRead(
  pauseMs: number,
  resume: () => void,
  ended: Promise<string>,
): Promise<string | null> {
  let how: string | null = null;
  void ended.then((h) => (how = h));
  await sleep(pauseMs);
  resume();
  return Promise.race([ended, sleep(AFTER_RESUME_MS).then(() => how)]);
}

/** A unified SSE stream (`url`) whose response is paused; its event ids are read off the raw text. */
export async function slowSse(url: string, key: string, pauseMs: number): Promise<SlowResult> {
  let bytes = 0;
  let text = '';
  const ended = await new Promise<{ how: string | null; error?: string }>((resolve) => {
    const req = get(url, { headers: { 'x-api-key': key } }, (res) => {
      res.pause();
      res.on('data', (c: Buffer) => {
        bytes += c.length;
        text += c.toString();
      });
      const closed = new Promise<string>((r) => res.once('close', () => r(`closed, HTTP ${res.statusCode}`)));
      void pauseThenRead(pauseMs, () => res.resume(), closed).then((how) => {
        req.destroy();
        resolve({ how });
      });
    });
    req.on('error', (err) => resolve({ how: null, error: err.message }));
  });
  // Complete blocks only: `id: <seq>` lines of the events received.
  const blocks = text.slice(0, text.lastIndexOf('\n\n') + 2).split('\n\n');
  const seqs = blocks.flatMap((b) => {
    const id = /^id: ?(\d+)$/m.exec(b);
    return id ? [Number(id[1])] : [];
  });
  const last = seqs.at(-1);
  let resumed: Resumed | undefined;
  if (ended.how !== null && last !== undefined) {
    try {
      const got = await readSequences(url, key, last, RESUME_EVENTS, 30_000);
      resumed = {
        after_seq: last,
        first: got[0] ?? null,
        events: got.length,
        exact: got.every((s, i) => s === last + 1 + i),
      };
    } catch (err) {
      resumed = { after_seq: last, first: null, events: 0, exact: false, error: (err as Error).message };
    }
  }
  return {
    ended_by_server: ended.how !== null,
    ...(ended.how ? { how: ended.how } : ended.error ? { how: ended.error } : {}),
    received_bytes: bytes,
    received_events: seqs.length,
    in_order: increasing(seqs),
    ...(resumed ? { resumed } : {}),
  };
}

/**
 * StreamEvents on its own HTTP/2 connection to `target` (host:port), paused after its first read.
 * The read matters: grpc-js pauses the call's HTTP/2 stream only when it hands a message to the
 * call's Readable, which it does once the Readable has asked (`_read`, i.e. a read was started). A
 * call paused before any read never asks, so grpc-js decodes every DATA frame into its own unbounded
 * queue and keeps granting the window: the server is never held back (a bare grpc-js server wrote
 * 10-80 MB in 4 s to such a client; one that had started reading held it at 64-96 KiB: 16 messages
 * in the Readable plus the 64 KiB stream window). It reads its first event, as a real consumer
 * that reads and then stops does, and pauses. Once ended, the stream is resumed from the last
 * sequence the client got (`after_seq`), which must go on from the next one without a gap. Ended
 * either way: by the edge's terminal status, or, paused past the edge's close grace after it, by
 * the edge's reset (CANCELLED), when grpc-js drops the messages it had queued: the sequence read
 * first is still there to resume from (paused from before its first event, such a client had none).
 */
export async function slowGrpc(target: string, key: string, pauseMs: number): Promise<SlowResult> {
  const client = ownConnectionClient(target);
  const call = client.StreamEvents({}, keyMetadata(key));
  let bytes = 0;
  const seqs: number[] = [];
  let read = () => {};
  const firstRead = new Promise<void>((r) => (read = r));
  call.on('data', (m: Record<string, unknown>) => {
    bytes += JSON.stringify(m).length;
    seqs.push(...seqsOf([m]));
    if (seqs.length > 0) read();
  });
  const ended = new Promise<string>((r) => {
    call.on('error', (err: ServiceError) => r(`status ${err.code} ${trailers(err)['x-error-code'] ?? ''}`));
    call.on('end', () => r('ended'));
  });
  await Promise.race([firstRead, ended]);
  call.pause();
  const how = await pauseThenRead(pauseMs, () => call.resume(), ended);
  call.cancel();
  client.close();
  return slowResult(how, bytes, seqs, (last) => resumeGrpc(target, key, last));
}

/** How long a resumed gRPC stream is read to check that it goes on from where the slow one ended. */
const RESUME_READ_MS = 3_000;

/** StreamEvents from `after_seq` = `last` for RESUME_READ_MS: its first sequence and whether they run without a gap. */
async function resumeGrpc(target: string, key: string, last: number): Promise<Resumed> {
  const client = ownConnectionClient(target);
  const call = client.StreamEvents({ after_seq: last }, keyMetadata(key));
  const seqs: number[] = [];
  call.on('data', (m: Record<string, unknown>) => seqs.push(...seqsOf([m])));
  const failed = new Promise<string>((r) => call.on('error', (err: ServiceError) => r(err.message)));
  const error = await Promise.race([failed, sleep(RESUME_READ_MS).then(() => null)]);
  call.cancel();
  client.close();
  const exact = seqs.length > 0 && seqs.every((s, i) => s === last + 1 + i);
  return { after_seq: last, first: seqs[0] ?? null, events: seqs.length, exact, ...(error ? { error } : {}) };
}

/** The sequences in a disk-sync data frame (json: a text array; msgpack: binary), none in a control message. */
function diskSeqs(data: Buffer, isBinary: boolean): number[] {
  const text = isBinary ? '' : data.toString();
  if (!isBinary && !text.startsWith('[')) return [];
  return ((isBinary ? unpack(data) : JSON.parse(text)) as { seq: number }[]).map((e) => e.seq);
}

/** A disk-sync WebSocket (`url`, ws://) subscribed to everything (json), paused once subscribed. */
export async function slowDisk(url: string, key: string, pauseMs: number): Promise<SlowResult> {
  const ws = new WebSocket(`${url}/`, { headers: { 'x-api-key': key } });
  let bytes = 0;
  const seqs: number[] = [];
  ws.on('message', (d: Buffer, isBinary: boolean) => {
    bytes += d.length;
    seqs.push(...diskSeqs(d, isBinary));
  });
  ws.on('error', () => {});
  const ended = new Promise<string>((r) => ws.once('close', (code: number) => r(`close ${code}`)));
  ws.once('open', () => {
    ws.send(JSON.stringify({ op: 'subscribe', id: 'slow', encoding: 'json' }));
    ws.pause();
  });
  const how = await pauseThenRead(pauseMs, () => ws.resume(), ended);
  ws.terminate();
  return slowResult(how, bytes, seqs, (last) => resumeDisk(url, key, last));
}

/** A disk-sync subscription `from_seq` = `last` read for RESUME_READ_MS: whether it goes on without a gap. */
async function resumeDisk(url: string, key: string, last: number): Promise<Resumed> {
  const ws = new WebSocket(`${url}/`, { headers: { 'x-api-key': key } });
  const seqs: number[] = [];
  let error: string | undefined;
  ws.on('open', () =>
    ws.send(JSON.stringify({ op: 'subscribe', id: 'resumed', from_seq: last, encoding: 'json' })),
  );
  ws.on('message', (d: Buffer, isBinary: boolean) => seqs.push(...diskSeqs(d, isBinary)));
  ws.on('error', (err) => (error = err.message));
  await sleep(RESUME_READ_MS);
  ws.terminate();
  const exact = seqs.length > 0 && seqs.every((s, i) => s === last + 1 + i);
  return { after_seq: last, first: seqs[0] ?? null, events: seqs.length, exact, ...(error ? { error } : {}) };
}

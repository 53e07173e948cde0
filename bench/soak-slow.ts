/**
 * The soak's slow clients, one per transport: each opens a stream of everything from now with a
 * key of its own, stops reading for `pauseMs` (the edge's buffers and the socket fill up), then
 * reads again and waits up to 15 s for the end the edge owes a client that fell behind (SSE: the
 * response closed; gRPC: a status with `x-error-code`, or CANCELLED when the edge reset a stream
 * still paused after its close grace; disk-sync: a close code). The stream is then dropped (gRPC:
 * resumed from its last sequence and checked). Reported, not judged: at a low event rate the
 * edge's bound may not be reached.
 */

import { get } from 'node:http';
import type { ServiceError } from '@grpc/grpc-js';
import WebSocket from 'ws';
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
  /** gRPC only: the events the slow client got, whether in increasing order, and its resumption. */
  received_events?: number;
  in_order?: boolean;
  resumed?: Resumed;
};

/** Waits for `ended` at most AFTER_RESUME_MS once `resume` ran `pauseMs` after the start. */
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

/** A unified SSE stream (`url`) whose response is paused. */
export function slowSse(url: string, key: string, pauseMs: number): Promise<SlowResult> {
  let bytes = 0;
  return new Promise<SlowResult>((resolve) => {
    const req = get(url, { headers: { 'x-api-key': key } }, (res) => {
      res.pause();
      res.on('data', (c: Buffer) => (bytes += c.length));
      const ended = new Promise<string>((r) => res.once('close', () => r(`closed, HTTP ${res.statusCode}`)));
      void pauseThenRead(pauseMs, () => res.resume(), ended).then((how) => {
        req.destroy();
        resolve({ ended_by_server: how !== null, ...(how ? { how } : {}), received_bytes: bytes });
      });
    });
    req.on('error', (err) => resolve({ ended_by_server: false, how: err.message, received_bytes: bytes }));
  });
}

/**
 * StreamEvents on its own HTTP/2 connection to `target` (host:port), paused after its first read.
 * The read matters: grpc-js pauses the call's HTTP/2 stream only when it hands a message to the
 * call's Readable, which it does once the Readable has asked (`_read`, i.e. a read was started). A
 * call paused before any read never asks, so grpc-js decodes every DATA frame into its own unbounded
 * queue and keeps granting the window: the server is never held back (a bare grpc-js server wrote
 * 10-80 MB in 4 s to such a client; one that had started reading held it at 64-96 KiB: 16 messages
 * in the Readable plus the 64 KiB stream window). `read(0)` starts reading without consuming, as a
 * real consumer that reads and then stops does. Once ended, the stream is resumed from the last
 * sequence the client got (`after_seq`), which must go on from the next one without a gap.
 */
export async function slowGrpc(target: string, key: string, pauseMs: number): Promise<SlowResult> {
  const client = ownConnectionClient(target);
  const call = client.StreamEvents({}, keyMetadata(key));
  let bytes = 0;
  const seqs: number[] = [];
  call.pause();
  call.on('data', (m: Record<string, unknown>) => {
    bytes += JSON.stringify(m).length;
    seqs.push(...seqsOf([m]));
  });
  call.read(0);
  const ended = new Promise<string>((r) => {
    call.on('error', (err: ServiceError) => r(`status ${err.code} ${trailers(err)['x-error-code'] ?? ''}`));
    call.on('end', () => r('ended'));
  });
  const how = await pauseThenRead(pauseMs, () => call.resume(), ended);
  call.cancel();
  client.close();
  const last = seqs.at(-1);
  const increasing = seqs.every((s, i) => i === 0 || s > (seqs[i - 1] as number));
  const resumed = how !== null && last !== undefined ? await resumeGrpc(target, key, last) : undefined;
  return {
    ended_by_server: how !== null,
    ...(how ? { how } : {}),
    received_bytes: bytes,
    received_events: seqs.length,
    in_order: increasing,
    ...(resumed ? { resumed } : {}),
  };
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
  const exact = seqs.every((s, i) => s === last + 1 + i);
  return { after_seq: last, first: seqs[0] ?? null, events: seqs.length, exact, ...(error ? { error } : {}) };
}

/** A disk-sync WebSocket (`url`, ws://) subscribed to everything, paused once subscribed. */
export async function slowDisk(url: string, key: string, pauseMs: number): Promise<SlowResult> {
  const ws = new WebSocket(`${url}/`, { headers: { 'x-api-key': key } });
  let bytes = 0;
  ws.on('message', (d: Buffer) => (bytes += d.length));
  ws.on('error', () => {});
  const ended = new Promise<string>((r) => ws.once('close', (code: number) => r(`close ${code}`)));
  ws.once('open', () => {
    ws.send(JSON.stringify({ op: 'subscribe', id: 'slow' }));
    ws.pause();
  });
  const how = await pauseThenRead(pauseMs, () => ws.resume(), ended);
  ws.terminate();
  return { ended_by_server: how !== null, ...(how ? { how } : {}), received_bytes: bytes };
}

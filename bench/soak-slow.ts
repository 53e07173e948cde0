/**
 * The soak's slow clients, one per transport: each opens a stream of everything from now with a
 * key of its own, stops reading for `pauseMs` (the edge's buffers and the socket fill up), then
 * reads again and waits up to 15 s for the end the edge owes a client that fell behind (SSE: the
 * response closed; gRPC: a status with `x-error-code`; disk-sync: a close code). The stream is
 * then dropped. Reported, not judged: at a low event rate the edge's bound may not be reached.
 */

import { get } from 'node:http';
import type { ServiceError } from '@grpc/grpc-js';
import WebSocket from 'ws';
import { keyMetadata, trailers } from '../test/support/grpc.ts';
import { ownConnectionClient } from '../test/support/grpc-edge.ts';
import { sleep } from './lib/ipc.ts';

const AFTER_RESUME_MS = 15_000;

export type SlowResult = { ended_by_server: boolean; how?: string; received_bytes: number };

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

/** StreamEvents on its own HTTP/2 connection to `target` (host:port), paused. */
export async function slowGrpc(target: string, key: string, pauseMs: number): Promise<SlowResult> {
  const client = ownConnectionClient(target);
  const call = client.StreamEvents({}, keyMetadata(key));
  let bytes = 0;
  call.pause();
  call.on('data', (m: unknown) => (bytes += JSON.stringify(m).length));
  const ended = new Promise<string>((r) => {
    call.on('error', (err: ServiceError) => r(`status ${err.code} ${trailers(err)['x-error-code'] ?? ''}`));
    call.on('end', () => r('ended'));
  });
  const how = await pauseThenRead(pauseMs, () => call.resume(), ended);
  call.cancel();
  client.close();
  return { ended_by_server: how !== null, ...(how ? { how } : {}), received_bytes: bytes };
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

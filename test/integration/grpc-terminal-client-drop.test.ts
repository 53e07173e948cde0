/**
 * What a grpc-js client (the installed @grpc/grpc-js) hands its reader of a server stream that
 * ends, against a bare grpc-js server that writes 300 small messages at once and then its status,
 * to a client that reads nothing until then (the extreme of a slow reader; all of it fits the
 * client's HTTP/2 window, so the status reaches it while it is paused):
 * - with OK, the status waits for the reader: it gets every message, then `end`;
 * - with a non-OK status (UNAVAILABLE), the client emits `error` at once and discards every
 *   message it had not yet handed to its Readable (grpc-js subchannel-call `maybeOutputStatus`:
 *   a non-OK status does not wait for unread messages); what the reader still gets after the
 *   status is an exact prefix of what was written, never a gap.
 * So a message the edge writes just before a non-OK status (the `upstream_lag` warning before
 * UNAVAILABLE `reconnect`) reaches a client only if it had read that far; the server cannot see
 * how far the client's reader is (HTTP/2 flow control tells it what reached the client's
 * buffers, not what the reader took). Resuming from the last sequence received is exact anyway.
 * If the non-OK case ever gets every message, grpc-js has changed: update the note in docs/transports/grpc.md.
 */
import { type ClientReadableStream, Metadata, type ServiceError, status } from '@grpc/grpc-js';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { eventually } from '../support/eventually.ts';
import { type BytesStream, startBytesStream } from '../support/grpc-bytes-service.ts';

/** Messages written before the status: about 30 KB, within the client's 64 KiB stream window. */
const COUNT = 300;
const message = (i: number) => Buffer.from(`message ${i} `.padEnd(100, '.'));

/** Calls whose handler has written everything and its status (grpc-js `finish`). */
let finished = 0;
let stream: BytesStream;

beforeAll(async () => {
  // The request's one byte says how the stream ends: 0 OK, else UNAVAILABLE.
  stream = await startBytesStream('/test.Ending/Watch', (call) => {
    call.sendMetadata(new Metadata());
    call.once('finish', () => finished++);
    for (let i = 0; i < COUNT; i++) call.write(message(i));
    if (call.request[0] === 0) call.end();
    else call.emit('error', { code: status.UNAVAILABLE, details: 'reconnect' });
  });
});

afterAll(() => stream?.close());

/** A stream that nobody reads until the test resumes it: its messages, status and end. */
function pausedWatch(ending: 'ok' | 'unavailable') {
  const call: ClientReadableStream<Buffer> = stream.watch(Buffer.from([ending === 'ok' ? 0 : 1]));
  call.pause();
  const received: string[] = [];
  const seen = { status: null as ServiceError | 'ok' | null, receivedAtStatus: -1, ended: false };
  call.on('data', (m: Buffer) => received.push(m.toString()));
  call.on('error', (e: ServiceError) => {
    seen.status = e;
    seen.receivedAtStatus = received.length;
  });
  call.on('status', (s) => {
    if (s.code === status.OK) seen.status = 'ok';
  });
  call.on('end', () => {
    seen.ended = true;
  });
  return { call, received, seen };
}

it('hands every message to a reader that reads after the server ended with OK', async () => {
  const before = finished;
  const w = pausedWatch('ok');
  await eventually(() => finished > before, 20_000, 'the server ending the call');
  w.call.resume();
  await eventually(() => w.seen.ended && w.seen.status, 20_000, 'the end of the stream');
  expect(w.seen.status).toBe('ok');
  expect(w.received).toEqual(Array.from({ length: COUNT }, (_, i) => message(i).toString()));
});

it('discards the messages not yet handed to the reader when a non-OK status arrives, keeping a prefix', async () => {
  const w = pausedWatch('unavailable');
  // The status comes while the client is still paused: it does not wait for the reader.
  await eventually(() => w.seen.status, 20_000, 'the status on the paused client');
  expect((w.seen.status as ServiceError).code).toBe(status.UNAVAILABLE);
  expect(w.seen.receivedAtStatus).toBe(0);
  w.call.resume();
  await eventually(() => w.seen.ended, 20_000, 'the messages held before the status');
  // An exact prefix of what the server wrote, and short of it.
  expect(w.received).toEqual(Array.from({ length: w.received.length }, (_, i) => message(i).toString()));
  expect(w.received.length, 'grpc-js now delivers every message before a non-OK status').toBeLessThan(COUNT);
});

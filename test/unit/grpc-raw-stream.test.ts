/**
 * The grpc-js internals the gRPC wire relies on (gateways/grpc/raw-stream.ts), pinned on the
 * installed version: a server-streaming call exposes its HTTP/2 stream once its headers are out,
 * and several length-prefixed messages written there in one piece reach a grpc-js client as
 * separate messages, in order, followed by the status. If an upgrade moves these internals, this
 * fails (the wire would otherwise fall back silently to the slower per-message path).
 */
import {
  credentials,
  Metadata,
  makeGenericClientConstructor,
  Server,
  ServerCredentials,
  type ServerWritableStream,
  status,
} from '@grpc/grpc-js';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { messageFrame } from '../../gateways/grpc/frames.ts';
import { rawStreamOf } from '../../gateways/grpc/raw-stream.ts';
import { bytesStreamService } from '../support/grpc-bytes-service.ts';

const service = bytesStreamService('/test.Raw/Watch');

const seen: { before: unknown; after: unknown } = { before: undefined, after: undefined };
let server: Server;
let port: number;

beforeAll(async () => {
  server = new Server();
  server.addService(service, {
    Watch(call: ServerWritableStream<Buffer, Buffer>) {
      seen.before = rawStreamOf(call);
      call.sendMetadata(new Metadata());
      const raw = rawStreamOf(call);
      seen.after = raw;
      const frames = ['one', 'two', 'three'].map((s) => messageFrame(Buffer.from(s))).join('');
      raw?.write(Buffer.from(frames, 'latin1'), () => call.end());
      if (!raw) call.end();
    },
  });
  port = await new Promise<number>((resolve, reject) =>
    server.bindAsync('127.0.0.1:0', ServerCredentials.createInsecure(), (err, p) =>
      err ? reject(err) : resolve(p),
    ),
  );
});

afterAll(() => server?.forceShutdown());

it('writes pre-framed messages on the HTTP/2 stream of a grpc-js call in one piece', async () => {
  const Client = makeGenericClientConstructor(service, 'Raw');
  const client = new Client(`127.0.0.1:${port}`, credentials.createInsecure());
  const call = (client as unknown as { Watch(req: Buffer): NodeJS.ReadableStream }).Watch(Buffer.alloc(0));
  const messages: string[] = [];
  const code = await new Promise<number>((resolve) => {
    call.on('data', (m: Buffer) => messages.push(m.toString()));
    call.on('status', (s: { code: number }) => resolve(s.code));
    call.on('error', () => {});
  });
  client.close();
  expect(seen.before, 'no raw stream before the headers are out').toBeNull();
  expect(seen.after, 'grpc-js exposes call.call.stream with metadataSent').not.toBeNull();
  expect(messages).toEqual(['one', 'two', 'three']);
  expect(code).toBe(status.OK);
});

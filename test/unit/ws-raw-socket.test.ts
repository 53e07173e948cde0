/**
 * The `ws` internals the disk-sync wire relies on (gateways/disksync/raw-socket.ts, `ws` pinned at
 * 8.23.0): a list of messages from messages.ts written to the socket under a server WebSocket
 * reaches a real `ws` client as exactly those messages (text, binary, each header length); the
 * bytes count in `bufferedAmount`; while the Sender queues (here: a Blob being read), no socket is
 * offered, and the wire's fallback keeps the order of what was sent.
 */
import { once } from 'node:events';
import type { AddressInfo } from 'node:net';
import { Socket } from 'node:net';
import { afterEach, expect, it } from 'vitest';
import { type RawData, WebSocket, WebSocketServer } from 'ws';
import { eachMessage, wsMessages } from '../../gateways/disksync/messages.ts';
import { rawSocketOf } from '../../gateways/disksync/raw-socket.ts';
import { WsWire } from '../../gateways/disksync/wire.ts';
import { eventually } from '../support/eventually.ts';

let close: (() => void) | null = null;
afterEach(() => close?.());

/** A server WebSocket and a `ws` client connected to it, the client's messages in arrival order. */
async function pair() {
  const wss = new WebSocketServer({ host: '127.0.0.1', port: 0, perMessageDeflate: false });
  await once(wss, 'listening');
  const client = new WebSocket(`ws://127.0.0.1:${(wss.address() as AddressInfo).port}`, {
    perMessageDeflate: false,
  });
  const [server] = (await once(wss, 'connection')) as [WebSocket];
  await once(client, 'open');
  const got: { binary: boolean; text: string }[] = [];
  client.on('message', (data: RawData, binary: boolean) =>
    got.push({ binary, text: Buffer.from(data as Buffer).toString('latin1') }),
  );
  close = () => {
    client.terminate();
    server.terminate();
    wss.close();
  };
  return { server, client, got };
}

/** A list of every header length: short text, 16-bit and 64-bit lengths, and a binary message. */
function sample(): { list: Buffer; expected: { binary: boolean; text: string }[] } {
  const event = (n: number) => Buffer.from(JSON.stringify({ seq: n, pad: 'é'.repeat(n) }));
  const list = Buffer.concat([
    wsMessages([event(1), '{"type":"caught_up"}', event(200), event(40_000)], 'json'),
    wsMessages([Buffer.from([0x81, 0xa1, 0x61])], 'msgpack'),
  ]);
  const expected: { binary: boolean; text: string }[] = [];
  eachMessage(list, (kind, payload) =>
    expected.push({ binary: kind === 2, text: payload.toString('latin1') }),
  );
  return { list, expected };
}

it('the frames written to the socket are the messages a ws client reads', async () => {
  const { server, got } = await pair();
  const socket = rawSocketOf(server);
  expect(socket).toBeInstanceOf(Socket);
  const { list, expected } = sample();
  expect(expected.map((m) => m.text.length)).toEqual([expect.any(Number), 20, expect.any(Number), 4]);
  expect(Math.max(...expected.map((m) => m.text.length))).toBeGreaterThan(65_535);
  socket?.write(list);
  await eventually(() => got.length === expected.length, 5_000, 'every message');
  expect(got).toEqual(expected);
});

it('bytes written to the socket count in bufferedAmount', async () => {
  const { server, client } = await pair();
  (client as unknown as { _socket: Socket })._socket.pause();
  const { list } = sample();
  const socket = rawSocketOf(server) as Socket;
  for (let i = 0; i < 200; i++) socket.write(list);
  expect(server.bufferedAmount).toBe(socket.writableLength);
  expect(server.bufferedAmount).toBeGreaterThan(0);
});

it('while the Sender queues, no socket is offered, and the wire keeps the order', async () => {
  const { server, got } = await pair();
  server.send(new Blob(['first']));
  expect(rawSocketOf(server)).toBeNull();
  const wire = new WsWire(server, { encoding: 'json', lagged: false, shuttingDown: () => false }, 'req-1');
  const { list, expected } = sample();
  wire.write(list);
  await eventually(() => got.length === expected.length + 1, 5_000, 'every message');
  expect(got).toEqual([{ binary: true, text: 'first' }, ...expected]);
  expect(rawSocketOf(server)).toBe((server as unknown as { _socket: Socket })._socket);
});

/**
 * A flush's frames as the disk-sync edge's WebSocket messages (gateways/disksync/messages.ts), the
 * list every socket of a shared flush sends: consecutive events (Buffers) in one data message (json:
 * the stored texts in `[…]`, UTF-8; msgpack: the shortest array header of 1, 3 or 5 bytes, then the
 * memoised encodings as they are), cut before 4 MB; control messages (strings) alone and in order.
 */
import { pack, unpack } from 'msgpackr';
import { expect, it } from 'vitest';
import { MAX_FRAME_BYTES } from '../../contracts/disksync.ts';
import { jsonToMsgpack } from '../../gateways/disksync/json-msgpack.ts';
import { BINARY, eachMessage, TEXT, wsMessages } from '../../gateways/disksync/messages.ts';

const json = (i: number) => JSON.stringify({ seq: i, trade_id: `t${i} é 日本 🚀`, price: 100 + i });
const jsonFrame = (i: number) => Buffer.from(json(i));

function messages(list: Buffer): { kind: number; payload: Buffer }[] {
  const out: { kind: number; payload: Buffer }[] = [];
  eachMessage(list, (kind, payload) => out.push({ kind, payload: Buffer.from(payload) }));
  return out;
}

it('json: events batched, control messages alone and in order', () => {
  const frames = [jsonFrame(1), jsonFrame(2), '{"type":"caught_up"}', jsonFrame(3), ''];
  const out = messages(wsMessages(frames, 'json'));
  expect(out.map((m) => m.kind)).toEqual([TEXT, TEXT, TEXT]);
  expect(JSON.parse(out[0]?.payload.toString() as string)).toEqual([
    JSON.parse(json(1)),
    JSON.parse(json(2)),
  ]);
  expect(out[1]?.payload.toString()).toBe('{"type":"caught_up"}');
  expect(out[2]?.payload.toString()).toBe(`[${json(3)}]`);
});

it.each([
  [1, 1],
  [15, 1],
  [16, 3],
  [65_535, 3],
  [65_536, 5],
])('msgpack: %i events in one message, a %i-byte array header', (n, head) => {
  const events = Array.from({ length: n }, (_, i) => JSON.parse(json(i)));
  const bodies = events.map((_, i) => (jsonToMsgpack(json(i)) as Buffer).toString('latin1'));
  const out = messages(
    wsMessages(
      bodies.map((b) => Buffer.from(b, 'latin1')),
      'msgpack',
    ),
  );
  expect(out.map((m) => m.kind)).toEqual([BINARY]);
  const payload = out[0]?.payload as Buffer;
  expect(payload.subarray(0, head).equals(pack(new Array(n).fill(0)).subarray(0, head))).toBe(true);
  expect(payload.subarray(head).equals(Buffer.from(bodies.join(''), 'latin1'))).toBe(true);
  expect(unpack(payload)).toEqual(events);
});

it('no data message passes 4 MB; the events stay in order across the cut', () => {
  const big = 'x'.repeat(400_000);
  const bodies = Array.from({ length: 40 }, (_, i) => JSON.stringify({ seq: i, pad: big }));
  const out = messages(
    wsMessages(
      bodies.map((b) => Buffer.from(b)),
      'json',
    ),
  );
  expect(out.length).toBeGreaterThan(1);
  for (const m of out) expect(m.payload.length).toBeLessThanOrEqual(MAX_FRAME_BYTES);
  const seqs = out.flatMap((m) => (JSON.parse(m.payload.toString()) as { seq: number }[]).map((e) => e.seq));
  expect(seqs).toEqual(bodies.map((_, i) => i));
});

it('no frames, or only empty ones, are no message', () => {
  expect(messages(wsMessages([], 'json'))).toEqual([]);
  expect(messages(wsMessages(['', ''], 'msgpack'))).toEqual([]);
});

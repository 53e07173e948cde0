/**
 * A flushed chunk as the disk-sync edge's WebSocket messages (gateways/disksync/messages.ts), the
 * list every socket of a shared flush sends: consecutive events in one data message (json: the
 * stored texts in `[…]`, UTF-8; msgpack: the shortest array header of 1, 3 or 5 bytes, then the
 * memoised encodings as they are), cut before 4 MB; control messages alone and in order; the terminal frame last.
 */
import { pack, unpack } from 'msgpackr';
import { expect, it } from 'vitest';
import { MAX_FRAME_BYTES } from '../../contracts/disksync.ts';
import { frame, terminalFrame } from '../../gateways/disksync/frames.ts';
import { jsonToMsgpackLatin1 } from '../../gateways/disksync/json-msgpack.ts';
import { BINARY, END, eachMessage, TEXT, wsMessages } from '../../gateways/disksync/messages.ts';

const json = (i: number) => JSON.stringify({ seq: i, trade_id: `t${i} é 日本 🚀`, price: 100 + i });
const jsonFrame = (i: number) => frame('E', json(i));

function messages(list: Buffer): { kind: number; payload: Buffer }[] {
  const out: { kind: number; payload: Buffer }[] = [];
  eachMessage(list, (kind, payload) => out.push({ kind, payload: Buffer.from(payload) }));
  return out;
}

it('json: events batched, control messages alone and in order, the terminal last', () => {
  const chunk = [
    jsonFrame(1),
    jsonFrame(2),
    frame('C', '{"type":"caught_up"}'),
    jsonFrame(3),
    terminalFrame('reconnect', 'bye'),
  ].join('');
  const out = messages(wsMessages(chunk, 'json'));
  expect(out.map((m) => m.kind)).toEqual([TEXT, TEXT, TEXT, END]);
  expect(JSON.parse(out[0]?.payload.toString() as string)).toEqual([
    JSON.parse(json(1)),
    JSON.parse(json(2)),
  ]);
  expect(out[1]?.payload.toString()).toBe('{"type":"caught_up"}');
  expect(out[2]?.payload.toString()).toBe(`[${json(3)}]`);
  expect(JSON.parse(out[3]?.payload.toString() as string)).toEqual({ code: 'reconnect', message: 'bye' });
});

it.each([
  [1, 1],
  [15, 1],
  [16, 3],
  [65_535, 3],
  [65_536, 5],
])('msgpack: %i events in one message, a %i-byte array header', (n, head) => {
  const events = Array.from({ length: n }, (_, i) => JSON.parse(json(i)));
  const bodies = events.map((_, i) => jsonToMsgpackLatin1(json(i)) as string);
  const out = messages(wsMessages(bodies.map((b) => frame('E', b)).join(''), 'msgpack'));
  expect(out.map((m) => m.kind)).toEqual([BINARY]);
  const payload = out[0]?.payload as Buffer;
  expect(payload.subarray(0, head).equals(pack(new Array(n).fill(0)).subarray(0, head))).toBe(true);
  expect(payload.subarray(head).equals(Buffer.from(bodies.join(''), 'latin1'))).toBe(true);
  expect(unpack(payload)).toEqual(events);
});

it('no data message passes 4 MB; the events stay in order across the cut', () => {
  const big = 'x'.repeat(400_000);
  const bodies = Array.from({ length: 40 }, (_, i) => JSON.stringify({ seq: i, pad: big }));
  const out = messages(wsMessages(bodies.map((b) => frame('E', b)).join(''), 'json'));
  expect(out.length).toBeGreaterThan(1);
  for (const m of out) expect(m.payload.length).toBeLessThanOrEqual(MAX_FRAME_BYTES);
  const seqs = out.flatMap((m) => (JSON.parse(m.payload.toString()) as { seq: number }[]).map((e) => e.seq));
  expect(seqs).toEqual(bodies.map((_, i) => i));
});

it('an empty chunk is no message', () => {
  expect(messages(wsMessages('', 'json'))).toEqual([]);
});

/**
 * `batchFrames` (gateways/grpc/batch-frames.ts): a run of gRPC message frames folded into
 * `FeedMessage.batch` messages decodes, with the proto, to the same messages in the same order;
 * no batch holds more than MAX_BATCH_BYTES of messages; a message alone (or too large to share a
 * batch) keeps its own frame, byte for byte.
 */
import { describe, expect, it } from 'vitest';
import { batchFrames, batchSharedFrames, MAX_BATCH_BYTES } from '../../gateways/grpc/batch-frames.ts';
import { messageFrame } from '../../gateways/grpc/frames.ts';
import { encodeFeedMessage, packageDefinition, SERVICE_NAME } from '../../gateways/grpc/proto.ts';

type Method = { responseDeserialize(b: Buffer): Record<string, unknown> };
const decode = (packageDefinition[SERVICE_NAME] as unknown as Record<string, Method>).StreamEvents
  ?.responseDeserialize as Method['responseDeserialize'];

const trade = (seq: number, note = '') => ({
  trade: {
    seq,
    event_type: 'trade',
    source: 'binance',
    symbol: 'BTC',
    price: 97_000 + seq / 8,
    size: 0.5,
    trade_id: `t${seq}${note}`,
  },
});
const framesOf = (ms: Record<string, unknown>[]) =>
  Buffer.concat(ms.map((m) => messageFrame(encodeFeedMessage(m))));

/** Every message of a chunk of frames: [the frame's messages (unfolded), how many were in it]. */
function unfold(wire: Buffer): { messages: Record<string, unknown>[]; sizes: number[]; inner: number[] } {
  const messages: Record<string, unknown>[] = [];
  const sizes: number[] = [];
  const inner: number[] = [];
  for (let at = 0; at < wire.length; ) {
    const len = wire.readUInt32BE(at + 1);
    const m = decode(wire.subarray(at + 5, at + 5 + len));
    const batch = (m.batch as { messages: Record<string, unknown>[] } | undefined)?.messages;
    messages.push(...(batch ?? [m]));
    sizes.push(batch?.length ?? 1);
    inner.push(len);
    at += 5 + len;
  }
  return { messages, sizes, inner };
}

describe('batchFrames', () => {
  it('folds a run into batches of the same messages, in order, none over the cap', () => {
    const ms = Array.from({ length: 2_000 }, (_, i) => trade(i + 1));
    const out = unfold(batchFrames(framesOf(ms)));
    expect(out.messages).toEqual(unfold(framesOf(ms)).messages);
    expect(out.sizes.length).toBeGreaterThan(1);
    expect(out.sizes.reduce((a, b) => a + b, 0)).toBe(2_000);
    expect(Math.max(...out.inner)).toBeLessThanOrEqual(MAX_BATCH_BYTES + 8);
  });

  it('leaves a message alone, or one too large to share a batch, in its own frame', () => {
    const one = framesOf([trade(1)]);
    expect(batchFrames(one).equals(one)).toBe(true);
    const big = trade(2, 'x'.repeat(MAX_BATCH_BYTES));
    const out = unfold(batchFrames(framesOf([trade(1), big, trade(3), trade(4)])));
    expect(out.sizes).toEqual([1, 1, 2]);
    expect(out.messages).toEqual(unfold(framesOf([trade(1), big, trade(3), trade(4)])).messages);
  });

  it('folds a chunk shared between streams once: the same bytes for each', () => {
    const shared = framesOf(Array.from({ length: 50 }, (_, i) => trade(i + 1)));
    const first = batchSharedFrames(shared);
    expect(batchSharedFrames(shared)).toBe(first);
    expect(first.equals(batchFrames(shared))).toBe(true);
  });
});

/**
 * Drains a client stream iterator (SSE, gRPC or disk-sync: they yield the same items) in the
 * background: every item, the event sequences in order, and the error it ended with, if any.
 */
import type { StreamItem } from '../../clients/typescript/src/stream-types.ts';

export type CollectedStream = {
  items: StreamItem[];
  seqs: number[];
  error: unknown;
  done: Promise<void>;
};

export function collectStream(s: AsyncIterable<StreamItem>): CollectedStream {
  const c: CollectedStream = { items: [], seqs: [], error: null, done: Promise.resolve() };
  c.done = (async () => {
    try {
      for await (const item of s) {
        c.items.push(item);
        if (item.type === 'event') c.seqs.push(item.seq);
      }
    } catch (err) {
      c.error = err;
    }
  })();
  return c;
}

export type Reconnecting = Extract<StreamItem, { type: 'reconnecting' }>;

export const reconnectsOf = (c: CollectedStream): Reconnecting[] =>
  c.items.filter((i): i is Reconnecting => i.type === 'reconnecting');

/** 1..n, the whole stream when it was read from position 0. */
export const oneTo = (n: number): number[] => Array.from({ length: n }, (_, i) => i + 1);

/**
 * boundedAll (the JSON-RPC batch runner): results in item order, and never more than `limit` runs
 * in flight (each run settles on the test's own signal, so in-flight runs are counted exactly).
 */
import { describe, expect, it } from 'vitest';
import { boundedAll } from '../../gateways/jsonrpc/bounded-all.ts';

describe('boundedAll', () => {
  it('keeps at most `limit` runs in flight and answers in item order', async () => {
    let inFlight = 0;
    let most = 0;
    const waiting: (() => void)[] = [];
    const run = async (n: number) => {
      inFlight++;
      most = Math.max(most, inFlight);
      await new Promise<void>((r) => waiting.push(r));
      inFlight--;
      return n * 2;
    };
    const items = Array.from({ length: 100 }, (_, i) => i);
    const all = boundedAll(items, 8, run);
    // Release runs from the newest, one at a time, until all are done.
    for (let released = 0; released < items.length; released++) {
      while (waiting.length === 0) await new Promise((r) => setImmediate(r));
      expect(inFlight).toBeLessThanOrEqual(8);
      (waiting.pop() as () => void)();
    }
    expect(await all).toEqual(items.map((n) => n * 2));
    expect(most).toBe(8);
  });

  it('takes runs that answer at once in the same turn, between ones that wait, in item order', async () => {
    let inFlight = 0;
    let most = 0;
    let sync = 0;
    const run = (n: number): number | Promise<number> => {
      if (n % 3 !== 0) {
        sync++;
        return -n;
      }
      inFlight++;
      most = Math.max(most, inFlight);
      return new Promise<number>((r) =>
        setImmediate(() => {
          inFlight--;
          r(n);
        }),
      );
    };
    const items = Array.from({ length: 60 }, (_, i) => i);
    const all = boundedAll(items, 4, run);
    // Before any promise settles, every run up to the fourth waiting one has been made.
    expect(sync).toBe(6);
    expect(await all).toEqual(items.map((n) => (n % 3 === 0 ? n : -n)));
    expect(most).toBe(4);
  });

  it('answers an empty list', async () => {
    expect(await boundedAll([], 8, async () => 1)).toEqual([]);
  });
});

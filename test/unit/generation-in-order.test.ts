/**
 * `InOrder`: windows finish in any order, the stitch reads them in window order, each as soon as
 * it and every earlier one are in; a failed job rejects the reader instead of leaving it waiting.
 */
import { describe, expect, it } from 'vitest';
import { InOrder } from '../../consumers/generation/in-order.ts';

describe('InOrder', () => {
  it('hands results out in index order, each once the ones before it are in', async () => {
    const results = new InOrder<string>(3);
    const read: string[] = [];
    const reader = (async () => {
      for await (const r of results) read.push(r);
    })();
    results.put(2, 'c');
    results.put(1, 'b');
    await new Promise((r) => setImmediate(r));
    expect(read).toEqual([]);
    results.put(0, 'a');
    results.put(0, 'ignored');
    await reader;
    expect(read).toEqual(['a', 'b', 'c']);
  });

  it('rejects a waiting reader when the job fails, after the results already in', async () => {
    const results = new InOrder<number>(3);
    results.put(0, 0);
    const read: number[] = [];
    const reader = (async () => {
      for await (const r of results) read.push(r);
    })();
    results.fail(new Error('window 1 failed'));
    await expect(reader).rejects.toThrow('window 1 failed');
    expect(read).toEqual([0]);
  });

  it('leaves no unhandled rejection when nobody reads the failed slots', async () => {
    const unhandled: unknown[] = [];
    const onUnhandled = (e: unknown): void => void unhandled.push(e);
    process.on('unhandledRejection', onUnhandled);
    try {
      new InOrder<number>(2).fail(new Error('nobody reads this'));
      await new Promise((r) => setTimeout(r, 10));
      expect(unhandled).toEqual([]);
    } finally {
      process.off('unhandledRejection', onUnhandled);
    }
  });
});

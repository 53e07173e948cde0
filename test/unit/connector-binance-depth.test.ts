/**
 * The Binance local-book rules (producers/connectors/binance-depth-sync.ts): the snapshot
 * straddle, spot `U = u + 1` and USD-M `pu = u` continuity, duplicates, a snapshot older than the
 * buffered stream, and the bounded buffer.
 */
import { expect, it } from 'vitest';
import { BinanceDepthSync, type DepthDiff } from '../../producers/connectors/binance-depth-sync.ts';

const diff = (first: number, last: number, bid?: [number, number], previous?: number): DepthDiff => ({
  first,
  last,
  previous,
  bids: bid ? [{ price: bid[0], size: bid[1] }] : [],
  asks: [],
});
const kinds = (steps: { kind: string }[]) => steps.map((s) => s.kind);

it('buffers until a snapshot, drops what the snapshot covers, applies from the straddling diff (spot)', () => {
  const book = new BinanceDepthSync();
  expect(book.push(diff(95, 100, [10, 9])).kind).toBe('buffered');
  expect(book.push(diff(100, 102, [10, 2])).kind).toBe('buffered');
  expect(kinds(book.sync(100, [{ price: 10, size: 1 }], []))).toEqual(['duplicate', 'applied']);
  expect(book.bids.top(5)).toEqual([{ price: 10, size: 2 }]);
  expect(book.push(diff(103, 104, [9, 1])).kind).toBe('applied');
  expect(book.push(diff(103, 104, [9, 5])).kind).toBe('duplicate');
  expect(book.bids.top(5)).toEqual([
    { price: 10, size: 2 },
    { price: 9, size: 1 },
  ]);
  expect(book.push(diff(106, 107)).kind).toBe('gap');
  expect(book.isSynced).toBe(false);
  expect(book.bids.size).toBe(0);
});

it('USD-M futures: continuity is pu = previous u, whatever U says', () => {
  const book = new BinanceDepthSync();
  book.sync(100, [], []);
  expect(book.push(diff(90, 105, [10, 1], 99)).kind).toBe('applied');
  expect(book.push(diff(108, 110, [10, 0], 105)).kind).toBe('applied');
  expect(book.bids.size).toBe(0);
  const gap = book.push(diff(111, 112, undefined, 111));
  expect(gap).toEqual({ kind: 'gap', reason: 'gap', expected: 111, got: 111 });
});

it('a snapshot older than the buffered stream is reported, and the diffs after it wait for the next one', () => {
  const book = new BinanceDepthSync();
  book.push(diff(105, 106, [10, 1]));
  book.push(diff(107, 108, [11, 1]));
  const steps = book.sync(100, [], []);
  expect(steps).toEqual([{ kind: 'gap', reason: 'stale_snapshot', expected: 101, got: 105 }]);
  expect(book.isSynced).toBe(false);
  expect(kinds(book.sync(105, [], []))).toEqual(['applied', 'applied']);
  expect(book.bids.top(2).map((l) => l.price)).toEqual([11, 10]);
});

it('a full buffer restarts from the newest diff (reported as buffer_overflow)', () => {
  const book = new BinanceDepthSync(2);
  book.push(diff(1, 1));
  book.push(diff(2, 2));
  expect(book.push(diff(3, 3))).toMatchObject({ kind: 'gap', reason: 'buffer_overflow' });
  expect(kinds(book.sync(2, [], []))).toEqual(['applied']);
  expect(book.updateId).toBe(3);
});

/**
 * A coin's book as `MD` builds it: a snapshot (`is_snapshot` true or absent) replaces both sides,
 * a diff (`is_snapshot: false`) sets each level it names, size 0 removing it. Top N on demand.
 * `baseSeq` is the `MD` sequence the levels are built from: the last snapshot applied, or the
 * first event when only diffs have come (re-reading `MD` from there rebuilds the same levels).
 */
import type { BookLevel } from '../../contracts/events.ts';

export type BookInput = { bids: BookLevel[]; asks: BookLevel[]; is_snapshot?: boolean };

export class BookLevels {
  private bids = new Map<number, number>();
  private asks = new Map<number, number>();
  baseSeq = 0;

  apply(book: BookInput, seq: number): void {
    if (book.is_snapshot !== false) {
      this.bids.clear();
      this.asks.clear();
      this.baseSeq = seq;
    } else if (this.baseSeq === 0) this.baseSeq = seq;
    set(this.bids, book.bids);
    set(this.asks, book.asks);
  }

  isEmpty(): boolean {
    return this.bids.size === 0 && this.asks.size === 0;
  }

  /** Best `depth` levels per side, best first. */
  top(depth: number): { bids: BookLevel[]; asks: BookLevel[] } {
    return { bids: best(this.bids, depth, (a, b) => b - a), asks: best(this.asks, depth, (a, b) => a - b) };
  }
}

function set(side: Map<number, number>, levels: BookLevel[]): void {
  for (const { price, size } of levels) {
    if (size === 0) side.delete(price);
    else side.set(price, size);
  }
}

function best(
  side: Map<number, number>,
  depth: number,
  order: (a: number, b: number) => number,
): BookLevel[] {
  return [...side.keys()]
    .sort(order)
    .slice(0, depth)
    .map((price) => ({ price, size: side.get(price) as number }));
}

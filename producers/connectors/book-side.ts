/**
 * One side of a local order book: price levels kept sorted best first (bids descending, asks
 * ascending), so a top-N read is a slice. Invariant: prices are distinct and every size is > 0;
 * a level set to size 0 is removed. Updates are a binary search plus an in-place splice, cheap
 * for the few thousand levels a venue snapshot holds.
 */
import type { BookLevel } from '../../contracts/events.ts';

export class BookSide {
  private levels: BookLevel[] = [];

  constructor(private readonly descending: boolean) {}

  /** Index of `price`, or of where it would go (`found` false). */
  private find(price: number): { at: number; found: boolean } {
    let lo = 0;
    let hi = this.levels.length;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      const p = (this.levels[mid] as BookLevel).price;
      if (p === price) return { at: mid, found: true };
      if (this.descending ? p > price : p < price) lo = mid + 1;
      else hi = mid;
    }
    return { at: lo, found: false };
  }

  /** Sets a level's size (absolute, as venues send it); size 0 deletes the level. */
  set(price: number, size: number): void {
    const { at, found } = this.find(price);
    if (size === 0) {
      if (found) this.levels.splice(at, 1);
    } else if (found) (this.levels[at] as BookLevel).size = size;
    else this.levels.splice(at, 0, { price, size });
  }

  /** Replaces every level (a snapshot). */
  reset(levels: readonly BookLevel[] = []): void {
    this.levels = [];
    for (const l of levels) this.set(l.price, l.size);
  }

  /** The best `n` levels, as fresh objects (the caller may keep them). */
  top(n: number): BookLevel[] {
    const out: BookLevel[] = [];
    for (let i = 0; i < n && i < this.levels.length; i++) {
      const l = this.levels[i] as BookLevel;
      out.push({ price: l.price, size: l.size });
    }
    return out;
  }

  get size(): number {
    return this.levels.length;
  }
}

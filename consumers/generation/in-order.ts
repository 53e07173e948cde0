/**
 * Results that complete in any order, read in index order: window i is handed to the stitch as
 * soon as windows 0..i are written, so the copy into the artifact runs while later windows are
 * still being generated, instead of after the last one.
 *
 * Every slot settles exactly once: `put` fulfils one, `fail` rejects every slot still open (a
 * reader waiting on one then throws, so a failed job never leaves the stitch waiting). A rejected
 * slot nobody reads is not an unhandled rejection.
 */
type Slot<T> = {
  readonly promise: Promise<T>;
  resolve: (value: T) => void;
  reject: (error: unknown) => void;
  settled: boolean;
};

export class InOrder<T> {
  private readonly slots: Slot<T>[];

  constructor(readonly count: number) {
    this.slots = Array.from({ length: count }, () => {
      let resolve!: (value: T) => void;
      let reject!: (error: unknown) => void;
      const promise = new Promise<T>((res, rej) => {
        resolve = res;
        reject = rej;
      });
      promise.catch(() => {});
      return { promise, resolve, reject, settled: false };
    });
  }

  /** Result `index` is in; ignored once the slot has settled. */
  put(index: number, value: T): void {
    const slot = this.slots[index];
    if (!slot) throw new RangeError(`no slot ${index} of ${this.count}`);
    if (slot.settled) return;
    slot.settled = true;
    slot.resolve(value);
  }

  /** Rejects every slot not yet in with `error`. */
  fail(error: unknown): void {
    for (const slot of this.slots) {
      if (slot.settled) continue;
      slot.settled = true;
      slot.reject(error);
    }
  }

  /** The results in index order, each as soon as it and every one before it are in. */
  async *[Symbol.asyncIterator](): AsyncGenerator<T> {
    for (const slot of this.slots) yield await slot.promise;
  }
}

/**
 * A `LeaseStore` in memory with the KV's compare-and-swap semantics. For tests and for a single
 * process without NATS; it shares nothing across processes. Every call resolves asynchronously, so
 * limiters sharing one store interleave and conflict as they would on NATS.
 */
import { LeaseConflictError, type LeaseStore, type StoredValue } from './lease-store.ts';

export type MemoryLeaseStore = LeaseStore & {
  /** Store operations so far (get, create, update), for tests that count round trips. */
  readonly ops: { get: number; create: number; update: number; conflicts: number };
  /** Makes the store unreachable (true) or reachable again (false). */
  setDown(down: boolean): void;
};

export function createMemoryLeaseStore(): MemoryLeaseStore {
  const values = new Map<string, StoredValue>();
  const ops = { get: 0, create: 0, update: 0, conflicts: 0 };
  let down = false;
  let revision = 0;
  const io = async <T>(fn: () => T): Promise<T> => {
    await Promise.resolve();
    if (down) throw new Error('store unreachable');
    return fn();
  };
  const write = (key: string, value: string, expected: number): number => {
    if ((values.get(key)?.revision ?? 0) !== expected) {
      ops.conflicts++;
      throw new LeaseConflictError(key);
    }
    revision++;
    values.set(key, { value, revision });
    return revision;
  };
  return {
    ops,
    setDown(d) {
      down = d;
    },
    reachable: () => !down,
    get: (key) =>
      io(() => {
        ops.get++;
        return values.get(key) ?? null;
      }),
    create: (key, value) =>
      io(() => {
        ops.create++;
        return write(key, value, 0);
      }),
    update: (key, value, rev) =>
      io(() => {
        ops.update++;
        return write(key, value, rev);
      }),
  };
}

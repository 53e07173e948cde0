/**
 * Where the shared bucket states live: a compare-and-swap key-value store. The NATS KV bucket in
 * production (`kv-lease-store.ts`), memory in single-process tests (`memory-lease-store.ts`).
 */

/** A stored value and its revision (the compare-and-swap token). */
export type StoredValue = { readonly value: string; readonly revision: number };

export type LeaseStore = {
  /** The latest value, or null when the key does not exist (never written, deleted or expired). */
  get(key: string): Promise<StoredValue | null>;
  /** Writes a new key and returns its revision; `LeaseConflictError` when the key exists. */
  create(key: string, value: string): Promise<number>;
  /** Writes when the key is still at `revision`; `LeaseConflictError` when someone wrote first. */
  update(key: string, value: string, revision: number): Promise<number>;
  /** False while the store is known to be unreachable, so callers fail fast instead of timing out. */
  reachable(): boolean;
};

/** Another writer changed the key since it was read: read again and retry. */
export class LeaseConflictError extends Error {
  constructor(key: string) {
    super(`rate-limit state ${key} changed concurrently`);
    this.name = 'LeaseConflictError';
  }
}

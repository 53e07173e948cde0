/**
 * Where finished files live (generation artifacts, cache exports): a directory on this machine
 * (`local`) or a NATS JetStream Object Store bucket that every process on the same NATS reads
 * (`nats`). Both write a file whole before it can be seen (a reader never finds half a file), read
 * any byte range as a stream (never the whole file in memory), list for retention, and delete.
 */
import type { Readable } from 'node:stream';

export type StorageBackend = 'local' | 'nats';

/** A stored file; names may contain `/` (e.g. `cache-exports/<key>.parquet`). */
export type StoredFile = { readonly name: string; readonly size: number; readonly mtimeMs: number };

/** Bytes `start` to `end`, both included. */
export type ByteRange = { readonly start: number; readonly end: number };

export interface ArtifactStore {
  readonly backend: StorageBackend;
  /** Stores `data` under `name`, replacing any file of that name once complete; resolves with its size. */
  put(name: string, data: AsyncIterable<Uint8Array>): Promise<number>;
  stat(name: string): Promise<StoredFile | null>;
  /** The file's bytes (all, or `range`), streamed with backpressure; null if there is no such file. */
  read(name: string, range?: ByteRange): Promise<Readable | null>;
  /** Removes the file and frees its space; false if there was none. */
  delete(name: string): Promise<boolean>;
  /** Every stored file. */
  list(): Promise<StoredFile[]>;
  /** Where `name` is, for people: a local path, or `nats:<bucket>/<name>`. */
  locate(name: string): string;
}

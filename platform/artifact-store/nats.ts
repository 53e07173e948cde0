/**
 * The `nats` backend: a JetStream Object Store bucket (stream `OBJ_<bucket>`). An object is its
 * chunks (`$O.<bucket>.C.<nuid>`, 128 KiB each) and one metadata message written after the last
 * chunk, so a reader sees a file only once it is whole; a failed put purges its chunks, and a
 * delete purges them too (the space is freed, not just hidden).
 *
 * Reads do not use the library's `get()`, which pushes every chunk into its stream without
 * waiting for the reader (a slow HTTP client would pull the whole file into memory): an ordered
 * pull consumer fetches a few chunks at a time, only as fast as the reader takes them. A range
 * starts at its first chunk: a headers-only pass finds that chunk's stream sequence, so the bytes
 * before it are never transferred.
 */
import { Readable } from 'node:stream';
import { StorageType } from '@nats-io/jetstream';
import { type ObjectInfo, type ObjectStore, Objm } from '@nats-io/obj';
import type { Nats } from '../nats.ts';
import { patiently } from '../patient.ts';
import type { ArtifactStore, ByteRange, StoredFile } from './store.ts';

/** Chunks fetched ahead of the reader (× 128 KiB). */
const READ_AHEAD_CHUNKS = 8;

export type NatsStoreOptions = {
  replicas?: number;
  maxBytes?: number;
  /** How long the bucket's creation waits for NATS to answer (platform/patient.ts). */
  withinMs?: number;
};

const fromInfo = (info: ObjectInfo): StoredFile => ({
  name: info.name,
  size: info.size,
  mtimeMs: Date.parse(info.mtime),
});

/** A WHATWG stream over an async iterable, pulled only when the consumer wants more. */
function readableStreamOf(data: AsyncIterable<Uint8Array>): ReadableStream<Uint8Array> {
  const it = data[Symbol.asyncIterator]();
  return new ReadableStream<Uint8Array>({
    async pull(controller) {
      const { done, value } = await it.next();
      if (done) controller.close();
      else controller.enqueue(value);
    },
    async cancel(reason) {
      await it.return?.(reason);
    },
  });
}

export class NatsArtifactStore implements ArtifactStore {
  readonly backend = 'nats' as const;

  private constructor(
    private readonly nats: Nats,
    private readonly os: ObjectStore,
    readonly bucket: string,
  ) {}

  /** Binds to the bucket, creating it if missing. */
  static async open(nats: Nats, bucket: string, opts: NatsStoreOptions = {}): Promise<NatsArtifactStore> {
    const os = await patiently(
      `object store ${bucket}`,
      () =>
        new Objm(nats.js).create(bucket, {
          storage: StorageType.File,
          replicas: opts.replicas ?? 1,
          ...(opts.maxBytes && opts.maxBytes > 0 ? { max_bytes: opts.maxBytes } : {}),
        }),
      opts.withinMs === undefined ? {} : { withinMs: opts.withinMs },
    );
    return new NatsArtifactStore(nats, os, bucket);
  }

  locate(name: string): string {
    return `nats:${this.bucket}/${name}`;
  }

  async put(name: string, data: AsyncIterable<Uint8Array>): Promise<number> {
    const info = await this.os.put({ name }, readableStreamOf(data));
    return info.size;
  }

  async stat(name: string): Promise<StoredFile | null> {
    const info = await this.os.info(name);
    return info && !info.deleted ? fromInfo(info) : null;
  }

  async read(name: string, range?: ByteRange): Promise<Readable | null> {
    const info = await this.os.info(name);
    if (!info || info.deleted) return null;
    const start = range?.start ?? 0;
    const end = range?.end ?? info.size - 1;
    return Readable.from(this.bytes(info, start, end), { objectMode: false });
  }

  async delete(name: string): Promise<boolean> {
    const info = await this.os.info(name);
    if (!info || info.deleted) return false;
    await this.os.delete(name);
    return true;
  }

  async list(): Promise<StoredFile[]> {
    return (await this.os.list()).filter((i) => !i.deleted).map(fromInfo);
  }

  /** Bytes [start, end] of the object, chunk by chunk. */
  private async *bytes(info: ObjectInfo, start: number, end: number): AsyncGenerator<Uint8Array> {
    if (info.size === 0 || end < start) return;
    const chunkSize = info.options?.max_chunk_size ?? 128 * 1024;
    const stream = `OBJ_${this.bucket}`;
    const subject = `$O.${this.bucket}.C.${info.nuid}`;
    const firstChunk = Math.floor(start / chunkSize);
    const startSeq = firstChunk > 0 ? await this.chunkSequence(stream, subject, firstChunk) : 1;
    const consumer = await this.nats.js.consumers.get(stream, {
      filter_subjects: subject,
      opt_start_seq: startSeq,
    });
    const messages = await consumer.consume({ max_messages: READ_AHEAD_CHUNKS });
    let offset = firstChunk * chunkSize;
    try {
      for await (const msg of messages) {
        const data = msg.data;
        const from = Math.max(0, start - offset);
        const to = Math.min(data.length, end - offset + 1);
        if (to > from) yield data.subarray(from, to);
        offset += data.length;
        if (offset > end || msg.info.pending === 0) break;
      }
    } finally {
      messages.stop();
    }
    if (offset <= end) throw new Error(`object ${info.name} ended at byte ${offset} of ${info.size}`);
  }

  /** Stream sequence of chunk `index` (0-based), found without transferring chunk payloads. */
  private async chunkSequence(stream: string, subject: string, index: number): Promise<number> {
    const consumer = await this.nats.js.consumers.get(stream, {
      filter_subjects: subject,
      headers_only: true,
    });
    const messages = await consumer.consume({ max_messages: 1_000 });
    try {
      let i = 0;
      for await (const msg of messages) {
        if (i++ === index) return msg.info.streamSequence;
        if (msg.info.pending === 0) break;
      }
    } finally {
      messages.stop();
    }
    throw new Error(`object chunk ${index} not found`);
  }
}

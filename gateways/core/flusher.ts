/**
 * Coalesces socket writes per task: an event fanned out to many clients only queues a string on
 * each; when the task that queued it ends (a microtask), every dirty connection writes its queue
 * in one call. (One write per event per client collapses throughput and grows memory without
 * bound.) The task is what delivered the events: one read of NATS bytes, however many messages it
 * holds, or one replay step; so a burst still goes out in few large writes.
 *
 * Why a microtask and not `setImmediate`: a live event written in the check phase waits for the
 * rest of the poll phase first, and on gRPC (node:http2 sends its frames from a native immediate,
 * which runs before the JS ones) the bytes then wait one more whole event-loop iteration before
 * they reach the socket. Written at the end of the task, they leave in the same iteration.
 * (Measured by the live phases of bench/grpc.ts and bench/disksync.ts.)
 * Within one flush, connections whose queues hold the same frames share one encoded Buffer
 * (`shared`): with many clients on one selection the chunk is joined and encoded once, not once
 * per socket.
 */
export type Flushable = { flush(): void };

/** How a shared chunk's string becomes bytes: a Buffer encoding, or a transport's encoder. */
export type ChunkEncoding = 'utf8' | 'latin1' | ((chunk: string) => Buffer);

export class Flusher {
  private dirty = new Set<Flushable>();
  private scheduled = false;
  private readonly turn = new Map<string, Buffer>();

  /**
   * The Buffer for `key` in this flush, made the first time it is asked for: the string `make`
   * gives, in `encoding` or through the transport's own encoder.
   */
  shared(key: string, make: () => string, encoding: ChunkEncoding = 'utf8'): Buffer {
    let buf = this.turn.get(key);
    if (!buf) {
      buf = typeof encoding === 'function' ? encoding(make()) : Buffer.from(make(), encoding);
      this.turn.set(key, buf);
    }
    return buf;
  }

  schedule(c: Flushable): void {
    this.dirty.add(c);
    if (!this.scheduled) {
      this.scheduled = true;
      queueMicrotask(this.run);
    }
  }

  private readonly run = (): void => {
    this.scheduled = false;
    const batch = this.dirty;
    this.dirty = new Set();
    for (const c of batch) c.flush();
    this.turn.clear();
  };
}

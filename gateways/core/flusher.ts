/**
 * Coalesces socket writes per event-loop turn: an event fanned out to many clients only queues a
 * string on each; one `setImmediate` later every dirty connection writes its queue in one call.
 * (One write per event per client collapses throughput and grows memory without bound.)
 * Within one flush, connections whose queues hold the same frames share one encoded Buffer
 * (`shared`): with many clients on one selection the chunk is joined and encoded once, not once
 * per socket.
 */
export type Flushable = { flush(): void };

export class Flusher {
  private dirty = new Set<Flushable>();
  private scheduled = false;
  private readonly turn = new Map<string, Buffer>();

  /** The Buffer for `key` in this flush, made by `make` the first time it is asked for. */
  shared(key: string, make: () => string, encoding: BufferEncoding = 'utf8'): Buffer {
    let buf = this.turn.get(key);
    if (!buf) {
      buf = Buffer.from(make(), encoding);
      this.turn.set(key, buf);
    }
    return buf;
  }

  schedule(c: Flushable): void {
    this.dirty.add(c);
    if (!this.scheduled) {
      this.scheduled = true;
      setImmediate(this.run);
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

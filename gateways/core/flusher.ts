/**
 * Coalesces socket writes per event-loop turn: an event fanned out to many clients only queues a
 * string on each; one `setImmediate` later every dirty connection writes its queue in one call.
 * (One write per event per client collapses throughput and grows memory without bound.)
 */
export type Flushable = { flush(): void };

export class Flusher {
  private dirty = new Set<Flushable>();
  private scheduled = false;

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
  };
}

/**
 * A client's unsent frames, bounded by bytes. Overflow policy (ARCHITECTURE.md, slow clients):
 * first conflate book frames to the newest per coin; if that does not bring the backlog under
 * the bound, the caller disconnects the client, which resumes from JetStream.
 */
export type QueuedFrame = { text: string; conflationKey: string | null };

export class OutboundQueue {
  private frames: QueuedFrame[] = [];
  private total = 0;

  constructor(readonly maxBytes: number) {}

  get bytes(): number {
    return this.total;
  }

  get length(): number {
    return this.frames.length;
  }

  /** Adds a frame; returns false when the bound is now exceeded. */
  push(text: string, conflationKey: string | null = null): boolean {
    this.frames.push({ text, conflationKey });
    this.total += text.length;
    return this.total <= this.maxBytes;
  }

  /** Keeps only the newest frame of each conflation key (order of the survivors unchanged). */
  conflate(): void {
    const seen = new Set<string>();
    const kept: QueuedFrame[] = [];
    for (let i = this.frames.length - 1; i >= 0; i--) {
      const f = this.frames[i] as QueuedFrame;
      if (f.conflationKey !== null) {
        if (seen.has(f.conflationKey)) continue;
        seen.add(f.conflationKey);
      }
      kept.push(f);
    }
    kept.reverse();
    this.frames = kept;
    this.total = kept.reduce((n, f) => n + f.text.length, 0);
  }

  /** Everything queued as one string; the queue is empty afterwards. */
  drain(): string {
    const out =
      this.frames.length === 1
        ? (this.frames[0] as QueuedFrame).text
        : this.frames.map((f) => f.text).join('');
    this.frames = [];
    this.total = 0;
    return out;
  }

  clear(): void {
    this.frames = [];
    this.total = 0;
  }
}

/**
 * A client's unsent frames (sink-parts.ts `Frame`), bounded by bytes (a Buffer's length; a string's
 * UTF-16 length, ≈ bytes for the ASCII JSON sent).
 * Overflow policy (ARCHITECTURE.md, slow clients): first conflate book frames to the newest per
 * coin; if that does not bring the backlog under the bound, the caller disconnects the client,
 * which resumes from JetStream. Frames and their conflation keys are kept in two parallel arrays
 * (no object per frame: this queue is on the per-event, per-client path); the keys' array exists
 * only once a frame has a key (a trades-only stream never makes it).
 */
import type { Chunk, Frame, Framer } from './sink-parts.ts';

export class OutboundQueue {
  private texts: Frame[] = [];
  private keys: (string | null)[] | null = null;
  private total = 0;
  private peak = 0;
  /** Sequences of the first and last event frames, and whether every frame is an event. */
  private firstSeq = -1;
  private lastSeq = -1;
  /** Events the queued frames hold (a run's frame holds several). */
  private events = 0;
  private onlyEvents = true;

  constructor(readonly maxBytes: number) {}

  /**
   * Whether the content is identified by `firstEventSeq`, `lastEventSeq` and `eventCount` (the
   * Flusher's `shared`): true when the queue holds only event frames. Two queues of one selection
   * with the same first and last sequence and count hold the same frames (an event's frame is the
   * same for everyone, and a run of events joined as one frame is the same bytes as its events,
   * counted as its events). False when other frames (notices, heartbeats) are mixed in.
   */
  get sharable(): boolean {
    return this.onlyEvents && this.texts.length > 0;
  }

  get firstEventSeq(): number {
    return this.firstSeq;
  }

  get lastEventSeq(): number {
    return this.lastSeq;
  }

  get eventCount(): number {
    return this.events;
  }

  get bytes(): number {
    return this.total;
  }

  /** The most bytes the queue has held since it was made (its high-water mark). */
  get highWaterBytes(): number {
    return this.peak;
  }

  get length(): number {
    return this.texts.length;
  }

  /** Whether every queued frame is an event's (true when empty). */
  get onlyEventFrames(): boolean {
    return this.onlyEvents;
  }

  /**
   * Adds a frame; returns false when the bound is now exceeded. `seq`: the event's sequence (the
   * last one's, for a run of `events` events as one frame, whose first is `firstSeq`).
   */
  push(text: Frame, conflationKey: string | null = null, seq?: number, firstSeq = seq, events = 1): boolean {
    if (seq === undefined) this.onlyEvents = false;
    else {
      if (this.texts.length === 0) this.firstSeq = firstSeq as number;
      this.lastSeq = seq;
      this.events += events;
    }
    if (conflationKey !== null) this.keys ??= new Array<string | null>(this.texts.length).fill(null);
    this.keys?.push(conflationKey);
    this.texts.push(text);
    this.total += text.length;
    if (this.total > this.peak) this.peak = this.total;
    return this.total <= this.maxBytes;
  }

  /** Keeps only the newest frame of each conflation key (order of the survivors unchanged). */
  conflate(): void {
    const all = this.keys;
    if (all === null) return; // no frame has a key: nothing to conflate
    const seen = new Set<string>();
    const texts: Frame[] = [];
    const keys: (string | null)[] = [];
    let total = 0;
    for (let i = this.texts.length - 1; i >= 0; i--) {
      const key = all[i] as string | null;
      if (key !== null) {
        if (seen.has(key)) continue;
        seen.add(key);
      }
      const text = this.texts[i] as Frame;
      texts.push(text);
      keys.push(key);
      total += text.length;
    }
    this.texts = texts.reverse();
    this.keys = keys.reverse();
    this.total = total;
    this.onlyEvents = false; // conflated: no longer a plain range of events
  }

  /** Everything queued as one chunk, joined by the transport (`shared`: see Framer.join); the queue is empty afterwards. */
  drain(framer: Pick<Framer, 'join'>, shared = false): Chunk {
    const out = framer.join(this.texts, shared);
    this.clear();
    return out;
  }

  clear(): void {
    this.texts = [];
    this.keys = null;
    this.total = 0;
    this.events = 0;
    this.onlyEvents = true;
  }
}

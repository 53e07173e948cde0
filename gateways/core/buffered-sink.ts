/**
 * One client's outbound stream, whatever the transport: the slow-client policy written once.
 * Frames queue in a bounded OutboundQueue and are written once per event-loop turn (Flusher),
 * respecting the wire's backpressure. Overflow policy (ARCHITECTURE.md, slow clients): while the
 * wire is blocked and the backlog passes the bound, book frames are conflated to the newest per
 * coin and a non-terminal `upstream_lag` is queued; if that does not bring the backlog under ¾ of
 * the bound, what is queued is written and a terminal `reconnect` ends the stream, and the client
 * resumes from the log.
 *
 * A transport supplies two small parts (sink-parts.ts): a Framer (how an event, a notice and a
 * warning become typed frames, and how a flush's frames join into one chunk) and a Wire (write,
 * buffered bytes, drain, and end: normally or with the terminal error, a value it says its own way).
 *
 * Memory per client is bounded: the queue holds at most its bound plus one frame (an event's, or a
 * live run's: about one NATS read of events; past the bound it is written at once, or conflated if
 * the wire is blocked), and the wire at most SOCKET_BUFFER plus the one chunk written last; so
 * queued + wire-buffered bytes stay under SOCKET_BUFFER + 2 × (bound + one frame) + the terminal
 * frames. `highWaterBytes` records that sum's peak at every change
 * (the wire's part as read after each write, which only falls until the next), so a test checks
 * the bound on what the process really held, never less, not on a sample.
 */
import type { ErrorCode } from '../../contracts/errors.ts';
import { feedRecovered, type Notice } from '../../contracts/notices.ts';
import { type FeedEvent, nowNs } from './feed-event.ts';
import type { Flusher } from './flusher.ts';
import { OutboundQueue } from './outbound-queue.ts';
import type { FeedSink } from './replay-source.ts';
import type { Chunk, Frame, Framer, RunShare, Wire } from './sink-parts.ts';

export type BufferedSinkOptions = {
  maxBacklogBytes: number;
  /** How long a terminated stream may linger before the wire is destroyed (< 0: never). */
  closeGraceMs: number;
  /** Identifies the client's selection: clients with equal keys share encoded chunks (see Flusher). */
  selectionKey?: string;
  /** The live tail's group whose runs this client takes (selection.ts `runKey`), if any. */
  runKey?: string;
  /** Called with the in-gateway latency (ns) of each event as it is written (benchmarks). */
  onEventWritten?: (latencyNs: number) => void;
};

/** Text of the non-terminal `upstream_lag` warning. */
export const LAG_MESSAGE = 'client is reading slower than events arrive; book updates conflated';
/** Unsent bytes under which a client counts as keeping up again (see `lagging`). */
const LOW_WATER = 64 * 1024;
/** How long a lagging client must keep up before a new episode warns again (`upstream_lag`). */
const LAG_CLEAR_MS = 10_000;
/** Unsent bytes the wire may hold before the connection counts as blocked. */
export const SOCKET_BUFFER = 256 * 1024;
/**
 * Unsent bytes at or under which a blocked wire calls back (`onceDrain`): the sink refills while
 * this much is still in flight, so a catch-up's stream does not run dry while the next batch is
 * read. Past SOCKET_BUFFER again, it blocks again: the bound on what a wire holds is unchanged.
 */
export const DRAIN_MARK = SOCKET_BUFFER / 2;
/** Queued bytes past which a sink that is not blocked writes at once instead of at the turn's end. */
const FLUSH_BYTES = 64 * 1024;

/**
 * Live runs taken as one frame (`run`; `whileBlocked`: of them, by a blocked wire) and handed back
 * to go event by event, since start (tests).
 */
export const runStats = { taken: 0, whileBlocked: 0, declined: 0 };

/** The key under which an event's frame is conflated (a book: its coin's newest wins); null: never. */
const conflationKey = (ev: FeedEvent): string | null => (ev.eventType === 'book' ? ev.symbol : null);

/** Whether a run holds an event whose frame is conflatable, found once for the group. */
function conflatable(evs: readonly FeedEvent[], shared: RunShare): boolean {
  shared.conflatable ??= evs.some((ev) => conflationKey(ev) !== null);
  return shared.conflatable;
}

export class BufferedSink implements FeedSink {
  private readonly queue: OutboundQueue;
  private readonly pendingLatency: number[] = [];
  private opened = false;
  private blocked = false;
  private lagging = false;
  private lagFrameQueued = false;
  private ending = false;
  private waiters: (() => void)[] = [];
  private peak = 0;
  /** In the flusher's dirty set since the last flush: scheduled once per flush, not once per frame. */
  private scheduled = false;
  /**
   * The wire's unsent bytes when last read (after each write and drain). Reading them is a
   * getter chain on the socket (a large share of a wide fan-out's CPU when read per event), and
   * between writes they only fall as the socket sends, so this is never below the truth.
   */
  private wireBytes = 0;
  private lastOverflowMs = 0;
  closed = false;
  onClosed: (() => void) | null = null;
  /** The key under which this sink's chunks are shared (see Flusher), if any. */
  private shareKey: string | undefined;
  /** The live tail's group whose runs this sink takes, if any (`runGroup`). */
  private runKey: string | undefined;

  constructor(
    readonly framer: Framer,
    private readonly wire: Wire,
    private readonly flusher: Flusher,
    private readonly opts: BufferedSinkOptions,
  ) {
    this.queue = new OutboundQueue(opts.maxBacklogBytes);
    this.shareKey = opts.selectionKey;
    this.runKey = opts.runKey;
    wire.onClose(() => this.markClosed());
  }

  /**
   * Shares encoded chunks with every sink of the process that says the same key (its framer and
   * selection); undefined: shares none.
   */
  shareChunksAs(key: string | undefined): void {
    this.shareKey = key;
  }

  /** Takes the runs of the live tail's group `key` (selection.ts `runKey`); undefined: none. */
  takeRunsOf(key: string | undefined): void {
    this.runKey = key;
  }

  /** Starts the stream (status and headers where the transport has them); queued frames follow. */
  open(extraHeaders: Record<string, string> = {}): void {
    this.wire.open(extraHeaders, this.framer.preamble());
    this.opened = true;
    this.schedule();
  }

  event(ev: FeedEvent): void {
    if (this.opts.onEventWritten) this.pendingLatency.push(ev.receivedAtNs);
    this.enqueue(this.framer.event(ev), conflationKey(ev), ev.seq);
  }

  /**
   * The live tail's group this sink's runs come from (LiveTail `attach`), where its framer joins
   * runs (none for disk-sync, whose events stay one by one).
   */
  get runGroup(): string | undefined {
    return this.framer.concatenates ? this.runKey : undefined;
  }

  /**
   * Takes a run of live events, in order and all after what it holds, as one frame joined once for
   * every sink of `group` (`shared.frame`, made by the first): one queue entry per run instead of
   * one per event, the wide fan-out's per-client cost. The group may hold clients of several
   * accounts: a run holds only platform events, and what a flush writes is still shared per
   * account (`shareKey`). False when it cannot (another group now, a framer whose frames do not
   * concatenate or are this client's own, a run with a book event for a blocked wire, whose queue
   * must keep book frames apart to conflate them, an event the framer cannot encode:
   * `shared.frame` null for every member then): the caller then hands the events one by one, as
   * `event` takes them. A blocked wire takes a run of trades whole: one by one, a client that
   * reads slower than events arrive would cost the most per event exactly when the gateway is
   * shortest of CPU.
   */
  run(evs: readonly FeedEvent[], group: string, shared: RunShare): boolean {
    if (
      group !== this.runKey ||
      !this.framer.concatenates ||
      this.closed ||
      (this.blocked && conflatable(evs, shared)) ||
      !this.opened ||
      !this.queue.onlyEventFrames ||
      shared.frame === null ||
      this.framer.personal?.()
    ) {
      runStats.declined++;
      return false;
    }
    const last = evs[evs.length - 1] as FeedEvent;
    let frame = shared.frame;
    if (frame === undefined) {
      try {
        const frames: Frame[] = [];
        for (const ev of evs) frames.push(this.framer.event(ev));
        frame = this.framer.join(frames, false);
      } catch {
        // A stored record this framer cannot encode (gRPC): `event` says so in its place.
        shared.frame = null;
        runStats.declined++;
        return false;
      }
      shared.frame = frame;
    } else this.framer.event(last); // a framer's own position (SSE ids) follows its last event
    runStats.taken++;
    if (this.blocked) runStats.whileBlocked++;
    if (this.opts.onEventWritten) for (const ev of evs) this.pendingLatency.push(ev.receivedAtNs);
    this.enqueue(frame, null, last.seq, (evs[0] as FeedEvent).seq, evs.length);
    return true;
  }

  notice(n: Notice | Record<string, unknown>): void {
    this.enqueue(this.framer.notice(n));
  }

  /** A non-terminal error (coin_not_found, feed_stale, upstream_lag). */
  warn(code: ErrorCode, message?: string, extra: Record<string, unknown> = {}): void {
    this.enqueue(this.framer.warning(code, message, extra));
  }

  /** `source`: the silent source (absent: no source has published the coin yet). */
  feedStale(coin: string, silentMs: number, source?: string): void {
    const what = source ? `${source} ${coin}` : coin;
    this.warn('feed_stale', `no ${what} events for ${Math.round(silentMs / 1000)} s`, {
      coin,
      ...(source ? { source } : {}),
    });
  }

  feedRecovered(coin: string, source?: string): void {
    this.notice(feedRecovered(coin, source));
  }

  heartbeat(): void {
    const hb = this.framer.heartbeat();
    if (hb !== null && this.queue.length === 0) this.enqueue(hb);
  }

  /** Bytes queued and not yet handed to the wire. */
  get backlogBytes(): number {
    return this.queue.bytes;
  }

  /** The peak, since the stream opened, of queued bytes plus bytes the wire had not yet sent. */
  get highWaterBytes(): number {
    return this.peak;
  }

  /**
   * Null while the wire takes bytes (a queue past its bound is written at once, so reading on
   * costs no memory); a promise while the wire is blocked, settled once it drains.
   */
  ready(): Promise<void> | null {
    if (this.closed || !this.blocked) return null;
    return new Promise((resolve) => this.waiters.push(resolve));
  }

  /** Writes a terminal error (after any pending upstream_lag) and closes. */
  terminate(code: ErrorCode, message?: string, retryAfterSeconds?: number): void {
    if (this.closed) return;
    // An upstream_lag warning still queued goes out before the terminal error, never silently dropped.
    const lag = this.lagFrameQueued
      ? this.framer.join([this.framer.warning('upstream_lag', LAG_MESSAGE, {})], false)
      : undefined;
    this.queue.clear();
    if (!this.opened) this.open();
    this.wire.end(lag, {
      code,
      ...(message !== undefined ? { message } : {}),
      ...(retryAfterSeconds !== undefined ? { retryAfterSeconds } : {}),
    });
    this.measureWire();
    this.markClosed();
    if (this.opts.closeGraceMs >= 0) setTimeout(() => this.wire.destroy(), this.opts.closeGraceMs).unref();
  }

  /** A last end-of-stream frame after everything queued, then a normal close (finite streams). */
  finish(data: Record<string, unknown>): void {
    if (this.closed) return;
    this.enqueue(this.framer.end(data));
    this.ending = true;
  }

  flush(): void {
    this.scheduled = false;
    if (this.closed || this.blocked || !this.opened || this.queue.length === 0) return;
    const q = this.queue;
    const chunk =
      this.shareKey === undefined || this.framer.personal?.() || !q.sharable
        ? q.drain(this.framer)
        : this.flusher.shared(this.shareKey, q.firstEventSeq, q.lastEventSeq, q.eventCount, this.drainShared);
    this.queue.clear();
    this.lagFrameQueued = false;
    this.wire.write(chunk);
    this.recordLatency();
    const buffered = this.measureWire();
    if (this.ending) {
      this.wire.end();
      this.markClosed();
      return;
    }
    // Blocked only when the wire holds more than SOCKET_BUFFER unsent bytes (Node's own 16 KiB
    // mark would stall every catch-up flush); `drain` fires once it is down to DRAIN_MARK.
    if (buffered > SOCKET_BUFFER) {
      this.blocked = true;
      this.wire.onceDrain(this.onDrain);
      return;
    }
    // A lagging episode ends when the client has kept up for a while (not at the first drain: a
    // client that stopped reading drains in bursts while the kernel's buffers still take bytes).
    if (this.lagging && buffered < LOW_WATER && performance.now() - this.lastOverflowMs > LAG_CLEAR_MS)
      this.lagging = false;
    this.wake();
  }

  private readonly drainShared = (): Chunk => this.queue.drain(this.framer, true);

  private enqueue(
    text: Frame,
    conflationKey: string | null = null,
    seq?: number,
    firstSeq = seq,
    events = 1,
  ): void {
    if (this.closed) return;
    // The slow-client policy applies to real backpressure only: while the wire accepts writes, a
    // queue past the bound is written at once instead of waiting for the turn's flush.
    // A long synchronous run of events (a history batch) goes out in pieces of FLUSH_BYTES, so the
    // wire starts sending, and blocks the reader once it holds SOCKET_BUFFER, within the run.
    if (!this.queue.push(text, conflationKey, seq, firstSeq, events)) {
      if (this.blocked) this.overflow();
      else if (this.opened) this.flush();
    } else if (!this.blocked && this.opened && this.queue.bytes >= FLUSH_BYTES) this.flush();
    if (this.closed) return;
    this.measure();
    if (!this.blocked && this.opened && this.queue.length > 0) this.schedule();
  }

  private schedule(): void {
    if (this.scheduled) return;
    this.scheduled = true;
    this.flusher.schedule(this);
  }

  /** Records the peak of what the connection holds (the wire's part as last read). */
  private measure(): void {
    const held = this.queue.bytes + this.wireBytes;
    if (held > this.peak) this.peak = held;
  }

  /** Reads the wire's unsent bytes (after a write or a drain), records the peak, returns them. */
  private measureWire(): number {
    this.wireBytes = this.wire.bufferedBytes;
    this.measure();
    return this.wireBytes;
  }

  private overflow(): void {
    this.lastOverflowMs = performance.now();
    this.queue.conflate();
    this.pendingLatency.length = 0;
    if (!this.lagging) {
      this.lagging = true;
      this.lagFrameQueued = true;
      this.queue.push(this.framer.warning('upstream_lag', LAG_MESSAGE, {}));
    }
    if (this.queue.bytes > this.queue.maxBytes * 0.75) {
      // What is queued (books conflated, the lag warning last) goes out before the terminal error:
      // the bytes move from the queue to the wire, so what the connection holds does not grow.
      this.wire.write(this.queue.drain(this.framer));
      this.measureWire();
      this.lagFrameQueued = false;
      this.terminate('reconnect', 'client too slow: reconnect with Last-Event-ID to resume from the log');
    }
  }

  private readonly onDrain = (): void => {
    this.blocked = false;
    this.wireBytes = this.wire.bufferedBytes;
    if (this.queue.length > 0) this.flush();
    else this.wake();
  };

  private recordLatency(): void {
    const cb = this.opts.onEventWritten;
    if (!cb || this.pendingLatency.length === 0) return;
    const t = nowNs();
    for (const r of this.pendingLatency) cb(t - r);
    this.pendingLatency.length = 0;
  }

  private wake(): void {
    if (this.blocked || this.waiters.length === 0) return;
    const w = this.waiters;
    this.waiters = [];
    for (const resolve of w) resolve();
  }

  private markClosed(): void {
    if (this.closed) return;
    this.closed = true;
    this.queue.clear();
    const w = this.waiters;
    this.waiters = [];
    for (const resolve of w) resolve();
    this.onClosed?.();
  }
}

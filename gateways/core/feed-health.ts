/**
 * Tracks when each (source, coin) feed last produced an event and reports one silent for longer
 * than `staleAfterMs` (the spec's 60 s) once, then its recovery once. Per source, not per coin: a
 * venue gone quiet is reported even while another source keeps publishing the same coin.
 *
 * A coin expected before any source has published it (configuration, or a coin already in the
 * stream at start) is tracked under no source (`null`) until the first event of any source
 * replaces that entry. Memory: one entry per (source, coin) pair of the platform's own feed, the
 * same bound as the feed's subjects.
 */
export type FeedHealthListener = {
  /** `source` null: an expected coin no source has published yet. */
  stale(coin: string, source: string | null, silentMs: number): void;
  recovered(coin: string, source: string | null): void;
};

type Entry = { coin: string; source: string | null; seen: number; stale: boolean };

const keyOf = (coin: string, source: string | null): string => `${source ?? ''}\u0000${coin}`;

export class FeedHealth {
  private readonly feeds = new Map<string, Entry>();
  /** Entries per coin (for `knows`, `coins`, `isStale`). */
  private readonly byCoin = new Map<string, Set<Entry>>();
  private timer: NodeJS.Timeout | null = null;

  constructor(
    private readonly staleAfterMs: number,
    private readonly listener: FeedHealthListener,
    private readonly now: () => number = Date.now,
  ) {}

  /** Coins expected to publish even before they have been seen (measured from now). */
  expect(coins: Iterable<string>): void {
    const t = this.now();
    for (const c of coins)
      if (!this.byCoin.has(c)) this.add({ coin: c, source: null, seen: t, stale: false });
  }

  /** Feeds known to exist before they publish again (a restart: the stream's subjects), from now. */
  expectFeeds(feeds: Iterable<{ coin: string; source: string }>): void {
    const t = this.now();
    for (const f of feeds)
      if (!this.feeds.has(keyOf(f.coin, f.source)))
        this.add({ coin: f.coin, source: f.source, seen: t, stale: false });
  }

  saw(coin: string, source: string): void {
    const waiting = this.feeds.get(keyOf(coin, null));
    if (waiting) {
      this.remove(waiting);
      if (waiting.stale) this.listener.recovered(coin, null);
    }
    const t = this.now();
    const entry = this.feeds.get(keyOf(coin, source));
    if (!entry) {
      this.add({ coin, source, seen: t, stale: false });
      return;
    }
    entry.seen = t;
    if (entry.stale) {
      entry.stale = false;
      this.listener.recovered(coin, source);
    }
  }

  /** Whether a feed of `coin` is stale, among `sources` (null: any source). */
  isStale(coin: string, sources: ReadonlySet<string> | null = null): boolean {
    for (const e of this.byCoin.get(coin) ?? [])
      if (e.stale && (e.source === null || sources === null || sources.has(e.source))) return true;
    return false;
  }

  /** The stale feeds of `coin` among `sources` (null: any source); `source` null as in the listener. */
  staleFeeds(coin: string, sources: ReadonlySet<string> | null = null): (string | null)[] {
    const out: (string | null)[] = [];
    for (const e of this.byCoin.get(coin) ?? [])
      if (e.stale && (e.source === null || sources === null || sources.has(e.source))) out.push(e.source);
    return out;
  }

  knows(coin: string): boolean {
    return this.byCoin.has(coin);
  }

  coins(): string[] {
    return [...this.byCoin.keys()];
  }

  /** Runs the check every `everyMs`. */
  start(everyMs = Math.min(1_000, this.staleAfterMs)): void {
    this.timer = setInterval(() => this.check(), everyMs);
    this.timer.unref();
  }

  stop(): void {
    if (this.timer) clearInterval(this.timer);
  }

  check(): void {
    const t = this.now();
    for (const e of this.feeds.values()) {
      if (!e.stale && t - e.seen > this.staleAfterMs) {
        e.stale = true;
        this.listener.stale(e.coin, e.source, t - e.seen);
      }
    }
  }

  private add(e: Entry): void {
    this.feeds.set(keyOf(e.coin, e.source), e);
    const set = this.byCoin.get(e.coin) ?? new Set<Entry>();
    set.add(e);
    this.byCoin.set(e.coin, set);
  }

  private remove(e: Entry): void {
    this.feeds.delete(keyOf(e.coin, e.source));
    const set = this.byCoin.get(e.coin);
    set?.delete(e);
    if (set?.size === 0) this.byCoin.delete(e.coin);
  }
}

/**
 * Tracks when each coin last produced an event and reports a coin silent for longer than
 * `staleAfterMs` (the spec's 60 s) once, then its recovery once.
 */
export type FeedHealthListener = {
  stale(coin: string, silentMs: number): void;
  recovered(coin: string): void;
};

export class FeedHealth {
  private readonly lastSeen = new Map<string, number>();
  private readonly staleCoins = new Set<string>();
  private timer: NodeJS.Timeout | null = null;

  constructor(
    private readonly staleAfterMs: number,
    private readonly listener: FeedHealthListener,
    private readonly now: () => number = Date.now,
  ) {}

  /** Coins expected to publish even before they have been seen (measured from now). */
  expect(coins: Iterable<string>): void {
    const t = this.now();
    for (const c of coins) if (!this.lastSeen.has(c)) this.lastSeen.set(c, t);
  }

  saw(coin: string): void {
    this.lastSeen.set(coin, this.now());
    if (this.staleCoins.delete(coin)) this.listener.recovered(coin);
  }

  isStale(coin: string): boolean {
    return this.staleCoins.has(coin);
  }

  knows(coin: string): boolean {
    return this.lastSeen.has(coin);
  }

  coins(): string[] {
    return [...this.lastSeen.keys()];
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
    for (const [coin, seen] of this.lastSeen) {
      if (!this.staleCoins.has(coin) && t - seen > this.staleAfterMs) {
        this.staleCoins.add(coin);
        this.listener.stale(coin, t - seen);
      }
    }
  }
}

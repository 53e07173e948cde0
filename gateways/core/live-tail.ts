/**
 * The one live JetStream subscription of a gateway process: an ordered consumer on every market
 * subject, fanned out in-process to all attached clients, with a ring of recent events for
 * resumes. Clients are indexed by coin so an event touches only the clients that want it.
 * Accounts' own events (`stream: true`) are on `OWN`, followed by a tail of their own
 * (own-feed.ts); there they reach only their account's subscribers (`matches` → `visibility.ts`)
 * and never count for feed health: the platform's known coins and stale reports are the platform's
 * feed alone.
 */
import { STREAMS } from '../../contracts/streams.ts';
import {
  type FeedSubjectParts,
  MD_ALL,
  type MdSubjectParts,
  parseFeedSubject,
} from '../../contracts/subjects.ts';
import type { Logger } from '../../platform/logger.ts';
import { registerLagSource } from '../../platform/metrics.ts';
import type { Nats } from '../../platform/nats.ts';
import { type OrderedReader, readOrdered } from '../../platform/ordered-reader.ts';
import { EventRing } from './event-ring.ts';
import { decodeFeedEvent, type FeedEvent } from './feed-event.ts';
import { FeedHealth, type FeedHealthListener } from './feed-health.ts';
import { filterSubject, matches, type Selection } from './selection.ts';
import type { RunShare } from './sink-parts.ts';

/** A client attached to the live tail. `lastSeq` guards against duplicates at handover. */
export type TailSubscriber = {
  readonly selection: Selection;
  lastSeq: number;
  deliver(ev: FeedEvent): void;
  /**
   * With `deliverRun`: subscribers of one group (equal selections, one framer) are handed each
   * read's events together, once per group, at the end of the task (see LiveTail `receive`); `shared`
   * carries what the first of them made of the run for the others.
   */
  group?: string | undefined;
  /** Takes the run whole (true, `lastSeq` now its last); false: the tail offers its events one by one. */
  deliverRun?(evs: readonly FeedEvent[], group: string, shared: RunShare): boolean;
  /** `source`: the silent source (absent: an expected coin no source has published yet). */
  feedStale?(coin: string, silentMs: number, source?: string): void;
  feedRecovered?(coin: string, source?: string): void;
};

/** Which stream and subjects a tail follows (default: every market event on `MD`). */
export type FeedSpec = {
  stream: string;
  filter: string;
  /** The narrowest filter for a resuming client's history read (default: `filter`). */
  historyFilter?: (sel: Selection) => string;
  /** The platform's subjects within `filter` (default: all of it): the coins known at start; null: none (`OWN`). */
  platformFilter?: string | null;
  parse: (subject: string) => MdSubjectParts | FeedSubjectParts | null;
  coinToken: number;
  /** A viewer of this feed also reads its account's own events beside it (own-feed.ts): `MD` only. */
  withOwnEvents?: boolean;
};

export const MD_FEED: FeedSpec = {
  stream: STREAMS.MD,
  filter: MD_ALL,
  historyFilter: filterSubject,
  parse: parseFeedSubject,
  coinToken: 2,
  withOwnEvents: true,
};

export type LiveTailOptions = {
  /** Reported as the consumer of the lag metric when given. */
  name?: string;
  ringSize: number;
  staleAfterMs: number;
  expectedCoins: readonly string[];
  feed?: FeedSpec;
};

/**
 * Subscribers with one selection and framer: an event is matched once for all of them and kept
 * in `pending` until the task ends, then handed to each as one run (one queue entry per client per
 * read, where one per event per client was most of a wide fan-out's CPU: issue 29).
 */
type FanoutGroup = {
  readonly key: string;
  readonly selection: Selection;
  readonly members: Set<TailSubscriber>;
  pending: FeedEvent[];
  queued: boolean;
};

/** Tails holding runs not yet handed over (see `deliverPendingRuns`). */
const withPending = new Set<LiveTail>();

/**
 * Hands over every tail's pending runs now. Whatever enters a sink outside the live tail (an
 * account's own event, read from `OWN`) calls it first, so it never overtakes a platform event read
 * before it.
 */
export function deliverPendingRuns(): void {
  for (const tail of withPending) tail.deliverPending();
}

export class LiveTail {
  readonly ring: EventRing;
  readonly health: FeedHealth;
  private readonly byCoin = new Map<string, Set<TailSubscriber>>();
  private readonly anyCoin = new Set<TailSubscriber>();
  private readonly groups = new Map<string, FanoutGroup>();
  private readonly groupsByCoin = new Map<string, Set<FanoutGroup>>();
  private readonly anyCoinGroups = new Set<FanoutGroup>();
  private dirtyGroups: FanoutGroup[] = [];
  private reader: OrderedReader | null = null;
  private unregisterLag: () => void = () => {};
  /** Called for every event after fan-out (latency measurement). */
  onDispatched: ((ev: FeedEvent) => void) | null = null;

  private constructor(
    private readonly log: Logger,
    /** The stream and subjects this tail follows: resumes read their history from the same. */
    readonly feed: FeedSpec,
    opts: LiveTailOptions,
    startSeq: number,
    knownFeeds: Iterable<{ coin: string; source: string }>,
  ) {
    this.ring = new EventRing(opts.ringSize, startSeq);
    // A source's report goes only to subscribers whose selection takes that source.
    const listener: FeedHealthListener = {
      stale: (coin, source, ms) =>
        this.forFeed(coin, source, (s) =>
          source === null ? s.feedStale?.(coin, ms) : s.feedStale?.(coin, ms, source),
        ),
      recovered: (coin, source) =>
        this.forFeed(coin, source, (s) =>
          source === null ? s.feedRecovered?.(coin) : s.feedRecovered?.(coin, source),
        ),
    };
    this.health = new FeedHealth(opts.staleAfterMs, listener);
    this.health.expectFeeds(knownFeeds);
    this.health.expect(opts.expectedCoins);
  }

  /** Starts tailing from the stream's current end; coins already in the stream are known at once. */
  static async start(nats: Nats, log: Logger, opts: LiveTailOptions): Promise<LiveTail> {
    const feed = opts.feed ?? MD_FEED;
    const platform = feed.platformFilter === undefined ? feed.filter : feed.platformFilter;
    const info = await nats.jsm.streams.info(feed.stream, platform ? { subjects_filter: platform } : {});
    const feeds: { coin: string; source: string }[] = [];
    for (const subject of Object.keys(info.state.subjects ?? {})) {
      const parts = feed.parse(subject);
      if (parts) feeds.push({ coin: parts.symbol, source: parts.source });
    }
    const tail = new LiveTail(log, feed, opts, info.state.last_seq + 1, feeds);
    const from = { stream: feed.stream, filter: feed.filter, startSeq: info.state.last_seq + 1 };
    tail.reader = readOrdered(
      nats,
      from,
      // Never a promise back: the reader's standing consume hands over each socket read's messages
      // as they come (one read is at most one socket chunk, so no turn grows long), and a handler
      // that makes it wait holds messages and stops and reopens the consumer, under which a tail
      // behind a burst reads many times slower than it can and falls seconds behind.
      (m, seq) => {
        tail.receive(decodeFeedEvent(m, seq, undefined, feed.parse));
      },
      log,
    );
    tail.health.start();
    if (opts.name) {
      tail.unregisterLag = registerLagSource(
        opts.name,
        async () => (await nats.jsm.streams.info(feed.stream)).state.last_seq - tail.lastSeq,
      );
    }
    return tail;
  }

  get lastSeq(): number {
    return this.ring.lastSeq;
  }

  get coveredFrom(): number {
    return this.ring.coveredFrom;
  }

  /** Starts live delivery of events after `sub.lastSeq`. The caller has replayed everything up to it. */
  attach(sub: TailSubscriber): () => void {
    if (sub.group !== undefined && sub.deliverRun) return this.attachToGroup(sub, sub.group);
    this.index(sub.selection, this.byCoin, this.anyCoin, sub, true);
    return () => this.index(sub.selection, this.byCoin, this.anyCoin, sub, false);
  }

  private attachToGroup(sub: TailSubscriber, key: string): () => void {
    const group = this.groups.get(key) ?? this.newGroup(key, sub.selection);
    group.members.add(sub);
    return () => {
      if (!group.members.delete(sub) || group.members.size > 0) return;
      this.index(group.selection, this.groupsByCoin, this.anyCoinGroups, group, false);
      this.groups.delete(key);
    };
  }

  private newGroup(key: string, selection: Selection): FanoutGroup {
    const g: FanoutGroup = { key, selection, members: new Set(), pending: [], queued: false };
    this.index(selection, this.groupsByCoin, this.anyCoinGroups, g, true);
    this.groups.set(key, g);
    return g;
  }

  /** Adds (or removes) `item` under each coin of `sel`, or under every coin. */
  private index<T>(sel: Selection, byCoin: Map<string, Set<T>>, any: Set<T>, item: T, add: boolean): void {
    if (sel.coins === null) {
      if (add) any.add(item);
      else any.delete(item);
      return;
    }
    for (const c of sel.coins) {
      const set = byCoin.get(c);
      if (!add) set?.delete(item);
      else if (set) set.add(item);
      else byCoin.set(c, new Set([item]));
    }
  }

  stop(): void {
    this.reader?.stop();
    this.unregisterLag();
    this.health.stop();
  }

  private receive(ev: FeedEvent | null): void {
    if (!ev) return;
    this.ring.push(ev);
    if (ev.owner === null) this.health.saw(ev.symbol, ev.source);
    const subs = this.byCoin.get(ev.symbol);
    if (subs) for (const s of subs) this.offer(s, ev);
    for (const s of this.anyCoin) this.offer(s, ev);
    const groups = this.groupsByCoin.get(ev.symbol);
    if (groups) for (const g of groups) this.offerGroup(g, ev);
    for (const g of this.anyCoinGroups) this.offerGroup(g, ev);
    this.onDispatched?.(ev);
  }

  private offerGroup(g: FanoutGroup, ev: FeedEvent): void {
    // A group's members may be of several accounts (selection.ts `runKey`): an account's own
    // event (none on `MD`, whose tail is the only one with groups) goes to each member as it sees it.
    if (ev.owner !== null) {
      this.deliverPending();
      for (const s of g.members) this.offer(s, ev);
      return;
    }
    if (!matches(g.selection, ev)) return;
    g.pending.push(ev);
    if (g.queued) return;
    g.queued = true;
    if (this.dirtyGroups.push(g) === 1) {
      withPending.add(this);
      queueMicrotask(this.deliverPending);
    }
  }

  /**
   * Hands each group's events not yet handed over (those of the task that just ended) to its
   * members, as one run each; a member that does not take a run is offered its events one by one.
   * Run at the task's end, and before anything that must come after them (`deliverPendingRuns`, a
   * replay's end check).
   */
  readonly deliverPending = (): void => {
    if (this.dirtyGroups.length === 0) return;
    const dirty = this.dirtyGroups;
    this.dirtyGroups = [];
    withPending.delete(this);
    for (const g of dirty) {
      const evs = g.pending;
      g.pending = [];
      g.queued = false;
      const shared: RunShare = {};
      for (const s of g.members) {
        let taken = false;
        try {
          taken = s.deliverRun?.(evs, g.key, shared) ?? false;
        } catch (err) {
          this.log.error({ err: String(err) }, 'subscriber failed');
        }
        if (!taken) for (const ev of evs) this.offer(s, ev);
      }
    }
  };

  private offer(s: TailSubscriber, ev: FeedEvent): void {
    if (ev.seq <= s.lastSeq || !matches(s.selection, ev)) return;
    s.lastSeq = ev.seq;
    try {
      s.deliver(ev);
    } catch (err) {
      this.log.error({ err: String(err) }, 'subscriber failed');
    }
  }

  private forFeed(coin: string, source: string | null, fn: (s: TailSubscriber) => void): void {
    const takes = (sel: Selection) => source === null || sel.sources === null || sel.sources.has(source);
    for (const s of this.byCoin.get(coin) ?? []) if (takes(s.selection)) fn(s);
    for (const s of this.anyCoin) if (takes(s.selection)) fn(s);
    for (const g of [...(this.groupsByCoin.get(coin) ?? []), ...this.anyCoinGroups])
      if (takes(g.selection)) for (const s of g.members) fn(s);
  }
}

/**
 * `Stream`, the bidirectional method, opened with StreamOpen: the first ClientMessage must be
 * `open` (a Subscription, `after_seq` included); anything else first is INVALID_ARGUMENT. Later
 * messages: `subscribe` adds coins, event types or sources, `unsubscribe` removes them, `ping` is
 * answered with `pong` in order with the events.
 *
 * A change of subscription keeps the position: the stream's feed is closed, and a new one opened
 * after the last sequence the stream has handed to its sink (`position`), so an event is never
 * delivered twice and none of the new selection after that point is missed. Before any event the
 * position is where the stream started (`after_seq`, or the live tail's end when it opened).
 *
 * Bounds (contracts/transport-limits.ts): the subscription's coins stay within
 * MAX_COINS_PER_SUBSCRIPTION (a subscribe past it ends the stream INVALID_ARGUMENT); a change
 * resolves only coins it has not resolved before (own-coins.ts `rememberingLookup`: at most one
 * JetStream request per message, none once the client has cancelled); at most
 * GRPC_STREAM_MAX_PENDING control messages wait to be applied: reading pauses at half of it, and
 * a message past it ends the stream RESOURCE_EXHAUSTED (`rate_limited`).
 */
import type { ServerDuplexStream } from '@grpc/grpc-js';
import { isDerivedKind } from '../../contracts/derived.ts';
import { ApiError, isApiError } from '../../contracts/errors.ts';
import { EVENT_TYPES, SOURCES } from '../../contracts/events.ts';
import type { Subscription } from '../../contracts/subscription.ts';
import { GRPC_STREAM_MAX_PENDING, MAX_COINS_PER_SUBSCRIPTION } from '../../contracts/transport-limits.ts';
import type { WarnableSink } from '../core/attach-feed.ts';
import type { BufferedSink } from '../core/buffered-sink.ts';
import type { FeedEvent } from '../core/feed-event.ts';
import type { Principal } from '../core/guard.ts';
import { type OwnCoinLookup, rememberingLookup } from '../core/own-coins.ts';
import type { FeedNotice, FeedSubscription } from '../core/replay-source.ts';
import type { StaleFeed, SubscribeOptions } from '../core/subscribe.ts';
import { viewerOf } from '../core/visibility.ts';
import { failure, type GrpcEdgeDeps, requestIdOf } from './context.ts';
import { feedInto, openStream } from './feed-stream.ts';
import { feedFramer, PONG } from './framer.ts';
import { sendHeaders } from './headers.ts';
import { batchRequested, subscriptionOf } from './subscription.ts';

type Msg = Record<string, unknown>;
type Call = ServerDuplexStream<Msg, unknown>;
type Lists = Pick<Subscription, 'coins' | 'event_types' | 'sources'>;
const LIST_KEYS = ['coins', 'event_types', 'sources'] as const;

export function bidiStreamMethod(deps: GrpcEdgeDeps): (call: Call) => void {
  return (call) => {
    const requestId = requestIdOf(call);
    call.once('data', (first: Msg) => {
      if (first.kind !== 'open') {
        sendHeaders(call, requestId);
        const err = new ApiError('invalid_params', 'the first message must be open (StreamOpen)', {
          field: 'kind',
          reason: 'expected open',
        });
        call.emit('error', failure(deps, call, requestId, err));
        return;
      }
      call.pause();
      const session = new BidiSession(deps, call);
      void openStream(
        deps,
        call,
        requestId,
        feedFramer(requestId),
        (sink, principal, gone) => session.start(sink, principal, first.open as Msg, gone),
        batchRequested(first.open as Msg),
      ).then((opened) => {
        if (!opened) return;
        call.on('data', (m: Msg) => session.control(m));
        call.resume();
      });
    });
  };
}

class BidiSession {
  private sink!: BufferedSink;
  private principal!: Principal;
  private lists: Lists = {};
  private feed: FeedSubscription | null = null;
  private position = 0;
  /** The last own event's `OWN` sequence (own-feed.ts), once one is known. */
  private ownPosition: number | null = null;
  private chain: Promise<void> = Promise.resolve();
  /** Control messages received and not yet applied. */
  private pending = 0;
  private resolving: SubscribeOptions = {};
  /** What feeds write into: the sink, with the position recorded. */
  private readonly tracking: WarnableSink = {
    // Two positions: the platform's (`MD`) and the account's own events' (`OWN`), never mixed.
    event: (ev: FeedEvent) => {
      if (ev.owner !== null) {
        if (this.ownPosition !== null && ev.seq <= this.ownPosition) return;
        this.ownPosition = ev.seq;
      } else {
        if (ev.seq <= this.position) return;
        this.position = ev.seq;
      }
      this.sink.event(ev);
    },
    notice: (n: FeedNotice) => {
      if ('resumed_after' in n) {
        if ('feed' in n && n.feed === 'own')
          this.ownPosition = Math.max(this.ownPosition ?? 0, n.resumed_after);
        else this.position = Math.max(this.position, n.resumed_after);
      }
      this.sink.notice(n);
    },
    feedStale: (coin, ms) => this.sink.feedStale(coin, ms),
    feedRecovered: (coin) => this.sink.feedRecovered(coin),
    ready: () => this.sink.ready(),
    warn: (code, message, extra) => this.sink.warn(code, message, extra),
    finish: (data) => this.sink.finish(data),
  };

  constructor(
    private readonly deps: GrpcEdgeDeps,
    private readonly call: Pick<Call, 'pause' | 'resume'>,
  ) {}

  async start(
    sink: BufferedSink,
    principal: Principal,
    open: Msg,
    gone: AbortSignal,
  ): Promise<{ close(): void; stale: StaleFeed[] }> {
    this.sink = sink;
    this.principal = principal;
    const ownCoins: OwnCoinLookup = rememberingLookup(this.deps.nats, viewerOf(principal), gone);
    this.resolving = { signal: gone, ownCoins };
    const request = subscriptionOf(open);
    refuseWindow(request);
    for (const k of LIST_KEYS) if (request[k]) this.lists[k] = request[k] as never;
    this.position = request.last_event_id ?? this.deps.tail.lastSeq;
    this.ownPosition = request.last_own_seq ?? null;
    // Where own events start is kept, so a change of subscription never looks it up again.
    const { feed, staleFeeds } = await feedInto(
      this.deps,
      this.tracking,
      request,
      principal,
      undefined,
      this.resolving,
      (after) => {
        this.ownPosition ??= after;
      },
    );
    this.feed = feed;
    return { close: () => this.close(), stale: staleFeeds() };
  }

  control(m: Msg): void {
    if (this.pending >= GRPC_STREAM_MAX_PENDING) {
      this.fail(
        new ApiError(
          'rate_limited',
          `more than ${GRPC_STREAM_MAX_PENDING} messages waiting to be applied; wait for each change to take effect`,
        ),
      );
      return;
    }
    if (++this.pending === GRPC_STREAM_MAX_PENDING / 2) this.call.pause();
    this.chain = this.chain
      .then(() => this.apply(m))
      .catch((err) => this.fail(err))
      .finally(() => {
        if (this.pending-- === GRPC_STREAM_MAX_PENDING / 2) this.call.resume();
      });
  }

  private async apply(m: Msg): Promise<void> {
    if (this.sink.closed) return;
    if (m.kind === 'ping') {
      this.sink.notice({ code: PONG, id: (m.ping as Msg | undefined)?.id ?? '' } as never);
      return;
    }
    if (m.kind !== 'subscribe' && m.kind !== 'unsubscribe')
      throw new ApiError('invalid_params', 'after open, send subscribe, unsubscribe or ping', {
        field: 'kind',
        reason: `unexpected ${String(m.kind)}`,
      });
    const change = subscriptionOf(m[m.kind] as Msg);
    refuseWindow(change);
    const next = m.kind === 'subscribe' ? union(this.lists, change) : this.without(change);
    // An unsubscribe from "all" lists the platform's coins: only what a client adds is capped.
    if (m.kind === 'subscribe' && (next.coins?.length ?? 0) > MAX_COINS_PER_SUBSCRIPTION)
      throw new ApiError(
        'invalid_params',
        `a subscription may name at most ${MAX_COINS_PER_SUBSCRIPTION} coins; unsubscribe some first`,
        { field: 'coins', reason: 'too many', limit: MAX_COINS_PER_SUBSCRIPTION },
      );
    const previous = this.lists;
    this.feed?.close();
    this.feed = null;
    try {
      await this.refeed(next);
    } catch (err) {
      if (!isApiError(err) || err.code !== 'coin_not_found') throw err;
      this.sink.warn('coin_not_found', err.message, {});
      await this.refeed(previous);
    }
  }

  /** Opens the feed of `lists` after the current position (none when a list became empty). */
  private async refeed(lists: Lists): Promise<void> {
    this.lists = lists;
    if (LIST_KEYS.some((k) => lists[k]?.length === 0)) return;
    const { feed } = await feedInto(
      this.deps,
      this.tracking,
      {
        ...lists,
        last_event_id: this.position,
        ...(this.ownPosition !== null ? { last_own_seq: this.ownPosition } : {}),
      },
      this.principal,
      undefined,
      this.resolving,
    );
    if (this.sink.closed) feed.close();
    else this.feed = feed;
  }

  /** The current lists minus `change` ("all" expanded to what the platform knows). */
  private without(change: Lists): Lists {
    const all: Required<Lists> = {
      coins: this.deps.tail.health.coins(),
      event_types: [...EVENT_TYPES],
      sources: [...(this.principal.sources ?? SOURCES)] as Required<Lists>['sources'],
    };
    const out: Lists = { ...this.lists };
    for (const k of LIST_KEYS) {
      const drop = change[k] as string[] | undefined;
      if (!drop) continue;
      const held = (this.lists[k] ?? all[k]) as string[];
      out[k] = held.filter((v) => !drop.includes(v)) as never;
    }
    return out;
  }

  private fail(err: unknown): void {
    if (this.sink.closed) return;
    const e = isApiError(err) ? err : new ApiError('internal');
    if (!isApiError(err)) this.deps.log.warn({ err: String(err) }, 'grpc stream control failed');
    this.sink.terminate(e.code, e.message);
  }

  private close(): void {
    this.feed?.close();
    this.feed = null;
  }
}

/** `a` plus `b`: a list `b` leaves out is unchanged; a list `a` leaves out is "all" and stays so. */
function union(a: Lists, b: Lists): Lists {
  const out: Lists = {};
  for (const k of LIST_KEYS) {
    const x = a[k] as string[] | undefined;
    const y = b[k] as string[] | undefined;
    if (x) out[k] = (y ? [...new Set([...x, ...y])] : x) as never;
  }
  return out;
}

/**
 * A replay by time and the derived series run on StreamEvents. The bidirectional Stream changes
 * its selection while it runs, which neither a range with an end nor a switch between the market
 * and derived streams (two sequences) can follow: it serves trades and books, live with `after_seq`.
 */
function refuseWindow(request: Subscription): void {
  if (request.from_ms !== undefined || request.to_ms !== undefined || request.speed !== undefined)
    throw new ApiError(
      'invalid_params',
      'start_ms, end_ms and speed replay a time range on StreamEvents; Stream is live (resume with after_seq)',
    );
  if (request.event_types?.some(isDerivedKind))
    throw new ApiError(
      'invalid_params',
      'derived series (bar_*, book_snapshot_*) stream on StreamEvents, not Stream',
    );
}

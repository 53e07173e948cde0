/**
 * What one disk-sync connection does with its client's messages (contracts/disksync.ts):
 * `subscribe` → the core's subscribe (coins resolved, `chain:*` scopes, `coin_not_found`) and
 * openFeed (history + live from `from_seq`, in-band notices) into the connection's sink, framed
 * `subscribed` (the position it starts after) … events … `caught_up` (history replayed; live from
 * here) … with `to_time`, `replay_complete` (the subscription ends; the connection closes 1000 when
 * it was the last); `unsubscribe`; `ping` → `pong`. Refusals end the connection with their close code: a
 * message that is not valid JSON or not a valid message 4005, one subscription more than the cap
 * 4006, no known coin 4004, messages faster than the stated rate 4029.
 */
import { prettifyError } from 'zod';
import { ClientMessage, type SubscribeMessage, toSubscription } from '../../contracts/disksync.ts';
import { ApiError, publicMessage, toApiError } from '../../contracts/errors.ts';
import type { ReplayCompleteNotice } from '../../contracts/notices.ts';
import { Subscription } from '../../contracts/subscription.ts';
import type { Logger } from '../../platform/logger.ts';
import type { Nats } from '../../platform/nats.ts';
import { attachFeed, sendStale } from '../core/attach-feed.ts';
import type { BufferedSink } from '../core/buffered-sink.ts';
import type { Principal } from '../core/guard.ts';
import type { LiveTail } from '../core/live-tail.ts';
import type { FeedSubscription } from '../core/replay-source.ts';
import { type Selection, selectionKey } from '../core/selection.ts';
import { subscribe } from '../core/subscribe.ts';
import { parseWith } from '../core/validate.ts';
import type { FramerState } from './framer.ts';

export type SessionSettings = { maxSubscriptions: number; messagesPerSecond: number };

export type SessionDeps = { nats: Nats; tail: LiveTail; log: Logger; settings: SessionSettings };

/** A token bucket of `rate` per second holding up to twice that. */
class MessageRate {
  private tokens: number;
  private at = performance.now();
  constructor(private readonly rate: number) {
    this.tokens = 2 * rate;
  }
  take(): boolean {
    const now = performance.now();
    this.tokens = Math.min(2 * this.rate, this.tokens + ((now - this.at) / 1_000) * this.rate);
    this.at = now;
    if (this.tokens < 1) return false;
    this.tokens -= 1;
    return true;
  }
}

export class Session {
  private readonly feeds = new Map<string, FeedSubscription | null>();
  private readonly selections = new Map<string, Selection>();
  private readonly rate: MessageRate;
  private encodingFixed = false;
  /** Aborts when the connection ends: coin resolution makes no more JetStream requests for it. */
  private readonly gone = new AbortController();

  constructor(
    private readonly deps: SessionDeps,
    private readonly sink: BufferedSink,
    private readonly principal: Principal,
    private readonly state: FramerState,
  ) {
    this.rate = new MessageRate(deps.settings.messagesPerSecond);
  }

  /** Handles one client frame; a refusal ends the connection with its close code. */
  handle(data: Buffer | ArrayBuffer | Buffer[], isBinary: boolean): void {
    if (this.sink.closed) return;
    if (!this.rate.take()) {
      const rate = this.deps.settings.messagesPerSecond;
      this.sink.terminate(
        'rate_limited',
        `Client messages faster than ${rate} per second (burst ${2 * rate}).`,
      );
      return;
    }
    try {
      const msg = parse(data, isBinary);
      if (msg.op === 'ping') control(this.sink, { type: 'pong' });
      else if (msg.op === 'unsubscribe') this.unsubscribe(msg.id);
      else this.subscribe(msg).catch((err) => this.fail(err));
    } catch (err) {
      this.fail(err);
    }
  }

  /** Closes every feed (the connection ended). */
  close(): void {
    this.gone.abort(new ApiError('cancelled', 'the connection closed'));
    for (const f of this.feeds.values()) f?.close();
    this.feeds.clear();
  }

  private fail(err: unknown): void {
    const e = toApiError(err);
    if (e.code === 'internal') this.deps.log.error({ err: String(err) }, 'disksync message failed');
    this.sink.terminate(e.code, publicMessage(e));
  }

  private unsubscribe(id: string): void {
    if (!this.feeds.has(id)) throw new ApiError('invalid_params', `no subscription ${id}`);
    this.feeds.get(id)?.close();
    this.feeds.delete(id);
    this.selections.delete(id);
    this.shareChunks();
    control(this.sink, { type: 'unsubscribed', id });
  }

  private async subscribe(m: SubscribeMessage): Promise<void> {
    if (this.feeds.has(m.id))
      throw new ApiError('invalid_params', `subscription id ${m.id} is already in use`);
    const cap = this.deps.settings.maxSubscriptions;
    if (this.feeds.size >= cap)
      throw new ApiError('subscription_limit', `At most ${cap} subscriptions per connection.`);
    this.fixEncoding(m);
    this.feeds.set(m.id, null);
    const request = parseWith(Subscription, toSubscription(m), 'body');
    const subscribed = await subscribe(this.deps, request, this.principal, {
      signal: this.gone.signal,
    });
    if (!this.feeds.has(m.id) || this.sink.closed) return;
    this.selections.set(m.id, subscribed.selection);
    this.shareChunks();
    // `subscribed` names the position the subscription starts after, once the core has resolved
    // it (a replay's `from_time`; the derived stream's end for a live derived series), before any event.
    const positioned = (after: number) =>
      control(this.sink, { type: 'subscribed', id: m.id, after_seq: after, encoding: this.state.encoding });
    // The feed attaches to the live tail once its history is replayed: that is `caught_up`.
    const sink = this.sink;
    const onLive = (seq: number) => control(sink, { type: 'caught_up', id: m.id, seq });
    // A replay by time that reached its `to`: this subscription ends; the connection closes (1000)
    // once no other subscription is open.
    let complete = false;
    const onComplete = (n: ReplayCompleteNotice) => {
      complete = true;
      sink.notice({ ...n, id: m.id } as ReplayCompleteNotice);
      this.feeds.get(m.id)?.close();
      this.feeds.delete(m.id);
      this.selections.delete(m.id);
      this.shareChunks();
      if (this.feeds.size === 0) sink.finish({});
    };
    const { feed, staleFeeds } = await attachFeed(this.deps, subscribed, sink, {
      what: 'disksync feed',
      warningExtra: { id: m.id },
      onLive,
      onComplete,
      onPositioned: positioned,
    });
    if (complete || !this.feeds.has(m.id) || this.sink.closed) {
      feed.close();
      return;
    }
    this.feeds.set(m.id, feed);
    sendStale(sink, staleFeeds());
  }

  /**
   * With one subscription, the connection's queued events are exactly that selection's, in order:
   * its chunks are shared with every connection of the same encoding and selection (viewer
   * included: accounts never share), cut into messages once (messages.ts). With more, events of
   * several feeds interleave, so it shares none. A change takes effect with a control message
   * (`subscribed`, `unsubscribed`) in the queue, which no shared chunk holds: no chunk mixes the
   * two.
   */
  private shareChunks(): void {
    const only = this.selections.size === 1 ? [...this.selections.values()][0] : undefined;
    this.sink.shareChunksAs(only && `disksync|${this.state.encoding}|${selectionKey(only)}`);
  }

  private fixEncoding(m: SubscribeMessage): void {
    const wanted = m.encoding ?? this.state.encoding;
    if (this.encodingFixed && wanted !== this.state.encoding)
      throw new ApiError(
        'invalid_params',
        `this connection already uses ${this.state.encoding}: one encoding per connection`,
      );
    this.state.encoding = wanted;
    this.encodingFixed = true;
  }
}

/**
 * Queues a control message of this edge (`subscribed`, `caught_up`, `pong`, `unsubscribed`) in
 * order with the events: the sink's notice path, whose framer writes `type` as given (framer.ts).
 */
function control(sink: BufferedSink, m: { type: string } & Record<string, unknown>): void {
  sink.notice(m as unknown as Parameters<BufferedSink['notice']>[0]);
}

const utf8 = new TextDecoder('utf-8', { fatal: true });

function parse(data: Buffer | ArrayBuffer | Buffer[], isBinary: boolean): ClientMessage {
  if (isBinary) throw new ApiError('invalid_params', 'Client messages are JSON text frames.');
  let text: string;
  try {
    text = utf8.decode(Array.isArray(data) ? Buffer.concat(data) : Buffer.from(data as ArrayBuffer));
  } catch {
    throw new ApiError('invalid_params', 'Text frame is not valid UTF-8.');
  }
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    throw new ApiError('invalid_params', 'Message is not valid JSON.');
  }
  const parsed = ClientMessage.safeParse(value);
  if (!parsed.success)
    throw new ApiError('invalid_params', `Invalid message: ${prettifyError(parsed.error)}`);
  return parsed.data;
}

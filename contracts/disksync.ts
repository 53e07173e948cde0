/**
 * The disk-sync WebSocket protocol (`{disk_url}/`): the messages a client sends (JSON text frames,
 * validated here) and the close codes the server ends a connection with (the spec's "WebSocket
 * close codes" table, each with a UTF-8 reason within 123 bytes). A subscribe message maps onto
 * the one subscription contract (contracts/subscription.ts): `from_seq` is its resume position.
 */
import { z } from 'zod';
import { ERROR_CATALOGUE, type ErrorCode, type SendableWsCloseCode } from './errors.ts';
import {
  CoinList,
  EventTypeList,
  ReplaySpeed,
  SourceList,
  StreamPosition,
  type Subscription,
  TimeMs,
  TimeText,
} from './subscription.ts';

/** Largest frame either side sends: a bigger client frame is closed with 1009. */
export const MAX_FRAME_BYTES = 4 * 1024 * 1024;
/** Longest WebSocket close reason (RFC 6455: 125-byte control payload less the 2-byte code). */
export const MAX_REASON_BYTES = 123;

export const Encoding = z.enum(['json', 'msgpack']);
export type Encoding = z.infer<typeof Encoding>;

const SubscriptionId = z.string().min(1, 'give a subscription id').max(64, 'at most 64 characters');

export const SubscribeMessage = z
  .object({
    op: z.literal('subscribe'),
    id: SubscriptionId,
    coins: CoinList.optional(),
    event_types: EventTypeList.optional(),
    sources: SourceList.optional(),
    /** Resume after this stream sequence (the `seq` of the last event kept); absent: live only. */
    from_seq: StreamPosition.optional(),
    /** Resume the account's own events (`"own":true`) after this `OWN` sequence; absent: by the time of `from_seq`'s event. */
    from_own_seq: StreamPosition.optional(),
    /** A replay by time (Unix ms or ISO 8601): from the first event stored at or after `from_time`. */
    from_time: z.union([TimeMs, TimeText]).optional(),
    /** Ends the subscription after the last event stored at or before it (`replay_complete`). */
    to_time: z.union([TimeMs, TimeText]).optional(),
    /** Replay pace: `max` (default) or the recorded gaps divided by this. */
    speed: ReplaySpeed.optional(),
    /** The connection's encoding, fixed by its first subscribe (default json). */
    encoding: Encoding.optional(),
  })
  .strict();
export type SubscribeMessage = z.infer<typeof SubscribeMessage>;

export const UnsubscribeMessage = z.object({ op: z.literal('unsubscribe'), id: SubscriptionId }).strict();
export const PingMessage = z.object({ op: z.literal('ping') }).strict();

export const ClientMessage = z.discriminatedUnion('op', [SubscribeMessage, UnsubscribeMessage, PingMessage]);
export type ClientMessage = z.infer<typeof ClientMessage>;

/**
 * The transport-neutral subscription a subscribe message asks for, before the contract's checks
 * across fields (`to_time` before `from_time`), which the edge applies (gateways/core/validate.ts).
 */
export function toSubscription(m: SubscribeMessage): Subscription {
  return {
    ...(m.coins ? { coins: m.coins } : {}),
    ...(m.event_types ? { event_types: m.event_types } : {}),
    ...(m.sources ? { sources: m.sources } : {}),
    ...(m.from_seq !== undefined ? { last_event_id: m.from_seq } : {}),
    ...(m.from_own_seq !== undefined ? { last_own_seq: m.from_own_seq } : {}),
    ...(m.from_time !== undefined ? { from_ms: m.from_time } : {}),
    ...(m.to_time !== undefined ? { to_ms: m.to_time } : {}),
    ...(m.speed !== undefined ? { speed: m.speed } : {}),
  };
}

/**
 * Why the server closes, beyond the catalogue rows (whose `ws` column is their close code):
 * transport conditions that have no error row of their own.
 */
// biome-ignore format: a table
export const DISKSYNC_CLOSES = {
  shutdown:      { ws: 1001, reason: 'Server shutting down; reconnect and resume with from_seq.' },
  frame_too_big: { ws: 1009, reason: 'Frame over 4 MB.' },
  too_slow:      { ws: 1013, reason: 'Client too slow to keep up; reconnect and resume with from_seq.' },
  internal:      { ws: 1011, reason: 'Internal server error.' },
} as const satisfies Record<string, { ws: SendableWsCloseCode; reason: string }>;

/** The close code of a catalogue error on this edge. */
export const closeCodeOf = (code: ErrorCode): SendableWsCloseCode => ERROR_CATALOGUE[code].ws;

/** `text` cut to at most 123 UTF-8 bytes (never inside a character). */
export function closeReason(text: string): string {
  if (Buffer.byteLength(text) <= MAX_REASON_BYTES) return text;
  let out = '';
  for (const ch of text) {
    if (Buffer.byteLength(out + ch) > MAX_REASON_BYTES - 3) break;
    out += ch;
  }
  return `${out}...`;
}

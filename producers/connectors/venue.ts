/**
 * What a venue adapter is: how to reach the venue (URL, subscription messages, heartbeat) and how
 * to turn one frame into canonical events (with the existing mappers of producers/normalizer/)
 * handed to `emit` under a message id derived from the venue's own ids, so that a replayed frame
 * or a reconnect never publishes an event twice. One file per venue.
 */
import type { MarketEvent, Source } from '../../contracts/events.ts';
import type { Logger } from '../../platform/logger.ts';
import { NormalizeError } from '../normalizer/index.ts';

/** A frame's fate: `ok` (events emitted, or a frame with nothing to publish), `duplicate` (already published). */
export type FrameOutcome = 'ok' | 'duplicate';

/**
 * Hands an event to the publisher under `id` (its `Nats-Msg-Id`, built by `messageId`).
 * `position` is the venue's own increasing id or time for the event's symbol and channel (Binance
 * trade `t`, book `u`; Hyperliquid `time`) and `tie` what tells apart events at one position
 * (Hyperliquid `tid`). Returns false when `MD` already holds the event (log-floor.ts): not sent.
 */
export type Emit = (event: MarketEvent, id: string, position: number, tie?: string) => boolean;

/**
 * `<venue>.<symbol>.<channel>.<position>[.<tie>]`: the one layout of connector message ids, read
 * back at start-up by log-floor.ts.
 */
export function messageId(
  venue: Source,
  symbol: string,
  channel: MarketEvent['event_type'],
  position: number | string,
  tie?: string,
): string {
  return tie === undefined
    ? `${venue}.${symbol}.${channel}.${position}`
    : `${venue}.${symbol}.${channel}.${position}.${tie}`;
}

export type Frame = {
  text: string;
  /** When it arrived, Unix ms (the mappers' time for payloads without one). */
  receivedAtMs: number;
};

export interface VenueAdapter {
  readonly venue: Source;
  readonly url: string;
  /** The symbols subscribed, spelled as the venue's events (and MD subjects) spell them. */
  readonly symbols: readonly string[];
  /** Messages sent after every (re)connect. */
  subscriptions(): string[];
  readonly heartbeat?: { intervalMs: number; message: string };
  /** Throws (a `NormalizeError` naming the field) when the frame is not in the documented format. */
  onFrame(frame: Frame): FrameOutcome;
  stop?(): void;
}

export type VenueDeps = {
  symbols: readonly string[];
  emit: Emit;
  log: Logger;
  /** Levels per side of published books. */
  bookDepth: number;
};

/** Parses a frame's JSON; a frame that is not JSON is a format error of the whole frame. */
export function parseFrame(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    throw new NormalizeError('invalid_value', `frame is not JSON: ${text.slice(0, 60)}`, 'frame');
  }
}

/**
 * Non-terminal notices a market-data stream sends (SSE `event: notice`, and the equivalent on
 * every other transport). A position that cannot be resumed exactly is answered explicitly, never
 * silently: the notice names the position the feed resumed after instead.
 */
import { z } from 'zod';

export const NOTICE_CODES = [
  'position_not_retained',
  'position_beyond_end',
  'feed_recovered',
  'record_skipped',
] as const;
export const NoticeCode = z.enum(NOTICE_CODES);
export type NoticeCode = z.infer<typeof NoticeCode>;

/** The answer to a resume position older than the stream retains, or beyond its end. */
export const PositionNotice = z.object({
  code: z.enum(['position_not_retained', 'position_beyond_end']),
  message: z.string(),
  requested_last_event_id: z.number().int().nonnegative(),
  /** The valid position the feed resumes after (use it as Last-Event-ID). */
  resumed_after: z.number().int().nonnegative(),
  /** The stream's oldest and newest retained sequences when the position was resolved. */
  first_seq: z.number().int().nonnegative(),
  last_seq: z.number().int().nonnegative(),
});
export type PositionNotice = z.infer<typeof PositionNotice>;

/** A coin's feed that was reported stale (`feed_stale`) has events again; `source` names the feed. */
export const FeedRecoveredNotice = z.object({
  code: z.literal('feed_recovered'),
  message: z.string(),
  coin: z.string(),
  source: z.string().optional(),
});
export type FeedRecoveredNotice = z.infer<typeof FeedRecoveredNotice>;

/**
 * A stored record that is not a valid event (no market data in it) took this place in the stream:
 * `resumed_after` is its sequence, so a client that keeps its position stays exact.
 */
export const RECORD_SKIPPED = 'record_skipped';

export type Notice = PositionNotice | FeedRecoveredNotice;

export const feedRecovered = (coin: string, source?: string): FeedRecoveredNotice => ({
  code: 'feed_recovered',
  message: `${source ? `${source} ` : ''}${coin} events are flowing again`,
  coin,
  ...(source ? { source } : {}),
});

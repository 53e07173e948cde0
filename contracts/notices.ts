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
  'replay_complete',
  'replay_gap_capped',
  'region_lag',
] as const;
export const NoticeCode = z.enum(NOTICE_CODES);
export type NoticeCode = z.infer<typeof NoticeCode>;

/** The answer to a resume position older than the stream retains, or beyond its end. */
export const PositionNotice = z.object({
  code: z.enum(['position_not_retained', 'position_beyond_end']),
  message: z.string(),
  requested_last_event_id: z.number().int().nonnegative(),
  /** A replay by time: the `from` asked for (Unix ms); `requested_last_event_id` is then 0. */
  requested_from_ms: z.number().int().nonnegative().optional(),
  /** The valid position the feed resumes after (use it as Last-Event-ID). */
  resumed_after: z.number().int().nonnegative(),
  /** The stream's oldest and newest retained sequences when the position was resolved. */
  first_seq: z.number().int().nonnegative(),
  last_seq: z.number().int().nonnegative(),
  /** `own`: the position is the account's own events' (`OWN` sequences); absent: the stream's. */
  feed: z.literal('own').optional(),
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

/**
 * The last message of a replay with an end (`to`): every event the stream stored up to `to` that
 * the selection takes has been delivered. `last_seq` is the position the replay covered (resume
 * after it to go on); `count` the events delivered by this stream (since its start or resume).
 */
export const ReplayCompleteNotice = z.object({
  code: z.literal('replay_complete'),
  message: z.string(),
  last_seq: z.number().int().nonnegative(),
  count: z.number().int().nonnegative(),
});
export type ReplayCompleteNotice = z.infer<typeof ReplayCompleteNotice>;

/**
 * A paced replay met a recorded gap longer than the bound (`REPLAY_MAX_GAP_MS`): it waited
 * `waited_ms` (the bound divided by the speed) instead of `gap_ms` divided by the speed before
 * the event `seq`.
 */
export const ReplayGapCappedNotice = z.object({
  code: z.literal('replay_gap_capped'),
  message: z.string(),
  seq: z.number().int().nonnegative(),
  gap_ms: z.number().nonnegative(),
  waited_ms: z.number().nonnegative(),
});
export type ReplayGapCappedNotice = z.infer<typeof ReplayGapCappedNotice>;

/**
 * In a region other than home: the position asked for exists in the home region but this region's
 * copy of the stream has not received it yet (its mirror is behind, or the link is down). The feed
 * resumes after it all the same, exactly as it would at home (the events up to it are passed over
 * as they arrive), and goes on: never `position_beyond_end` for a position the home region holds.
 * `last_seq`: this region's newest; `home_last_seq`: the home region's (absent: the home region
 * could not be asked, the link being down).
 */
export const RegionLagNotice = z.object({
  code: z.literal('region_lag'),
  message: z.string(),
  requested_last_event_id: z.number().int().nonnegative(),
  resumed_after: z.number().int().nonnegative(),
  first_seq: z.number().int().nonnegative(),
  last_seq: z.number().int().nonnegative(),
  home_last_seq: z.number().int().nonnegative().optional(),
  /** `own`: the positions are the account's own events' (`OWN` sequences). */
  feed: z.literal('own').optional(),
});
export type RegionLagNotice = z.infer<typeof RegionLagNotice>;

export type Notice =
  | PositionNotice
  | FeedRecoveredNotice
  | ReplayCompleteNotice
  | ReplayGapCappedNotice
  | RegionLagNotice;

/** The longest recorded gap (ms of stream time) a paced replay waits out; longer ones are capped. */
export const REPLAY_MAX_GAP_MS = 5_000;

export const replayComplete = (lastSeq: number, count: number): ReplayCompleteNotice => ({
  code: 'replay_complete',
  message: `replay complete: ${count} events up to ${lastSeq}`,
  last_seq: lastSeq,
  count,
});

export const feedRecovered = (coin: string, source?: string): FeedRecoveredNotice => ({
  code: 'feed_recovered',
  message: `${source ? `${source} ` : ''}${coin} events are flowing again`,
  coin,
  ...(source ? { source } : {}),
});

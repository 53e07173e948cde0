/**
 * Time as a position: an instant mapped to a stream sequence by the stream itself. JetStream keeps
 * the time it stored each message and starts a consumer at the first message stored at or after
 * an instant (`opt_start_time`); a consumer just created reports, as delivered, the sequence
 * before its first message. So one request answers "the last sequence stored before `ms`", exactly
 * as the stream orders its messages (the stored times are the stream's, never a producer's), and
 * a replay by time becomes a resume by sequence: the same history/live merge, the same `seq` on
 * every event, the same exact resume after a cut.
 *
 * The consumer is a throwaway (memory storage, no acks, deleted at once, and left to expire by
 * its inactivity threshold if the delete is lost).
 */
import type { PositionNotice } from '../../contracts/notices.ts';
import type { Logger } from '../../platform/logger.ts';
import type { Nats } from '../../platform/nats.ts';
import { seqBefore } from '../../platform/stream-time.ts';

export type TimeStart = { after: number; notice: PositionNotice | null };

/**
 * Where a replay from `fromMs` starts: after the last event stored before it. A `from` older than
 * what the stream still retains (events before it were removed) starts at the first retained
 * event with `position_not_retained`; a `from` in the future starts after the newest event and
 * waits for live.
 */
export async function startAtTime(
  nats: Nats,
  stream: string,
  fromMs: number,
  log?: Logger,
): Promise<TimeStart> {
  // Both asked at once: a replay's time to its first event is one round trip shorter.
  const [{ state }, after] = await Promise.all([
    nats.jsm.streams.info(stream),
    seqBefore(nats, stream, fromMs, log),
  ]);
  const firstMs = state.first_ts ? Date.parse(state.first_ts) : Number.NaN;
  if (state.first_seq > 1 && fromMs < firstMs)
    return {
      after: Math.max(after, state.first_seq - 1),
      notice: {
        code: 'position_not_retained',
        message: `events from ${new Date(fromMs).toISOString()} are no longer retained; replaying from the oldest retained event, ${state.first_seq} (${state.first_ts})`,
        requested_last_event_id: 0,
        requested_from_ms: fromMs,
        resumed_after: Math.max(after, state.first_seq - 1),
        first_seq: state.first_seq,
        last_seq: state.last_seq,
      },
    };
  return { after, notice: null };
}

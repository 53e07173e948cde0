/**
 * A position beyond this region's copy of a stream, in a region other than home (app/region-copies.ts):
 * the home region is asked for its newest sequence. A position it holds is this region's mirror
 * being behind, not a position that does not exist: the feed resumes after it (the events up to it
 * are passed over as the mirror receives them) with a non-terminal `region_lag` notice, so a
 * client moved from the home region resumes exactly. While the home region cannot be asked (the
 * link is down), the position is taken as the client gives it, said the same way without
 * `home_last_seq`. A position beyond the home region's end too stays `position_beyond_end`.
 */
import type { JetStreamManager } from '@nats-io/jetstream';
import { inTime } from '../../platform/in-time.ts';
import type { Resumed, StreamBounds } from './resume-merge.ts';

/** How long the home region is given to answer, ms: one round trip across the link, and margin. */
const HOME_ASK_MS = 2_000;

export async function regionLag(
  home: JetStreamManager,
  stream: string,
  requested: number,
  local: StreamBounds,
  beyondEnd: Resumed,
): Promise<Resumed> {
  const homeLast = await inTime(
    home.streams.info(stream).then((info) => info.state.last_seq),
    HOME_ASK_MS,
  );
  if (homeLast !== null && requested > homeLast) return beyondEnd;
  const behind =
    homeLast === null ? 'the home region cannot be reached' : `the home region is at ${homeLast}`;
  return {
    after: requested,
    notice: {
      code: 'region_lag',
      message: `event ${requested} has not reached this region yet (this region's copy ends at ${local.last_seq}; ${behind}); resuming after ${requested} as it arrives`,
      requested_last_event_id: requested,
      resumed_after: requested,
      first_seq: local.first_seq,
      last_seq: local.last_seq,
      ...(homeLast !== null ? { home_last_seq: homeLast } : {}),
    },
  };
}

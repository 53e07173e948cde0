/**
 * When a filtered history read has reached its goal without being handed a message at or past it.
 *
 * A history read decides "done" on the sequence of a message it is given. A filtered consumer is
 * given matching messages only: when no matching message lies between its position and its goal,
 * it waits for the next matching one, which may never come, and the client never sees the end of
 * its history (disk-sync's `caught_up`, the live handover of every transport). The stream answers
 * the question directly: the first message at or after a sequence whose subject matches the
 * filter (`next_by_subj`, one request the server answers from its index). If that message is past
 * the goal, or there is none, everything the reader would deliver up to the goal has been
 * delivered: the read has reached the goal.
 *
 * The answer holds only for the position it was asked from. If the reader delivered anything while
 * the request was in flight, the answer is discarded, and the next quiet spell asks again. So every
 * message the reader delivered lies at or below the position reported (no duplicate when the ring
 * or the live tail follows on from it), and no matching message in between is passed over (no gap).
 *
 * It asks once when the read starts, then only once the reader has been quiet (QUIET_MS) since its
 * last delivery: a catch-up that flows costs no requests, one that stalls short of its goal costs
 * one per stall.
 */
import type { StoredMsg } from '@nats-io/jetstream';
import type { Logger } from '../../platform/logger.ts';
import type { Nats } from '../../platform/nats.ts';

/**
 * Quiet time (ms) the reader must keep before the stream is asked again: a timer of this period
 * checks whether anything was delivered since it was set (a counter, so a delivery costs no clock
 * read), so the question is asked between one and two periods after the last delivery.
 */
const QUIET_MS = 100;
/** Wait (ms) before asking again after a failed request (NATS away: the reader retries too). */
const RETRY_MS = 1_000;

export type HistoryEndWatch = {
  /** The reader delivered a message (it moved: an answer in flight no longer holds). */
  delivered(): void;
  stop(): void;
};

export type HistoryEndOptions = {
  stream: string;
  filter: string;
  /** The last sequence the reader has delivered (or started after). */
  position: () => number;
  /** The sequence the read must reach, as of now. */
  goal: () => number;
  /** Called once, with the goal, when no matching message lies between the position and it. */
  reached: (goal: number) => void;
};

/** The first sequence ≥ `from` whose subject matches `filter`; null when there is none yet. */
export async function nextMatchingSeq(
  nats: Nats,
  stream: string,
  filter: string,
  from: number,
): Promise<number | null> {
  // nats.js types MSG.GET's request without `next_by_subj`; nats-server answers it since 2.9.
  const query = { seq: from, next_by_subj: filter } as unknown as { seq: number };
  const msg: StoredMsg | null = await nats.jsm.streams.getMessage(stream, query);
  return msg ? msg.seq : null;
}

export function watchHistoryEnd(nats: Nats, log: Logger, o: HistoryEndOptions): HistoryEndWatch {
  let stopped = false;
  let asking = false;
  let deliveries = 0;
  let armedAt = 0;
  let timer: NodeJS.Timeout | null = null;

  const arm = (ms: number) => {
    if (stopped || timer) return;
    armedAt = deliveries;
    timer = setTimeout(() => {
      timer = null;
      if (deliveries !== armedAt) arm(QUIET_MS);
      else void ask();
    }, ms);
    timer.unref();
  };

  const ask = async () => {
    if (stopped || asking) return;
    const from = o.position() + 1;
    const goal = o.goal();
    if (from > goal) return; // the reader reaches the goal by itself
    asking = true;
    const seen = deliveries;
    try {
      const next = await nextMatchingSeq(nats, o.stream, o.filter, from);
      if (stopped || deliveries !== seen) return; // moved meanwhile: asked again once quiet
      if (next === null || next > goal) {
        stopped = true;
        o.reached(goal);
      }
    } catch (err) {
      log.debug({ err: String(err), stream: o.stream, from }, 'history end: cannot ask the stream');
      arm(RETRY_MS);
    } finally {
      asking = false;
      if (deliveries !== seen) arm(QUIET_MS);
    }
  };

  void ask();
  return {
    delivered() {
      deliveries++;
      arm(QUIET_MS);
    },
    stop() {
      stopped = true;
      if (timer) clearTimeout(timer);
      timer = null;
    },
  };
}

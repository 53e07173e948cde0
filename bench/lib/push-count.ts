/**
 * The raw baseline of the replay benchmarks: an ordered push consumer with a callback that only
 * counts, from the stream's start until `targetSeq` arrives (or `timeoutMs` passes).
 */
import type { JetStreamClient } from '@nats-io/jetstream';

export type PushCount = {
  events: number;
  lastSeq: number;
  ms: number;
  firstEventMs: number | null;
  reachedTarget: boolean;
};

export async function countWithPushConsumer(
  js: JetStreamClient,
  stream: string,
  filter: string,
  targetSeq: number,
  timeoutMs: number,
): Promise<PushCount> {
  const t0 = performance.now();
  let events = 0;
  let lastSeq = 0;
  let firstAt = 0;
  let doneAt = 0;
  let resolveDone: () => void = () => {};
  const done = new Promise<void>((r) => (resolveDone = r));
  const consumer = await js.consumers.getPushConsumer(stream, { filter_subjects: filter });
  const messages = await consumer.consume({
    callback: (m) => {
      if (!firstAt) firstAt = performance.now();
      events++;
      lastSeq = m.info.streamSequence;
      if (lastSeq >= targetSeq && !doneAt) {
        doneAt = performance.now();
        resolveDone();
      }
    },
  });
  const timer = setTimeout(resolveDone, timeoutMs);
  await done;
  clearTimeout(timer);
  messages.stop();
  return {
    events,
    lastSeq,
    ms: (doneAt || performance.now()) - t0,
    firstEventMs: firstAt ? Math.round(firstAt - t0) : null,
    reachedTarget: doneAt > 0,
  };
}

/** The JSON fields both benchmarks report for a push-consumer run. */
export function pushCountFields(r: PushCount) {
  return {
    events: r.events,
    last_seq: r.lastSeq,
    seconds: Math.round(r.ms) / 1_000,
    first_event_ms: r.firstEventMs,
    events_per_s: Math.round(r.events / (r.ms / 1_000)),
  };
}

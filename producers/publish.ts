/**
 * The one publish helper: canonical events → compact JSON (contracts/event-wire.ts) on their
 * `md.*` subject (or the one given: `sim.*`, an account's) with
 * `Nats-Msg-Id` set from the deterministic event id, so a retried publish is never stored twice.
 * A batch is pipelined (all in flight, then all acks awaited); failed messages are retried, in
 * their original order, until they are stored or `signal` aborts. Returns how many messages this
 * call stored: a message JetStream reports as a duplicate (its id was stored before) is not counted.
 */
import type { JetStreamClient } from '@nats-io/jetstream';
import { encodeStoredEvent } from '../contracts/event-wire.ts';
import type { MarketEvent } from '../contracts/events.ts';
import { mdSubject } from '../contracts/subjects.ts';
import { sleepBackoff } from '../platform/backoff.ts';
import type { Logger } from '../platform/logger.ts';

/** `subject` defaults to the event's `md.*` subject. */
export type Outgoing = { event: MarketEvent; id: string; ingestUs: number; subject?: string };

export const nowUs = (): number => Math.round((performance.timeOrigin + performance.now()) * 1_000);

export async function publishEvents(
  js: JetStreamClient,
  batch: Outgoing[],
  log: Logger,
  signal?: AbortSignal,
): Promise<number> {
  let pending = batch;
  let attempt = 0;
  let stored = 0;
  while (pending.length > 0) {
    const results = await Promise.allSettled(
      pending.map((o) =>
        js.publish(
          o.subject ?? mdSubject(o.event.source, o.event.symbol, o.event.event_type),
          encodeStoredEvent(o.event, { ingest_us: o.ingestUs, publish_us: nowUs() }),
          {
            msgID: o.id,
            timeout: 2_000,
          },
        ),
      ),
    );
    const failed = pending.filter((_, i) => results[i]?.status === 'rejected');
    for (const r of results) if (r.status === 'fulfilled' && !r.value.duplicate) stored++;
    if (failed.length === 0 || signal?.aborted) break;
    if (attempt === 0)
      log.warn(
        {
          failed: failed.length,
          reason: String((results.find((r) => r.status === 'rejected') as PromiseRejectedResult).reason),
        },
        'publish failed; retrying',
      );
    pending = failed;
    await sleepBackoff(attempt++, { maxMs: 1_000 });
  }
  return stored;
}

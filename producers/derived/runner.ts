/**
 * The derived producer: reads the platform's feed on `MD` in order (`md.<source>.<symbol>.<type>`,
 * never accounts' own subjects), feeds the pure builder, and publishes what closes to `DERIVED`
 * with a message id per (kind, source, symbol, start). Starts from `readResumePoint` (what
 * `DERIVED` holds); any failed publish stops the read and starts over from there, so a span is
 * never skipped and, with the floors and message ids, never stored twice.
 */
import { type DerivedEvent, derivedStartMs } from '../../contracts/derived.ts';
import { parseStoredEvent } from '../../contracts/event-wire.ts';
import { derivedMsgId } from '../../contracts/message-ids.ts';
import { STREAMS } from '../../contracts/streams.ts';
import { derivedSubject, MD_ALL, parseMdSubject } from '../../contracts/subjects.ts';
import { sleepBackoff } from '../../platform/backoff.ts';
import type { Logger } from '../../platform/logger.ts';
import type { Nats } from '../../platform/nats.ts';
import { type OrderedReader, readOrdered } from '../../platform/ordered-reader.ts';
import { DerivedBuilder, type StoredFields } from './derived-builder.ts';
import { readResumePoint } from './resume.ts';

/** Publishes in flight before the reader waits for their acknowledgements. */
const MAX_IN_FLIGHT = 512;

export type DerivedRunner = {
  stop(): Promise<void>;
  /** Derived events acknowledged by the stream so far (this process). */
  published(): number;
  /** `MD` events read so far (this process, every pass). */
  read(): number;
  /** The next `MD` sequence the current pass reads (0 before it has started). */
  position(): number;
  /** Publishes the stream dropped as already stored (0 unless the resume floors failed). */
  duplicates(): number;
};

const encoder = new TextEncoder();

export function startDerivedRunner(nats: Nats, log: Logger, opts: { batch?: number } = {}): DerivedRunner {
  let stopped = false;
  let reader: OrderedReader | null = null;
  let published = 0;
  let read = 0;
  let duplicates = 0;
  let wake: (() => void) | null = null;

  /** One pass: from the resume point until stopped or a publish fails. */
  const pass = async (): Promise<void> => {
    const resume = await readResumePoint(nats);
    log.info({ fromSeq: resume.fromSeq, series: resume.floors.size }, 'derived producer reading MD');
    const builder = new DerivedBuilder(resume.floors);
    let inFlight: Promise<unknown>[] = [];
    let failed: unknown = null;
    const ended = new Promise<void>((resolve) => {
      wake = resolve;
    });
    const fail = (err: unknown) => {
      if (failed) return;
      failed = err;
      reader?.stop();
      wake?.();
    };
    const publish = (e: DerivedEvent) => {
      const subject = derivedSubject(e.source, e.symbol, e.event_type);
      const id = derivedMsgId(e.event_type, e.source, e.symbol, derivedStartMs(e));
      inFlight.push(
        nats.js.publish(subject, encoder.encode(JSON.stringify(e)), { msgID: id }).then((ack) => {
          published++;
          // Only a redone publish (floors wrong, or a second producer) lands here: the stream kept the first.
          if (ack.duplicate) {
            duplicates++;
            log.warn({ subject, id }, 'derived producer: published again (duplicate dropped by the stream)');
          }
        }, fail),
      );
    };
    reader = readOrdered(
      nats,
      {
        stream: STREAMS.MD,
        filter: MD_ALL,
        startSeq: resume.fromSeq,
        ...(opts.batch ? { batch: opts.batch } : {}),
      },
      (msg, seq) => {
        if (failed) return undefined;
        read++;
        const parts = parseMdSubject(msg.subject);
        const event = parts && parseStoredEvent<StoredFields>(msg.data);
        if (!parts || !event) return undefined;
        for (const e of builder.push(seq, parts.source, parts.symbol, parts.eventType, event)) publish(e);
        if (inFlight.length < MAX_IN_FLIGHT) return undefined;
        const waiting = inFlight;
        inFlight = [];
        return Promise.all(waiting).then(() => undefined);
      },
      log,
    );
    await Promise.race([reader.done, ended]);
    reader.stop();
    await reader.done;
    await Promise.all(inFlight);
    if (failed) throw failed;
  };

  const done = (async () => {
    for (let attempt = 0; !stopped; attempt++) {
      try {
        await pass();
      } catch (err) {
        if (stopped) break;
        log.warn({ err: String(err) }, 'derived producer: publish failed; resuming from DERIVED');
        await sleepBackoff(attempt, { maxMs: 2_000 });
      }
    }
  })();

  return {
    async stop() {
      stopped = true;
      reader?.stop();
      wake?.();
      await done;
    },
    published: () => published,
    read: () => read,
    duplicates: () => duplicates,
    position: () => reader?.nextSeq() ?? 0,
  };
}

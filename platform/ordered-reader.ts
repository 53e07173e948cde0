/**
 * Reads a stream in order from a sequence with an ordered (ephemeral, pull) consumer, and keeps
 * reading across NATS restarts: after a reconnect (the server may have lost the ephemeral
 * consumer) or any failure, it opens a new consumer from the next sequence. Never a duplicate: a
 * message at or below the last one seen is skipped.
 */
import type { JsMsg } from '@nats-io/jetstream';
import { sleepBackoff } from './backoff.ts';
import type { Logger } from './logger.ts';
import type { Nats } from './nats.ts';

export type OrderedReaderOptions = {
  stream: string;
  /** One filter subject (nats-server 2.9 allows one per consumer). */
  filter: string;
  /** First stream sequence wanted (≥ 1). */
  startSeq: number;
  /** Messages per pull. */
  batch?: number;
};

export type OrderedReader = {
  /** Stops reading; no callback runs after it returns. */
  stop(): void;
  /** Sequence the next message must have, at least. */
  nextSeq(): number;
  /** Settles when the loop has ended. */
  done: Promise<void>;
};

/** `onMessage` may return a promise: reading waits for it (backpressure). */
export function readOrdered(
  nats: Nats,
  opts: OrderedReaderOptions,
  onMessage: (msg: JsMsg) => void | Promise<void>,
  log: Logger,
): OrderedReader {
  let next = Math.max(1, opts.startSeq);
  let stopped = false;
  let current: { stop(): void } | null = null;
  const unsubscribe = nats.onReconnect(() => current?.stop());

  const done = (async () => {
    let failures = 0;
    while (!stopped) {
      try {
        const consumer = await nats.js.consumers.get(opts.stream, {
          filter_subjects: opts.filter,
          opt_start_seq: next,
        });
        if (stopped) break;
        const messages = await consumer.consume({ max_messages: opts.batch ?? 10_000 });
        current = messages;
        if (stopped) messages.stop();
        for await (const msg of messages) {
          if (stopped) break;
          const seq = msg.info.streamSequence;
          if (seq < next) continue;
          next = seq + 1;
          failures = 0;
          const pending = onMessage(msg);
          if (pending) await pending;
        }
      } catch (err) {
        if (!stopped)
          log.warn(
            { err: String(err), stream: opts.stream, filter: opts.filter, next },
            'ordered reader failed; reopening',
          );
      }
      current = null;
      if (!stopped) await sleepBackoff(failures++, { maxMs: 2_000 });
    }
    unsubscribe();
  })();

  return {
    stop() {
      stopped = true;
      current?.stop();
    },
    nextSeq: () => next,
    done,
  };
}

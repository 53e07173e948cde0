/**
 * Reads a stream in order from a sequence with an ordered (ephemeral, pull) consumer, and keeps
 * reading across NATS restarts: after a reconnect (the server may have lost the ephemeral
 * consumer) or any failure, it opens a new consumer from the next sequence. Never a duplicate: a
 * message at or below the last one seen is skipped.
 *
 * Two ways to pull. By default one standing `consume` (the live tail): messages flow as they are
 * stored, and a handler that waits past one batch stops the consumer, reopened from `next` once it
 * has caught up. `paced` (history reads, whose handler waits on a client's socket): explicit pulls
 * (platform/pull-consumer.ts, without nats.js's per-message wrapping: this is the catch-up hot
 * path), two of half a batch outstanding, the next asked once one is delivered and the handler is
 * not waiting; a waiting handler asks for nothing more, so backpressure costs neither a new
 * consumer nor more than one batch held or on its way.
 */
import type { Consumer, JsMsg } from '@nats-io/jetstream';
import { sleepBackoff } from './backoff.ts';
import type { Logger } from './logger.ts';
import type { Nats } from './nats.ts';
import { LOST_AFTER_MISSED_HEARTBEATS, PullConsumer, type PulledMsg } from './pull-consumer.ts';

export type OrderedReaderOptions = {
  stream: string;
  /** One filter subject (nats-server 2.9 allows one per consumer); '' reads every message. */
  filter: string;
  /** First stream sequence wanted (≥ 1). */
  startSeq: number;
  /** Messages per pull. */
  batch?: number;
  /** One batch at a time, the next once the handler has taken the last (see the file comment). */
  paced?: boolean;
};

export type OrderedReader = {
  /** Stops reading; no callback runs after it returns. */
  stop(): void;
  /** Sequence the next message must have, at least. */
  nextSeq(): number;
  /** Settles when the loop has ended. */
  done: Promise<void>;
};

/**
 * Stops `consumed` once its heartbeats stop: on a cluster, the (R1) consumer may live on a node
 * that died while this connection is on another one; nats.js then only keeps asking the lost
 * consumer and never recreates it, so the reader would stall silently. Stopped, the loop below
 * reopens it from the next sequence on a live node.
 */
async function stopWhenLost(consumed: {
  status(): AsyncIterable<{ type: string; count?: number }>;
  stop(): void;
}): Promise<boolean> {
  try {
    for await (const s of consumed.status())
      if (s.type === 'heartbeats_missed' && (s.count ?? 0) >= LOST_AFTER_MISSED_HEARTBEATS) {
        consumed.stop();
        return true;
      }
  } catch {
    // the status stream ends with the consumer
  }
  return false;
}

/** What a paced read's handler is given: the stored message (its sequence beside it). */
export type StoredMsg = PulledMsg;
type Handler<M> = (msg: M, seq: number) => void | Promise<void>;

/**
 * `onMessage` is given each message and its stream sequence; it may return a promise: reading
 * waits for it (backpressure).
 */
export function readOrdered(
  nats: Nats,
  opts: OrderedReaderOptions & { paced?: false },
  onMessage: Handler<JsMsg>,
  log: Logger,
): OrderedReader;
export function readOrdered(
  nats: Nats,
  opts: OrderedReaderOptions & { paced: true },
  onMessage: Handler<StoredMsg>,
  log: Logger,
): OrderedReader;
export function readOrdered(
  nats: Nats,
  opts: OrderedReaderOptions,
  onMessage: Handler<JsMsg> | Handler<StoredMsg>,
  log: Logger,
): OrderedReader {
  // A consume hands its handler JsMsgs, a paced read StoredMsgs (the overloads above).
  const call = onMessage as Handler<StoredMsg>;
  const batch = opts.batch ?? 10_000;
  let next = Math.max(1, opts.startSeq);
  let stopped = false;
  let current: { stop(): void } | null = null;
  /** Counts reconnects and lost consumers: a paced read opens a new consumer after either. */
  let interruptions = 0;
  const unsubscribe = nats.onReconnect(() => {
    interruptions++;
    current?.stop();
  });

  // Messages arrive by callback (no promise per message: this is the catch-up hot path). While a
  // promise returned by `onMessage` is pending, they wait in `held`: within the batch fetched
  // (paced), or, with `consume`, up to one batch, past which the consumer is stopped and reopened
  // from `next` once `held` is processed. Taken from `heldAt` on, not by `shift` (which moves
  // every message after it: a batch's worth per message taken).
  const held: StoredMsg[] = [];
  const heldSeqs: number[] = [];
  let heldAt = 0;
  const COMPACT_AT = 4_096;
  let busy: Promise<void> | null = null;
  let failures = 0;
  const handle = (msg: StoredMsg, seq: number): Promise<void> | undefined => {
    if (seq < next) return undefined;
    next = seq + 1;
    return call(msg, seq) ?? undefined;
  };
  const drain = async (first: Promise<void>): Promise<void> => {
    try {
      await first;
      while (heldAt < held.length && !stopped) {
        const msg = held[heldAt] as StoredMsg;
        const seq = heldSeqs[heldAt] as number;
        if (++heldAt === held.length) {
          held.length = 0;
          heldSeqs.length = 0;
          heldAt = 0;
        } else if (heldAt >= COMPACT_AT) {
          // A long drain that arrivals keep fed: what was taken is let go.
          held.splice(0, heldAt);
          heldSeqs.splice(0, heldAt);
          heldAt = 0;
        }
        const pending = handle(msg, seq);
        if (pending) await pending;
      }
    } catch (err) {
      log.error({ err: String(err), stream: opts.stream }, 'ordered reader: message handler failed');
    } finally {
      held.length = 0;
      heldSeqs.length = 0;
      heldAt = 0;
      busy = null;
    }
  };
  const take = (msg: StoredMsg, seq: number): void => {
    if (stopped) return;
    failures = 0;
    if (busy) {
      held.push(msg);
      heldSeqs.push(seq);
      return;
    }
    try {
      const pending = handle(msg, seq);
      if (pending) busy = drain(pending);
    } catch (err) {
      log.error({ err: String(err), stream: opts.stream }, 'ordered reader: message handler failed');
    }
  };

  // Pull requests of 5 s (heartbeats every 2.5 s): a consumer lost with its NATS node is noticed
  // and recreated in seconds, not after the 30 s default's missed heartbeats.
  const EXPIRES_MS = 5_000;

  /** A standing pull; true when stopped for backpressure (reopen from `next` at once). */
  const consumeAll = async (consumer: Consumer): Promise<boolean> => {
    let messages: { stop(): void } | null = null;
    let paused = false;
    const consumed = await consumer.consume({
      max_messages: batch,
      expires: EXPIRES_MS,
      callback: (msg) => {
        take(msg, msg.info.streamSequence);
        if (held.length - heldAt >= batch && !paused) {
          paused = true;
          messages?.stop();
        }
      },
    });
    messages = consumed;
    current = consumed;
    if (stopped) consumed.stop();
    void stopWhenLost(consumed);
    const closed = await consumed.closed();
    if (busy) await busy;
    if (closed instanceof Error) throw closed;
    return paused;
  };

  /**
   * Paced: batch after batch until stopped, or interrupted (reconnect, lost consumer). Two pulls of
   * half a batch are kept outstanding, the next asked once one is delivered and the handler is not
   * waiting: the stream never waits on a round trip, and at most one batch is held.
   */
  const pullBatches = async (): Promise<void> => {
    const seen = interruptions;
    const half = Math.max(1, Math.floor(batch / 2));
    const consumer = await PullConsumer.open(
      nats,
      { stream: opts.stream, filter: opts.filter, startSeq: next, expiresMs: EXPIRES_MS },
      take,
    );
    current = consumer;
    try {
      const inFlight = [consumer.pull(half), consumer.pull(half)];
      while (!stopped && interruptions === seen) {
        const outcome = await inFlight.shift();
        if (outcome === 'lost') throw new Error('pull consumer lost');
        if (outcome === 'stopped') {
          // Stopped by the read, or by a reconnect (read again at once): leave. Anything else
          // stopped it under a read that goes on: nothing more comes from it, so it is lost.
          if (!stopped && interruptions === seen) throw new Error('pull consumer stopped');
          break;
        }
        if (busy) await busy;
        if (!stopped) inFlight.push(consumer.pull(half));
      }
    } finally {
      consumer.close();
    }
  };

  const done = (async () => {
    while (!stopped) {
      try {
        if (opts.paced) await pullBatches();
        else {
          const consumer = await nats.js.consumers.get(opts.stream, {
            ...(opts.filter ? { filter_subjects: opts.filter } : {}),
            opt_start_seq: next,
          });
          if (stopped) break;
          if (await consumeAll(consumer)) continue;
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

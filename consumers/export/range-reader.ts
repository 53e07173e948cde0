/**
 * Reads a bounded range of a stream (`MD` unless told: an export also reads `OWN`) in stream
 * order, fast: one ephemeral pull consumer (no acks, memory storage, one replica) positioned at
 * the first sequence, read by explicit pulls over a plain subscription (nats.js's consumer wraps
 * every message in a JsMsg and runs an async iterator: most of an export's time at a million
 * events). Each message's stream sequence, delivery sequence, stored time (exact nanoseconds,
 * cut to ms) and pending count are read off its reply subject. It ends at `lastSeq`, or when
 * nothing matching is left (pending 0): every event up to `lastSeq` was stored before the read
 * began, so pending 0 means none is missing.
 *
 * Pulls of half a batch, two outstanding, the next asked as one is delivered unless the reader is
 * paused (backpressure: `onMessage` returns false; `resume()` asks again). A gap in delivery
 * sequences, a consumer-level error status or 30 s without a message while not paused fails the
 * read (the export job fails, or is retried by the queue): never a silent hole in a file.
 */
import { AckPolicy, DeliverPolicy } from '@nats-io/jetstream';
import { createInbox, type Msg, nanos, nuid } from '@nats-io/transport-node';
import { STREAMS } from '../../contracts/streams.ts';
import type { Nats } from '../../platform/nats.ts';

export type RangeReadOptions = {
  /** The stream read (default `MD`). */
  stream?: string;
  /** Subject filter; '' reads every message. */
  filter: string;
  firstSeq: number;
  lastSeq: number;
  /** Messages per pull (default 5,000). */
  pull?: number;
  /** A read with no message for this long while not paused fails, ms (default 30 s). */
  stallMs?: number;
  signal?: AbortSignal;
};

/** One stored message; false: pause until `resume()` is called. */
export type OnStored = (subject: string, data: Uint8Array, seq: number, storedMs: number) => boolean;

export type RangeRead = {
  /** Settles when the range has been read (or the read failed). */
  done: Promise<void>;
  /** Resumes a read paused by `onMessage` returning false. */
  resume(): void;
  /** Matching messages stored from `firstSeq` on when the read began (an upper bound of the count). */
  pending: number;
};

const PULL_EXPIRES_MS = 5_000;

/** `$JS.ACK.<stream>.<consumer>.<n>.<sseq>.<dseq>.<ts>.<pending>` or the 11/12-token form with a domain. */
function parseReply(reply: string): { seq: number; dseq: number; ms: number; pending: number } | null {
  const t = reply.split('.');
  const at = t.length === 9 ? 5 : t.length >= 11 ? 7 : -1;
  if (at < 0 || t[0] !== '$JS' || t[1] !== 'ACK') return null;
  const ts = t[at + 2] as string;
  return {
    seq: Number(t[at]),
    dseq: Number(t[at + 1]),
    // Nanoseconds (19 digits) cut to milliseconds as text: exact, where a Number of them is not.
    ms: Number(ts.length > 6 ? ts.slice(0, -6) : '0'),
    pending: Number(t[at + 3]),
  };
}

export async function readStoredRange(
  nats: Nats,
  opts: RangeReadOptions,
  onMessage: OnStored,
): Promise<RangeRead> {
  const { firstSeq, lastSeq, signal } = opts;
  const stream = opts.stream ?? STREAMS.MD;
  signal?.throwIfAborted();
  const name = `export_${nuid.next()}`;
  const info = await nats.jsm.consumers.add(stream, {
    name,
    deliver_policy: DeliverPolicy.StartSequence,
    opt_start_seq: firstSeq,
    ack_policy: AckPolicy.None,
    // '' reads every message: no filter at all (an unfiltered consumer starts at once on 2.9).
    ...(opts.filter ? { filter_subject: opts.filter } : {}),
    inactive_threshold: nanos(5 * 60_000),
    mem_storage: true,
    num_replicas: 1,
  });
  const remove = () => nats.jsm.consumers.delete(stream, name).catch(() => false);
  if (info.num_pending === 0 || firstSeq > lastSeq) {
    await remove();
    return { done: Promise.resolve(), resume() {}, pending: 0 };
  }
  const half = opts.pull ?? 5_000;
  const nc = nats.nc;
  const inbox = createInbox();
  const next = `$JS.API.CONSUMER.MSG.NEXT.${stream}.${name}`;
  const request = JSON.stringify({ batch: half, expires: nanos(PULL_EXPIRES_MS) });
  let settle: { resolve(): void; reject(err: unknown): void } | null = null;
  const done = new Promise<void>((resolve, reject) => {
    settle = { resolve, reject };
  });
  let finished = false;
  let paused = false;
  /** Pulls whose messages have not all come, and pulls owed while paused. */
  let outstanding = 0;
  let owed = 0;
  let inPull = 0;
  let lastDseq = 0;
  let lastSeen = Date.now();
  const ask = () => {
    if (finished) return;
    if (paused) {
      owed++;
      return;
    }
    outstanding++;
    nc.publish(next, request, { reply: inbox });
  };
  const end = (err?: unknown) => {
    if (finished) return;
    finished = true;
    clearInterval(watchdog);
    sub.unsubscribe();
    signal?.removeEventListener('abort', aborted);
    void remove();
    if (err) settle?.reject(err);
    else settle?.resolve();
  };
  const aborted = () => end(signal?.reason ?? new Error('aborted'));
  const pullEnded = () => {
    outstanding = Math.max(0, outstanding - 1);
    inPull = 0;
    if (outstanding < 2) ask();
  };
  const sub = nc.subscribe(inbox, {
    callback: (_err, msg: Msg) => {
      if (finished) return;
      lastSeen = Date.now();
      if (!msg.reply) {
        const code = msg.headers?.code ?? 0;
        if (code === 100) return; // heartbeat
        if (code === 404 || code === 408) return pullEnded(); // the pull ended short (no more now / expired)
        return end(new Error(`export read: status ${code} ${msg.headers?.description ?? ''}`.trim()));
      }
      const r = parseReply(msg.reply);
      if (!r) return end(new Error(`export read: not a JetStream reply: ${msg.reply}`));
      if (r.dseq !== lastDseq + 1)
        return end(new Error(`export read: delivery ${r.dseq} after ${lastDseq}: a message was lost`));
      lastDseq = r.dseq;
      if (r.seq > lastSeq) return end();
      let more = true;
      try {
        more = onMessage(msg.subject, msg.data, r.seq, r.ms);
      } catch (err) {
        return end(err);
      }
      if (r.seq >= lastSeq || r.pending === 0) return end();
      if (!more) paused = true;
      if (++inPull === half) {
        outstanding--;
        inPull = 0;
        ask();
      }
    },
  });
  const stallMs = opts.stallMs ?? 30_000;
  const watchdog = setInterval(() => {
    if (!paused && Date.now() - lastSeen > stallMs)
      end(new Error(`export read: no message for ${Math.round(stallMs / 1000)} s`));
  }, 1_000);
  signal?.addEventListener('abort', aborted, { once: true });
  ask();
  ask();
  return {
    done,
    pending: info.num_pending,
    resume() {
      if (!paused || finished) return;
      paused = false;
      lastSeen = Date.now();
      for (; owed > 0; owed--) ask();
    },
  };
}

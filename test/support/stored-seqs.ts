/**
 * What a stream stores, read back from the stream itself: its last sequence, how many messages it
 * holds under a subject filter, its stored messages (one direct read each) after a position whose
 * subject matches, and the sequences on one filter after a position up to a sequence it stores on
 * that filter (an ordered paced read, platform/ordered-reader.ts): the reference a client's yielded
 * sequences are compared with.
 */
import type { JetStreamManager, StoredMsg } from '@nats-io/jetstream';
import { STREAMS } from '../../contracts/streams.ts';
import { createLogger } from '../../platform/logger.ts';
import type { Nats } from '../../platform/nats.ts';
import { readOrdered } from '../../platform/ordered-reader.ts';

const log = createLogger('silent', 'test');

/** Anything holding a JetStream manager: the platform's `Nats`, or `{ jsm }` of a bare connection. */
type Store = { jsm: JetStreamManager };

/** The last sequence `stream` (MD unless told) has stored; 0 while it is empty. */
export async function lastSeq(nats: Store, stream: string = STREAMS.MD): Promise<number> {
  return (await nats.jsm.streams.info(stream)).state.last_seq;
}

/** How many messages `stream` holds under the subject `filter` (wildcards allowed). */
export async function storedCount(nats: Store, stream: string, filter: string): Promise<number> {
  const info = await nats.jsm.streams.info(stream, { subjects_filter: filter });
  return Object.values(info.state.subjects ?? {}).reduce((n, c) => n + c, 0);
}

/**
 * The messages `stream` holds after sequence `after` (all by default) up to its last one now, whose
 * subject `matches` (every subject by default), in sequence order (gaps skipped).
 */
export async function storedMessages(
  nats: Store,
  stream: string,
  opts: { after?: number; matches?: RegExp } = {},
): Promise<StoredMsg[]> {
  const { state } = await nats.jsm.streams.info(stream);
  const out: StoredMsg[] = [];
  for (let seq = Math.max(state.first_seq, (opts.after ?? 0) + 1); seq <= state.last_seq; seq++) {
    const m = await nats.jsm.streams.getMessage(stream, { seq }).catch(() => null);
    if (m && (!opts.matches || opts.matches.test(m.subject))) out.push(m);
  }
  return out;
}

/** The sequences of `storedMessages` (the same selection). */
export async function storedSeqsMatching(
  nats: Store,
  stream: string,
  opts: { after?: number; matches?: RegExp } = {},
): Promise<number[]> {
  return (await storedMessages(nats, stream, opts)).map((m) => m.seq);
}

/** The sequences `stream` stores on `filter` after `after`, up to `last` (stored on `filter`). */
export function storedSeqs(
  nats: Nats,
  stream: string,
  filter: string,
  after: number,
  last: number,
): Promise<number[]> {
  const seqs: number[] = [];
  if (last <= after) return Promise.resolve(seqs);
  return new Promise((resolve) => {
    const r = readOrdered(
      nats,
      { stream, filter, startSeq: after + 1, paced: true },
      (_m, seq) => {
        seqs.push(seq);
        if (seq >= last) {
          r.stop();
          resolve(seqs);
        }
      },
      log,
    );
  });
}

/** Milliseconds of a stored message's RFC 3339 time with nanoseconds (floor, as the stream compares times). */
export function storedMs(timestamp: string): number {
  const m = /^(.*T\d{2}:\d{2}:\d{2})(?:\.(\d+))?Z$/.exec(timestamp);
  if (!m) throw new Error(`unexpected stored time ${timestamp}`);
  return Date.parse(`${m[1]}Z`) + Number(`${m[2] ?? ''}000`.slice(0, 3));
}

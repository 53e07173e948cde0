/**
 * What a stream stores: the sequences of the messages on one filter after a position, up to a
 * sequence it stores on that filter, read in order from the stream itself (an ordered paced read,
 * platform/ordered-reader.ts). The reference a client's yielded sequences are compared with.
 */
import { createLogger } from '../../platform/logger.ts';
import type { Nats } from '../../platform/nats.ts';
import { readOrdered } from '../../platform/ordered-reader.ts';

const log = createLogger('silent', 'test');

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

/**
 * A paced history read (readOrdered over platform/pull-consumer.ts) of `count` stored messages
 * from the first one a stream holds: their sequences, and the history connection it pulled over
 * (seen holding the read's one subscription while it ran).
 */
import { createLogger } from '../../platform/logger.ts';
import type { Nats } from '../../platform/nats.ts';
import type { HistoryConnection } from '../../platform/nats-wire/history-connection.ts';
import { readOrdered } from '../../platform/ordered-reader.ts';

const log = createLogger('error');

export async function readHistory(
  nats: Nats,
  stream: string,
  filter: string,
  count: number,
): Promise<{ seqs: number[]; firstSeq: number; over: HistoryConnection | null; subscriptions: number }> {
  const { state } = await nats.jsm.streams.info(stream);
  const last = Math.min(state.last_seq, state.first_seq + count - 1);
  const seqs: number[] = [];
  let subscriptions = -1;
  const over = (await nats.history?.()) ?? null;
  await new Promise<void>((resolve) => {
    const r = readOrdered(
      nats,
      { stream, filter, startSeq: state.first_seq, paced: true },
      (_msg, seq) => {
        if (seqs.length === 0) subscriptions = over?.subscriptions ?? -1;
        seqs.push(seq);
        if (seq >= last) {
          r.stop();
          resolve();
        }
      },
      log,
    );
  });
  return { seqs, firstSeq: state.first_seq, over, subscriptions };
}

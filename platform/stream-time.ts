/**
 * An instant mapped to a stream sequence by the stream itself (JetStream's stored times): a
 * throwaway consumer at `opt_start_time` reports, as delivered, the sequence before its first
 * message (memory storage, no acks, deleted at once, left to expire if the delete is lost). Used
 * by replays by time (gateways/core/time-position.ts) and range exports (consumers/export/).
 */
import { AckPolicy, DeliverPolicy } from '@nats-io/jetstream';
import { nanos } from '@nats-io/transport-node';
import type { Logger } from './logger.ts';
import type { Nats } from './nats.ts';

/** The last sequence `stream` stored before the instant `ms` (0 when none). */
export async function seqBefore(nats: Nats, stream: string, ms: number, log?: Logger): Promise<number> {
  const info = await nats.jsm.consumers.add(stream, {
    deliver_policy: DeliverPolicy.StartTime,
    opt_start_time: new Date(ms).toISOString(),
    ack_policy: AckPolicy.None,
    mem_storage: true,
    inactive_threshold: nanos(5_000),
  });
  nats.jsm.consumers
    .delete(stream, info.name)
    .catch((err) => log?.debug({ err: String(err) }, 'time position: consumer delete failed'));
  return info.delivered.stream_seq;
}

/** The last sequence stored at or before the instant `ms` (its whole millisecond included). */
export const seqAtOrBefore = (nats: Nats, stream: string, ms: number, log?: Logger): Promise<number> =>
  seqBefore(nats, stream, ms + 1, log);

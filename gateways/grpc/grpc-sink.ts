/**
 * The buffered sink of a gRPC stream, plus what only this edge needs: a stored record the edge
 * cannot encode as protobuf is skipped in-band, never silently. The log's bytes are checked only
 * for being a JSON object when read (contracts/event-wire.ts); SSE and the other JSON transports
 * send them as stored, while this edge must parse them to build its message, so a record that is
 * not valid JSON (written to an `md.*` subject by anything but the producers) surfaces here.
 *
 * Such a record holds no market data. Ending the stream instead would be a poison pill: every
 * resume from before it (the TypeScript client's own reconnection included) would end at the same
 * record again. So a `notice` `record_skipped` takes its place, in order, naming its sequence as
 * `resumed_after` (a client keeping its position by that field stays exact), and the stream goes
 * on; disk-sync does the same with its `skipped` message. The record is logged once per stream.
 */

import { RECORD_SKIPPED } from '../../contracts/notices.ts';
import type { Logger } from '../../platform/logger.ts';
import { BufferedSink } from '../core/buffered-sink.ts';
import type { FeedEvent } from '../core/feed-event.ts';

export class GrpcSink extends BufferedSink {
  private log: Pick<Logger, 'error'> | null = null;
  private requestId = '';

  /** Where an undecodable record is reported (with its sequence and the stream's request id). */
  reportTo(log: Pick<Logger, 'error'>, requestId: string): void {
    this.log = log;
    this.requestId = requestId;
  }

  override event(ev: FeedEvent): void {
    if (this.closed) return;
    try {
      super.event(ev);
    } catch (err) {
      this.skip(ev, err);
    }
  }

  private skip(ev: FeedEvent, err: unknown): void {
    this.log?.error(
      { err: String(err), seq: ev.seq, requestId: this.requestId },
      'grpc stream: a record in the log is not a valid event; skipped',
    );
    this.notice({
      code: RECORD_SKIPPED,
      message: `stored record ${ev.seq} (${ev.source} ${ev.symbol} ${ev.eventType}) is not a valid event; skipped`,
      resumed_after: ev.seq,
      coin: ev.symbol,
      ...(ev.owner !== null ? { feed: 'own' } : {}),
    });
  }
}

/**
 * The buffered sink of a gRPC stream, plus what only this edge needs: an event the edge cannot
 * encode as protobuf ends the stream with INTERNAL instead of vanishing. The log's bytes are
 * checked only for being a JSON object when read (contracts/event-wire.ts); SSE and the other
 * JSON transports send them as stored, while this edge must parse them to build its message, so a
 * record that is not valid JSON (written to an `md.*` subject by anything but the producers)
 * surfaces here. Skipping it would be a silent gap no client can see (sequences of a filtered
 * stream have gaps anyway); leaving the throw to the feed would do exactly that (the live tail and
 * the ordered reader log a failing subscriber and go on).
 *
 * Before the status, the events already queued and a `warning` naming the record's sequence go
 * out (when the wire takes bytes), so the client has a gapless prefix and knows the position: it
 * can resume with `after_seq` past the record, knowing what it skips. Other streams of the process
 * are untouched unless they select the same record.
 */

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
      this.undecodable(ev, err);
    }
  }

  private undecodable(ev: FeedEvent, err: unknown): void {
    const where = `event ${ev.seq} (${ev.source} ${ev.symbol} ${ev.eventType})`;
    this.log?.error(
      { err: String(err), seq: ev.seq, requestId: this.requestId },
      'grpc stream ended: event in the log cannot be encoded',
    );
    this.warn(
      'internal',
      `${where} in the log cannot be decoded; this stream ends with INTERNAL (resume with after_seq ${ev.seq} to continue past it)`,
    );
    this.flush();
    this.terminate('internal');
  }
}

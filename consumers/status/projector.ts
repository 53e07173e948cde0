/**
 * Projects the `STATUS` stream into KV `status` (`incident.<id>`, `maintenance.<id>`). Every HTTP
 * gateway runs one from sequence 1; each event carries its whole record, and writes land only over
 * an older record (platform/kv-conditional-write.ts), so any number of projectors converge and a replay never
 * moves a record back. Commands wait on `applied(seq)` (503 `status_update_pending` at the deadline).
 * A write failing 3 times with NATS up is logged with its sequence and skipped, so later events land.
 */

import { ApiError } from '../../contracts/errors.ts';
import { incidentKey, STATUS_EVENTS_ALL, type StatusEvent, windowKey } from '../../contracts/status.ts';
import { KV_BUCKETS, STREAMS } from '../../contracts/streams.ts';
import { sleepBackoff } from '../../platform/backoff.ts';
import { type Bucket, openBucket } from '../../platform/kv.ts';
import { writeIfNewer } from '../../platform/kv-conditional-write.ts';
import type { Logger } from '../../platform/logger.ts';
import { decode } from '../../platform/msgpack.ts';
import type { Nats } from '../../platform/nats.ts';
import { type OrderedReader, readOrdered } from '../../platform/ordered-reader.ts';
import { AppliedWaiters } from '../applied-waiters.ts';

const ATTEMPTS = 3;

export const openStatusBucket = (nats: Nats): Promise<Bucket<unknown>> => openBucket(nats, KV_BUCKETS.status);

export class StatusProjector {
  private readonly waiters = new AppliedWaiters('status_update_pending');
  private reader: OrderedReader | null = null;
  private stopped = false;

  private constructor(
    private readonly bucket: Bucket<unknown>,
    private readonly log: Logger,
    private readonly connected: () => boolean,
  ) {}

  static async start(nats: Nats, log: Logger): Promise<StatusProjector> {
    const p = new StatusProjector(await openStatusBucket(nats), log, nats.connected);
    p.reader = readOrdered(
      nats,
      { stream: STREAMS.STATUS, filter: STATUS_EVENTS_ALL, startSeq: 1 },
      (msg) => p.apply(msg.info.streamSequence, msg.data),
      log,
    );
    return p;
  }

  /** Resolves once every event up to `seq` is in KV; 503 `status_update_pending` after `deadlineMs`. */
  applied(seq: number, deadlineMs: number): Promise<void> {
    return this.waiters.wait(seq, deadlineMs);
  }

  stop(): void {
    this.stopped = true;
    this.reader?.stop();
    this.waiters.rejectAll(new ApiError('reconnect'));
  }

  private async apply(seq: number, data: Uint8Array): Promise<void> {
    await this.write(seq, data);
    if (this.stopped) return;
    this.waiters.advance(seq);
  }

  private async write(seq: number, data: Uint8Array): Promise<void> {
    for (let attempt = 1; !this.stopped; attempt++) {
      try {
        const ev = decode<StatusEvent>(data);
        const [key, record] =
          'incident' in ev
            ? [incidentKey(ev.incident.id), ev.incident]
            : [windowKey(ev.window.id), ev.window];
        await writeIfNewer(this.bucket.raw, key, { ...record, seq });
        return;
      } catch (err) {
        // While NATS is away nothing is given up: the write lands once it is back.
        if (attempt >= ATTEMPTS && this.connected()) {
          this.log.error({ err: String(err), seq }, 'status event could not be projected: skipped');
          return;
        }
        await sleepBackoff(attempt, { maxMs: 1_000 });
      }
    }
  }
}

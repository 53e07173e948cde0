/**
 * How much one account may publish with `stream: true` per UTC day, across every process: a
 * ledger per account and day in KV `publish_quota` (`<account>.<yyyymmdd>` → events and bytes),
 * changed by compare-and-swap (platform/kv-cas.ts), so two processes publishing for one account
 * at once cannot both take the last of it. A batch is counted before it is published, whole or not
 * at all; past the day's events or bytes it is refused with 429 `quota_exceeded` and `Retry-After`
 * until the next UTC day. Ledgers expire two days after their last write.
 */

import type { KV } from '@nats-io/kv';
import { ApiError } from '../contracts/errors.ts';
import { KV_BUCKETS } from '../contracts/streams.ts';
import { CasConflictError, type CasWriter, casChange, openCasBucket } from '../platform/kv-cas.ts';
import type { Nats } from '../platform/nats.ts';

export type PublishQuotaLimits = { eventsPerDay: number; bytesPerDay: number };
type Ledger = { events: number; bytes: number };

const DAY_MS = 86_400_000;

export class PublishQuota {
  private constructor(
    private readonly kv: KV,
    private readonly cas: CasWriter,
    private readonly limits: PublishQuotaLimits,
    private readonly now: () => number,
  ) {}

  static async open(nats: Nats, limits: PublishQuotaLimits, now = Date.now): Promise<PublishQuota> {
    const { kv, cas } = await openCasBucket(nats, KV_BUCKETS.publishQuota, {
      ttlMs: 2 * DAY_MS,
      timeoutMs: 5_000,
    });
    return new PublishQuota(kv, cas, limits, now);
  }

  /** Counts a batch of `events` events of `bytes` bytes for the account today, or throws 429. */
  async take(accountId: string, events: number, bytes: number): Promise<void> {
    const now = this.now();
    const day = new Date(now).toISOString().slice(0, 10).replaceAll('-', '');
    const { eventsPerDay, bytesPerDay } = this.limits;
    try {
      await casChange<Ledger>(this.kv, this.cas, `${accountId}.${day}`, (current) => {
        const used = current ?? { events: 0, bytes: 0 };
        if (used.events + events > eventsPerDay || used.bytes + bytes > bytesPerDay) {
          const err = new ApiError(
            'quota_exceeded',
            `publishing these ${events} events (${bytes} bytes) would take this account past its daily stream: true quota (${used.events} of ${eventsPerDay} events, ${used.bytes} of ${bytesPerDay} bytes used today, UTC)`,
          );
          err.retryAfterSeconds = Math.max(1, Math.ceil((DAY_MS - (now % DAY_MS)) / 1_000));
          throw err;
        }
        return { events: used.events + events, bytes: used.bytes + bytes };
      });
    } catch (err) {
      if (!(err instanceof CasConflictError)) throw err;
      const busy = new ApiError(
        'conflict',
        "the account's publish quota is being changed by other requests; retry",
      );
      busy.retryAfterSeconds = 1;
      throw busy;
    }
  }
}

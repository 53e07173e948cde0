/**
 * Publishes the events a caller normalized with `stream: true` into its account's own subjects on
 * the `OWN` stream (`own.<account_id>.<source>.<symbol>.<event_type>`, never the platform's `MD`),
 * once per content at any distance in time.
 *
 * Why a KV record and not only `Nats-Msg-Id`: JetStream drops a repeated message id only within
 * the stream's duplicate window (2 minutes), so a request repeated later would publish again. The
 * batch id (sha256 of the events) is therefore recorded in KV `published_batches` under
 * `<account_id>.<batch_id>` with create-if-absent, before anything is published:
 * - the create succeeds → this request publishes the batch (message ids
 *   `norm.<account_id>.<batch_id>.<index>`), then marks the record `published`;
 * - the record says `published` → nothing is published;
 * - the record says `pending` (a request is publishing this batch right now, or one died midway)
 *   → the account's subjects are read from the record's `from_seq` (the stream's end before the
 *   record existed, so it bounds every message of the batch), the indexes already stored are read
 *   from their message ids, and only the missing events are published, then the record becomes
 *   `published`. A concurrent request storing the same events at that moment uses the same ids and
 *   JetStream's duplicate window drops the second copy; a request that died long ago left its
 *   messages in the stream, where the scan finds them.
 * Records expire with `OWN`'s max age (`batchTtlMs`): past it the batch's events have left the stream
 * too, so a repeat stores what is no longer there. A new batch is counted against the account's
 * daily quota (publish-quota.ts) before anything is published; a refused one leaves no record.
 */
import { AckPolicy, DeliverPolicy } from '@nats-io/jetstream';
import { nanos } from '@nats-io/transport-node';
import { contentHash } from '../contracts/caches.ts';
import { ApiError } from '../contracts/errors.ts';
import type { MarketEvent } from '../contracts/events.ts';
import { ownBatchMsgIdPrefix } from '../contracts/message-ids.ts';
import { KV_BUCKETS, STREAMS } from '../contracts/streams.ts';
import { accountToken, ownAccountFilter, ownSubject } from '../contracts/subjects.ts';
import { type Bucket, openBucket } from '../platform/kv.ts';
import type { Logger } from '../platform/logger.ts';
import { decode, encode } from '../platform/msgpack.ts';
import type { Nats } from '../platform/nats.ts';
import { nowUs, type Outgoing, publishEvents } from './publish.ts';
import { PublishQuota, type PublishQuotaLimits } from './publish-quota.ts';

type BatchRecord =
  | { state: 'pending'; from_seq: number; at: number }
  | { state: 'published'; count: number; at: number };

/** Messages fetched per pull while scanning for a batch's stored indexes. */
const SCAN_BATCH = 1_000;
/** Upper bound on one pull of the scan (it returns as soon as the messages are there). */
const SCAN_PULL_MS = 10_000;

export type AccountPublishResult = { batchId: string; published: number };

export type AccountPublisherOptions = { batchTtlMs: number; quota: PublishQuotaLimits };

export class AccountPublisher {
  private constructor(
    private readonly nats: Nats,
    private readonly batches: Bucket<BatchRecord>,
    private readonly quota: PublishQuota,
    private readonly log: Logger,
  ) {}

  static async open(nats: Nats, log: Logger, opts: AccountPublisherOptions): Promise<AccountPublisher> {
    return new AccountPublisher(
      nats,
      await openBucket<BatchRecord>(nats, KV_BUCKETS.publishedBatches, { ttlMs: opts.batchTtlMs }),
      await PublishQuota.open(nats, opts.quota),
      log,
    );
  }

  /** Publishes `events` for `accountId` unless this account already published them. */
  async publish(accountId: string, events: readonly MarketEvent[]): Promise<AccountPublishResult> {
    const batchId = contentHash(events).slice('sha256:'.length, 'sha256:'.length + 32);
    const key = `${accountToken(accountId)}.${batchId}`;
    const idPrefix = ownBatchMsgIdPrefix(accountId, batchId);
    const fromSeq = (await this.nats.jsm.streams.info(STREAMS.OWN)).state.last_seq + 1;
    const pending: BatchRecord = { state: 'pending', from_seq: fromSeq, at: Date.now() };
    let skip = new Set<number>();
    try {
      await this.batches.raw.create(key, encode(pending));
      try {
        await this.quota.take(accountId, events.length, Buffer.byteLength(JSON.stringify(events)));
      } catch (err) {
        await this.batches.raw.delete(key).catch(() => {});
        throw err;
      }
    } catch (err) {
      if (err instanceof ApiError) throw err;
      const entry = await this.batches.raw.get(key);
      const record = entry && entry.value.length > 0 ? decode<BatchRecord>(entry.value) : null;
      if (record?.state === 'published') return { batchId, published: 0 };
      // Pending: finish what another request started (or left).
      skip = await this.storedIndexes(accountId, idPrefix, record?.from_seq ?? 1);
    }
    const at = nowUs();
    const batch: Outgoing[] = [];
    events.forEach((event, i) => {
      if (skip.has(i)) return;
      const subject = ownSubject(accountId, event.source, event.symbol, event.event_type);
      batch.push({ event, id: `${idPrefix}${i}`, ingestUs: at, subject });
    });
    const published = batch.length > 0 ? await publishEvents(this.nats.js, batch, this.log) : 0;
    const done: BatchRecord = { state: 'published', count: events.length, at: Date.now() };
    await this.batches.put(key, done);
    return { batchId, published };
  }

  /** Indexes of the batch already stored on the account's subjects from `fromSeq` on. */
  private async storedIndexes(accountId: string, idPrefix: string, fromSeq: number): Promise<Set<number>> {
    const found = new Set<number>();
    const info = await this.nats.jsm.consumers.add(STREAMS.OWN, {
      filter_subject: ownAccountFilter(accountId),
      deliver_policy: DeliverPolicy.StartSequence,
      opt_start_seq: Math.max(1, fromSeq),
      ack_policy: AckPolicy.None,
      inactive_threshold: nanos(60_000),
      mem_storage: true,
    });
    try {
      const consumer = await this.nats.js.consumers.get(STREAMS.OWN, info.name);
      let left = info.num_pending;
      while (left > 0) {
        const want = Math.min(left, SCAN_BATCH);
        let got = 0;
        for await (const m of await consumer.fetch({ max_messages: want, expires: SCAN_PULL_MS })) {
          got++;
          const id = m.headers?.get('Nats-Msg-Id') ?? '';
          if (id.startsWith(idPrefix)) found.add(Number(id.slice(idPrefix.length)));
        }
        if (got === 0) break;
        left -= got;
      }
    } finally {
      await this.nats.jsm.consumers.delete(STREAMS.OWN, info.name).catch(() => {});
    }
    return found;
  }
}

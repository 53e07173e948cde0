/**
 * Projects the `ACCOUNTS` stream into the `keys`, `accounts` and `sessions` KV buckets. It reads
 * the whole stream from sequence 1 on start (so a rebuild is just a restart), then follows it.
 * Commands wait on `applied(seq)` so a console call answers only once its effect is readable.
 */
import type { AccountEvent } from '../../contracts/accounts.ts';
import { KV_BUCKETS, STREAMS } from '../../contracts/streams.ts';
import { decode } from '../../platform/codec.ts';
import { BUCKET_OPTIONS, type Bucket, openBucket } from '../../platform/kv.ts';
import type { Logger } from '../../platform/logger.ts';
import type { Nats } from '../../platform/nats.ts';
import { type OrderedReader, readOrdered } from '../../platform/ordered-reader.ts';
import { applyAccountEvent, emptyState, type KvWrite } from './reducer.ts';

export type AccountBuckets = { keys: Bucket<unknown>; accounts: Bucket<unknown>; sessions: Bucket<unknown> };

export async function openAccountBuckets(nats: Nats): Promise<AccountBuckets> {
  const [keys, accounts, sessions] = await Promise.all([
    openBucket(nats, KV_BUCKETS.keys, BUCKET_OPTIONS[KV_BUCKETS.keys]),
    openBucket(nats, KV_BUCKETS.accounts, BUCKET_OPTIONS[KV_BUCKETS.accounts]),
    openBucket(nats, KV_BUCKETS.sessions, BUCKET_OPTIONS[KV_BUCKETS.sessions]),
  ]);
  return { keys, accounts, sessions };
}

export class AccountsProjector {
  private readonly state = emptyState();
  private appliedSeq = 0;
  private waiters: { seq: number; resolve: () => void }[] = [];
  private reader: OrderedReader | null = null;

  private constructor(
    private readonly buckets: AccountBuckets,
    private readonly log: Logger,
  ) {}

  static async start(nats: Nats, log: Logger): Promise<AccountsProjector> {
    const p = new AccountsProjector(await openAccountBuckets(nats), log);
    p.reader = readOrdered(
      nats,
      { stream: STREAMS.ACCOUNTS, filter: 'acct.>', startSeq: 1 },
      (msg) => p.apply(msg.info.streamSequence, msg.data),
      log,
    );
    return p;
  }

  /** Resolves once every event up to `seq` is in KV. */
  applied(seq: number): Promise<void> {
    if (seq <= this.appliedSeq) return Promise.resolve();
    return new Promise((resolve) => this.waiters.push({ seq, resolve }));
  }

  get position(): number {
    return this.appliedSeq;
  }

  stop(): void {
    this.reader?.stop();
  }

  private async apply(seq: number, data: Uint8Array): Promise<void> {
    let writes: KvWrite[] = [];
    try {
      writes = applyAccountEvent(this.state, decode<AccountEvent>(data));
    } catch (err) {
      this.log.error({ err: String(err), seq }, 'account event skipped');
    }
    for (const w of writes) {
      const bucket = this.buckets[w.bucket];
      // Retried until it lands: a projection must not skip a write (KV calls fail only while NATS is away).
      for (let attempt = 0; ; attempt++) {
        try {
          if (w.value === null) await bucket.delete(w.key);
          else await bucket.put(w.key, w.value);
          break;
        } catch (err) {
          if (attempt === 0) this.log.warn({ err: String(err), seq }, 'projection write failed; retrying');
          await new Promise((r) => setTimeout(r, Math.min(1_000, 50 * 2 ** attempt)));
        }
      }
    }
    this.appliedSeq = seq;
    const ready = this.waiters.filter((w) => w.seq <= seq);
    this.waiters = this.waiters.filter((w) => w.seq > seq);
    for (const w of ready) w.resolve();
  }
}

/**
 * Projects the `ACCOUNTS` stream into the `keys`, `accounts`, `account_keys` and `sessions` KV
 * buckets. It reads the whole stream from sequence 1 on start (so a rebuild is just a restart), then
 * follows it. Every HTTP gateway runs one; writes are conditioned on the event's stream sequence
 * (conditional-write.ts), so a replaying projector never moves a record backwards.
 *
 * Commands wait on `applied(seq, deadlineMs)`: a console call answers once its effect is readable,
 * or 503 `account_update_pending` at the deadline (never a hang).
 *
 * Failures never stall the stream silently: a write that fails because NATS is away is retried
 * until it lands (nothing may be skipped); any other failure (a record over the payload limit, a
 * refused write) is retried `PERMANENT_ATTEMPTS` times, then that write is given up, the event is
 * logged as poison with its sequence and type, counted in
 * `mdp_account_projection_poison_events_total`, and later events (revocations) still land.
 */
import type { AccountEvent } from '../../contracts/accounts.ts';
import { ACCOUNT_EVENTS_ALL } from '../../contracts/accounts.ts';
import { ApiError } from '../../contracts/errors.ts';
import { KV_BUCKETS, STREAMS } from '../../contracts/streams.ts';
import { sleepBackoff } from '../../platform/backoff.ts';
import { decode } from '../../platform/codec.ts';
import { BUCKET_OPTIONS, type Bucket, openBucket } from '../../platform/kv.ts';
import type { Logger } from '../../platform/logger.ts';
import { accountPoisonEvents, accountProjectionFailures } from '../../platform/metrics.ts';
import type { Nats } from '../../platform/nats.ts';
import { type OrderedReader, readOrdered } from '../../platform/ordered-reader.ts';
import { AppliedWaiters } from '../applied-waiters.ts';
import { writeIfNewer } from './conditional-write.ts';
import { applyAccountEvent, emptyState, type KvWrite } from './reducer.ts';

export type AccountBuckets = {
  keys: Bucket<unknown>;
  accounts: Bucket<unknown>;
  accountKeys: Bucket<unknown>;
  sessions: Bucket<unknown>;
};

export async function openAccountBuckets(nats: Nats): Promise<AccountBuckets> {
  const open = (name: keyof typeof BUCKET_OPTIONS) => openBucket(nats, name, BUCKET_OPTIONS[name]);
  const [keys, accounts, accountKeys, sessions] = await Promise.all([
    open(KV_BUCKETS.keys),
    open(KV_BUCKETS.accounts),
    open(KV_BUCKETS.accountKeys),
    open(KV_BUCKETS.sessions),
  ]);
  return { keys, accounts, accountKeys, sessions };
}

/** Attempts of a write failing for a reason other than NATS being away, before it is given up. */
export const PERMANENT_ATTEMPTS = 3;

/** Failures that mean "NATS is not answering right now" (nats.js error names): retried forever. */
const TRANSIENT = new Set([
  'TimeoutError',
  'NoResponders',
  'ClosedConnectionError',
  'DrainingConnectionError',
  'ConnectionError',
  'RequestError',
]);
const isTransient = (err: unknown) => TRANSIENT.has((err as Error | null)?.name ?? '');

export class AccountsProjector {
  private readonly state = emptyState();
  private readonly waiters = new AppliedWaiters('account_update_pending');
  private reader: OrderedReader | null = null;
  private stopped = false;

  private constructor(
    private readonly buckets: AccountBuckets,
    private readonly log: Logger,
  ) {}

  static async start(nats: Nats, log: Logger): Promise<AccountsProjector> {
    const p = new AccountsProjector(await openAccountBuckets(nats), log);
    p.reader = readOrdered(
      nats,
      { stream: STREAMS.ACCOUNTS, filter: ACCOUNT_EVENTS_ALL, startSeq: 1 },
      (msg) => p.apply(msg.info.streamSequence, msg.data),
      log,
    );
    return p;
  }

  /**
   * Resolves once every event up to `seq` is in KV; rejects with 503 `account_update_pending`
   * after `deadlineMs`, or with 500 when the event at `seq` was poison.
   */
  applied(seq: number, deadlineMs = Infinity): Promise<void> {
    return this.waiters.wait(seq, deadlineMs);
  }

  get position(): number {
    return this.waiters.position;
  }

  stop(): void {
    this.stopped = true;
    this.reader?.stop();
  }

  private async apply(seq: number, data: Uint8Array): Promise<void> {
    let writes: KvWrite[] = [];
    let type = 'undecodable';
    let poisoned = false;
    try {
      const ev = decode<AccountEvent>(data);
      type = String(ev?.type);
      writes = applyAccountEvent(this.state, ev, seq);
    } catch (err) {
      poisoned = this.poison(seq, type, err);
    }
    for (const w of writes) if (!(await this.write(w, seq, type))) poisoned = true;
    if (this.stopped) return;
    this.waiters.advance(
      seq,
      poisoned ? new ApiError('internal', 'account event could not be applied') : undefined,
    );
  }

  /** Writes until it lands; false when given up (poison). */
  private async write(w: KvWrite, seq: number, type: string): Promise<boolean> {
    const kv = this.buckets[w.bucket].raw;
    let permanent = 0;
    for (let attempt = 0; !this.stopped; attempt++) {
      try {
        await writeIfNewer(kv, w.key, w.value, {
          onlyIfAbsent: 'onlyIfAbsent' in w && w.onlyIfAbsent === true,
        });
        return true;
      } catch (err) {
        const transient = isTransient(err);
        accountProjectionFailures.inc({ kind: transient ? 'transient' : 'permanent' });
        if (!transient && ++permanent >= PERMANENT_ATTEMPTS) {
          this.poison(seq, type, err, w.bucket);
          return false;
        }
        if (attempt === 0)
          this.log.warn(
            { err: String(err), seq, event_type: type, bucket: w.bucket },
            'projection write failed; retrying',
          );
        await sleepBackoff(attempt, { maxMs: 1_000 });
      }
    }
    return true;
  }

  /** Makes a poison event visible (log + metric); returns true. Secrets never appear: only hashes exist here. */
  private poison(seq: number, type: string, err: unknown, bucket?: string): boolean {
    accountPoisonEvents.inc({ event_type: type });
    this.log.error(
      { err: String(err), seq, event_type: type, ...(bucket ? { bucket } : {}) },
      'account event is poison: skipped after retries (see mdp_account_projection_poison_events_total)',
    );
    return true;
  }
}

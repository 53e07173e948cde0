/**
 * Projects the `ACCOUNTS` stream into the `keys`, `accounts`, `account_keys` and `sessions` KV
 * buckets, then follows it. Every HTTP gateway runs one; writes are conditioned on the event's
 * stream sequence (platform/kv-conditional-write.ts), so a replaying projector never moves a record backwards.
 *
 * Start-up never depends on the length of the log: the projector resumes after the stored
 * position (`PROJECTION_POSITION_KEY`, written at most every `POSITION_EVERY_MS` once every event up
 * to it is in KV, by whichever projector is furthest), reading each account's state back from its
 * records when it first meets it (hydrate.ts). Accounts are kept in memory up to
 * `ACCOUNTS_IN_MEMORY`, the least recently seen forgotten first (read back again when needed).
 * `progress()` says how far it is behind the end of the stream it found at start; a rebuild from
 * sequence 1 is a deletion of the position record and a restart.
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
import { ACCOUNT_EVENTS_ALL, PROJECTION_POSITION_KEY } from '../../contracts/accounts.ts';
import { ApiError, isNatsTransient } from '../../contracts/errors.ts';
import { KV_BUCKETS, STREAMS } from '../../contracts/streams.ts';
import { sleepBackoff } from '../../platform/backoff.ts';
import { BUCKET_OPTIONS, type Bucket, openBucket } from '../../platform/kv.ts';
import { writeIfNewer } from '../../platform/kv-conditional-write.ts';
import type { Logger } from '../../platform/logger.ts';
import { accountPoisonEvents, accountProjectionFailures } from '../../platform/metrics.ts';
import { decode } from '../../platform/msgpack.ts';
import type { Nats } from '../../platform/nats.ts';
import { type OrderedReader, readOrdered } from '../../platform/ordered-reader.ts';
import { AppliedWaiters } from '../applied-waiters.ts';
import { hydrateAccount } from './hydrate.ts';
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

/** Accounts whose state is held in memory at most (the rest are read back from KV when met). */
export const ACCOUNTS_IN_MEMORY = 20_000;
/** How often the position is stored, at most, ms. */
export const POSITION_EVERY_MS = 1_000;

/** How far a projector is: `applied` of the `target` (the stream's end when it started, or later). */
export type ProjectionProgress = { start: number; applied: number; target: number; caught_up: boolean };

export class AccountsProjector {
  private readonly state = emptyState();
  private readonly waiters = new AppliedWaiters('account_update_pending');
  private reader: OrderedReader | null = null;
  private stopped = false;
  private positionStoredAt = Date.now();
  private positionTimer: NodeJS.Timeout | null = null;

  private constructor(
    private readonly buckets: AccountBuckets,
    private readonly log: Logger,
    private readonly startSeq: number,
    private target: number,
  ) {
    this.waiters.advance(startSeq - 1);
  }

  static async start(nats: Nats, log: Logger): Promise<AccountsProjector> {
    const buckets = await openAccountBuckets(nats);
    const last = (await nats.jsm.streams.info(STREAMS.ACCOUNTS)).state.last_seq;
    const stored =
      ((await buckets.accounts.get(PROJECTION_POSITION_KEY)) as { seq?: number } | null)?.seq ?? 0;
    // A position past the stream's end belongs to a stream since recreated: rebuild from 1.
    const startSeq = stored > 0 && stored <= last ? stored + 1 : 1;
    const p = new AccountsProjector(buckets, log, startSeq, last);
    log.info({ start_seq: startSeq, stream_last_seq: last }, 'account projection resuming');
    p.reader = readOrdered(
      nats,
      { stream: STREAMS.ACCOUNTS, filter: ACCOUNT_EVENTS_ALL, startSeq },
      (msg) => p.apply(msg.info.streamSequence, msg.data),
      log,
    );
    return p;
  }

  /** Resolves once every event the stream held when this projector started is applied. */
  caughtUp(): Promise<void> {
    return this.waiters.wait(this.target);
  }

  progress(): ProjectionProgress {
    const applied = this.waiters.position;
    if (applied > this.target) this.target = applied;
    return { start: this.startSeq, applied, target: this.target, caught_up: applied >= this.target };
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
    if (this.positionTimer) clearTimeout(this.positionTimer);
    this.reader?.stop();
  }

  private async apply(seq: number, data: Uint8Array): Promise<void> {
    let writes: KvWrite[] = [];
    let type = 'undecodable';
    let poisoned = false;
    try {
      const ev = decode<AccountEvent>(data);
      type = String(ev?.type);
      await this.remember(String(ev?.account_id));
      writes = applyAccountEvent(this.state, ev, seq);
    } catch (err) {
      poisoned = this.poison(seq, type, err);
    }
    for (const w of writes) if (!(await this.write(w, seq, type))) poisoned = true;
    if (this.stopped) return;
    await this.storePosition(seq);
    this.waiters.advance(
      seq,
      poisoned ? new ApiError('internal', 'account event could not be applied') : undefined,
    );
  }

  /** Puts `accountId`'s state in memory (read back from KV when absent), as the most recently seen. */
  private async remember(accountId: string): Promise<void> {
    const accounts = this.state.accounts;
    let state = accounts.get(accountId);
    if (state) accounts.delete(accountId);
    else state = (await this.retried(() => hydrateAccount(this.buckets, accountId))) ?? undefined;
    if (!state) return;
    accounts.set(accountId, state);
    if (accounts.size > ACCOUNTS_IN_MEMORY) accounts.delete(accounts.keys().next().value as string);
  }

  /**
   * Stores the position (every write up to it has landed) at most every `POSITION_EVERY_MS`; the
   * last events of a burst are stored by a timer once that time has passed.
   */
  private async storePosition(seq: number): Promise<void> {
    const wait = POSITION_EVERY_MS - (Date.now() - this.positionStoredAt);
    if (wait > 0) {
      this.positionTimer ??= setTimeout(() => {
        this.positionTimer = null;
        if (!this.stopped) void this.storePosition(this.waiters.position);
      }, wait);
      this.positionTimer.unref();
      return;
    }
    this.positionStoredAt = Date.now();
    await writeIfNewer(this.buckets.accounts.raw, PROJECTION_POSITION_KEY, { seq }).catch((err) =>
      this.log.warn({ err: String(err), seq }, 'projection position not stored'),
    );
  }

  /** Runs a read until NATS answers (a transient failure is retried; any other is thrown). */
  private async retried<T>(read: () => Promise<T>): Promise<T> {
    for (let attempt = 0; ; attempt++) {
      try {
        return await read();
      } catch (err) {
        if (!isNatsTransient(err) || this.stopped) throw err;
        await sleepBackoff(attempt, { maxMs: 1_000 });
      }
    }
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
        const transient = isNatsTransient(err);
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

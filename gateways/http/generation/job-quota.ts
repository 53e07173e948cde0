/**
 * Per-account quotas of generation, held across every gateway process: jobs queued or running at
 * once, and artifact bytes stored. Each account has one ledger value in KV `jobs`
 * (`quotaKey(account)`), read, reconciled with its jobs' records, checked, and written back with
 * the revision read (compare-and-swap): two gateways admitting for one account at once cannot
 * both take the last slot; the loser reads again. Admissions of one account in this process run
 * one after another (a batch of 100 calls does not race itself); the map of those chains holds
 * only accounts with an admission in flight.
 */
import { JetStreamApiCodes, JetStreamApiError } from '@nats-io/jetstream';
import type { KV } from '@nats-io/kv';
import { ApiError } from '../../../contracts/errors.ts';
import { type AccountJobLedger, type JobRecord, quotaKey } from '../../../contracts/jobs.ts';
import type { Bucket } from '../../../platform/kv.ts';
import { decode, encode } from '../../../platform/msgpack.ts';
import { checkQuota, emptyLedger, type QuotaLimits, reconcile } from './quota-ledger.ts';

/** Compare-and-swap attempts before giving up with 503 `conflict`. */
const MAX_SWAPS = 16;

const isConflict = (err: unknown): boolean =>
  err instanceof JetStreamApiError &&
  (err.code === JetStreamApiCodes.StreamWrongLastSequence ||
    err.code === JetStreamApiCodes.StreamWrongLastSequenceUnknown);

export class JobQuota {
  private readonly chains = new Map<string, Promise<unknown>>();

  constructor(
    private readonly jobs: Bucket<JobRecord>,
    private readonly limits: QuotaLimits,
    private readonly now: () => number = Date.now,
  ) {}

  /** Reserves a slot for `jobId` of `accountId`, or throws 429 `quota_exceeded` (Retry-After set). */
  admit(accountId: string, jobId: string): Promise<void> {
    return this.serialized(accountId, () => this.swap(accountId, (l) => this.admitInto(l, jobId)));
  }

  /** Gives back a slot taken for a job that was never queued (best effort; reconcile would too). */
  release(accountId: string, jobId: string): Promise<void> {
    return this.serialized(accountId, () =>
      this.swap(accountId, async (l) => {
        const { [jobId]: _gone, ...active } = l.active;
        return { ...l, active };
      }),
    );
  }

  /** The account's ledger as last written (tests, diagnostics). */
  async ledger(accountId: string): Promise<AccountJobLedger> {
    return (await this.read(accountId)).ledger;
  }

  private async admitInto(ledger: AccountJobLedger, jobId: string): Promise<AccountJobLedger> {
    const now = this.now();
    const records = new Map<string, JobRecord | null>();
    for (const id of Object.keys(ledger.active)) records.set(id, await this.jobs.get(id));
    const current = reconcile(ledger, records, this.limits, now);
    checkQuota(current, this.limits, now);
    return { ...current, active: { ...current.active, [jobId]: now } };
  }

  private async read(accountId: string): Promise<{ ledger: AccountJobLedger; revision: number | null }> {
    const entry = await this.kv.get(quotaKey(accountId));
    if (entry?.operation !== 'PUT' || entry.value.length === 0)
      return { ledger: emptyLedger(), revision: null };
    return { ledger: decode<AccountJobLedger>(entry.value), revision: entry.revision };
  }

  private async swap(
    accountId: string,
    change: (ledger: AccountJobLedger) => Promise<AccountJobLedger>,
  ): Promise<void> {
    const key = quotaKey(accountId);
    for (let attempt = 0; attempt < MAX_SWAPS; attempt++) {
      const { ledger, revision } = await this.read(accountId);
      const next = encode(await change(ledger));
      try {
        if (revision === null) await this.kv.create(key, next);
        else await this.kv.update(key, next, revision);
        return;
      } catch (err) {
        if (!isConflict(err)) throw err;
      }
    }
    const err = new ApiError('conflict', 'the account quota is being changed by other requests; retry');
    err.retryAfterSeconds = 1;
    throw err;
  }

  private serialized<T>(accountId: string, run: () => Promise<T>): Promise<T> {
    const result = (this.chains.get(accountId) ?? Promise.resolve()).then(run, run);
    const tail = result.then(
      () => {},
      () => {},
    );
    this.chains.set(accountId, tail);
    void tail.then(() => {
      if (this.chains.get(accountId) === tail) this.chains.delete(accountId);
    });
    return result;
  }

  private get kv(): KV {
    return this.jobs.raw;
  }
}

/**
 * Retries of `POST /data/generate` attach to the job they first queued instead of queueing
 * another: a request is known by its account and its `Idempotency-Key` when it sends one, else by
 * its account and manifest hash. KV `generate_retries` maps that to the job (`{job_id,
 * manifest_hash}`) for GENERATE_RETRY_WINDOW_S; the mapping is claimed by compare-and-swap once
 * the job's record exists, so of two identical requests at once exactly one job is queued (and in
 * one process they queue one after the other, so the second takes no quota slot). A
 * mapped job still queued, running or completed is the answer; a failed or vanished one is
 * replaced. An Idempotency-Key reused with another manifest is 422.
 */
import { createHash } from 'node:crypto';
import { GENERATE_RETRY_WINDOW_S, IDEMPOTENCY_KEY_MAX } from '../../../contracts/base-url-limits.ts';
import { ApiError } from '../../../contracts/errors.ts';
import type { JobRecord } from '../../../contracts/jobs.ts';
import { KV_BUCKETS } from '../../../contracts/streams.ts';
import { type Bucket, openBucket } from '../../../platform/kv.ts';
import { CasConflictError, type CasWriter, casWriter } from '../../../platform/kv-cas.ts';
import { decode, encode } from '../../../platform/msgpack.ts';
import type { Nats } from '../../../platform/nats.ts';

type Mapping = { job_id: string; manifest_hash: string };

/** What identifies one request across its retries. */
export type RetryIdentity = { accountId: string; manifestHash: string; idempotencyKey: string | null };

/** The `Idempotency-Key` header, checked: null when absent, 400 when malformed. */
export function idempotencyKeyOf(header: unknown): string | null {
  if (header === undefined) return null;
  const v = Array.isArray(header) ? header[0] : header;
  if (typeof v !== 'string' || v.length === 0 || v.length > IDEMPOTENCY_KEY_MAX || !/^[\x21-\x7e]+$/.test(v))
    throw new ApiError(
      'invalid_params',
      `Idempotency-Key must be 1 to ${IDEMPOTENCY_KEY_MAX} visible ASCII characters`,
      {
        field: 'Idempotency-Key',
        reason: 'malformed',
      },
    );
  return v;
}

const sha = (s: string) => createHash('sha256').update(s).digest('hex').slice(0, 40);
const keyOf = (id: RetryIdentity): string =>
  id.idempotencyKey === null
    ? `${id.accountId}.m.${sha(id.manifestHash)}`
    : `${id.accountId}.i.${sha(id.idempotencyKey)}`;
const alive = (r: JobRecord | null): r is JobRecord => r !== null && r.status !== 'failed';

export class JobRetries {
  private opened: Promise<{ kv: Bucket<Mapping>; cas: CasWriter }> | null = null;
  /** Requests being queued in this process, by identity: only identities with one in flight. */
  private readonly chains = new Map<string, Promise<unknown>>();

  constructor(
    private readonly nats: Nats,
    private readonly jobs: Bucket<JobRecord>,
  ) {}

  /** The live job an earlier attempt of this request queued, or null. */
  async find(id: RetryIdentity): Promise<JobRecord | null> {
    const { kv } = await this.open();
    const m = await kv.get(keyOf(id));
    if (!m) return null;
    this.sameRequest(id, m);
    const job = await this.jobs.get(m.job_id);
    return alive(job) ? job : null;
  }

  /**
   * Maps this request to `jobId` (whose record exists), unless another attempt mapped it to a live
   * job first: that job's id is returned, and the caller drops its own.
   */
  async claim(id: RetryIdentity, jobId: string): Promise<string> {
    const { kv, cas } = await this.open();
    const key = keyOf(id);
    const value = encode({ job_id: jobId, manifest_hash: id.manifestHash } satisfies Mapping);
    for (let attempt = 0; attempt < 8; attempt++) {
      const e = await kv.raw.get(key);
      try {
        if (e?.operation !== 'PUT' || e.value.length === 0) {
          if (e) await cas.update(key, value, e.revision);
          else await cas.create(key, value);
          return jobId;
        }
        const m = decode<Mapping>(e.value);
        this.sameRequest(id, m);
        if (m.job_id === jobId || alive(await this.jobs.get(m.job_id))) return m.job_id;
        await cas.update(key, value, e.revision);
        return jobId;
      } catch (err) {
        if (!(err instanceof CasConflictError)) throw err;
      }
    }
    const err = new ApiError('conflict', 'this request is being queued by another attempt; retry');
    err.retryAfterSeconds = 1;
    throw err;
  }

  /**
   * Runs `queue` for `id` after any attempt of the same request this process is queueing: an
   * identical request arriving meanwhile then finds that job instead of taking a quota slot.
   */
  serialized<T>(id: RetryIdentity, queue: () => Promise<T>): Promise<T> {
    const key = keyOf(id);
    const result = (this.chains.get(key) ?? Promise.resolve()).then(queue, queue);
    const tail = result.then(
      () => {},
      () => {},
    );
    this.chains.set(key, tail);
    void tail.then(() => {
      if (this.chains.get(key) === tail) this.chains.delete(key);
    });
    return result;
  }

  private sameRequest(id: RetryIdentity, m: Mapping): void {
    if (id.idempotencyKey !== null && m.manifest_hash !== id.manifestHash)
      throw new ApiError('unprocessable', 'this Idempotency-Key was used with another manifest', {
        field: 'Idempotency-Key',
        reason: 'reused with a different request body',
      });
  }

  private open() {
    this.opened ??= (async () => ({
      kv: await openBucket<Mapping>(this.nats, KV_BUCKETS.generateRetries, {
        ttlMs: GENERATE_RETRY_WINDOW_S * 1_000,
      }),
      cas: casWriter(this.nats.js, KV_BUCKETS.generateRetries, 5_000),
    }))().catch((err) => {
      this.opened = null;
      throw err;
    });
    return this.opened;
  }
}

/**
 * The edge guard behind every surface: credential → well-formed? → known? → active? → within the
 * rate limit → allowed (tier, region, scopes) → within the concurrent-stream cap. Each refusal
 * is a catalogue error; nothing about the key is ever logged but its id.
 * The concurrent-stream cap (spec "Limits": gRPC server-streaming, SSE) counts every stream of
 * the key, `{base_url}`'s `/stream/live` included (its cap: `streamCap`, authorize.ts).
 * The revocation signal is taken in the same turn as the lookup that found the key active, so a
 * revocation arriving during the later awaits is seen: as 401 here, or by the caller's signal.
 * A key past its `expires_at` answers as a revoked one with the reason `key_expired`, and the
 * signal of a request of an expiring key aborts at its expiry too (key-expiry.ts).
 * An address that keeps being refused (401, 403, 429) gets its later refusals slowly
 * (refusal-pacer.ts), so a client looping on a refusal cannot take the process from everyone else.
 */
import type { KeyRecord } from '../../contracts/accounts.ts';
import { SESSION_TOKEN_PREFIX } from '../../contracts/accounts.ts';
import { isWellFormedApiKey } from '../../contracts/api-key-format.ts';
import { ApiError } from '../../contracts/errors.ts';
import { authFailures, rateLimitRejections } from '../../platform/metrics.ts';
import { authorize, streamCap } from './authorize.ts';
import { presentedCredential } from './credentials.ts';
import { type Guard, type GuardRequest, type Principal, RateLimitedError } from './guard.ts';
import { assertNotExpired, revocationError, untilExpiry } from './key-expiry.ts';
import { KeyFailureLimit } from './key-failure-limit.ts';
import type { KeyStore } from './key-store.ts';
import type { RateLimiter } from './rate-limit/leased-rate-limiter.ts';
import { RefusalPacer } from './refusal-pacer.ts';
import { createLocalStreamSlots, type StreamSlots } from './stream-slots.ts';

export type RateLimiterPort = Pick<RateLimiter, 'check'> & Partial<Pick<RateLimiter, 'take'>>;

/**
 * `keyFailures`: the per-address limit on failed key attempts (a fresh one when absent): consulted
 * only once a presented credential has failed, so it never refuses a valid key nor counts a missing one.
 * `maintenance`: refuses requests to a transport under a maintenance window (maintenance.ts), first.
 * `onIdentified`: told which account a request's key belongs to, once known (the error log).
 * `streamSlots`: where the concurrent-stream cap is counted (stream-slots.ts: across every process
 * on NATS KV; this process only when absent).
 * `refusals`: when a refusal is answered (refusal-pacer.ts; a fresh one when absent).
 */
export type ApiKeyGuardDeps = {
  keys: KeyStore;
  limiter: RateLimiterPort;
  keyFailures?: KeyFailureLimit;
  maintenance?: { admit(req: GuardRequest): void };
  /**
   * Conditions of the whole process that refuse new admissions: its NATS lost (nats-loss.ts), a
   * region that can no longer confirm keys (region-copy.ts).
   */
  checks?: readonly { admit(): void }[];
  onIdentified?: (requestId: string, accountId: string) => void;
  streamSlots?: StreamSlots;
  refusals?: RefusalPacer;
};

export function createApiKeyGuard(deps: ApiKeyGuardDeps): Guard & { openStreams(keyId: string): number } {
  const slots = deps.streamSlots ?? createLocalStreamSlots();
  const keyFailures = deps.keyFailures ?? new KeyFailureLimit();
  const refusals = deps.refusals ?? new RefusalPacer();
  return {
    openStreams: (keyId) => slots.held(keyId),
    async admit(req: GuardRequest): Promise<Principal> {
      try {
        deps.maintenance?.admit(req);
        for (const check of deps.checks ?? []) check.admit();
        return await admitOrThrow(req);
      } catch (thrown) {
        let err = thrown;
        // A credential that is no key spends the address's budget (key-failure-limit.ts); no credential does not.
        if (err instanceof ApiError && err.code === 'invalid_key' && presentedCredential(req) !== null)
          err = keyFailures.failed(req.clientIp) ?? err;
        if (err instanceof RateLimitedError) rateLimitRejections.inc({ tier: err.tier });
        else if (err instanceof ApiError && (err.row.http === 401 || err.row.http === 403))
          authFailures.inc({ code: err.code });
        if (err instanceof ApiError && [401, 403, 429].includes(err.row.http)) {
          const held = refusals.pace(req.clientIp);
          if (held) await held;
        }
        throw err;
      }
    },
  };

  async function admitOrThrow(req: GuardRequest): Promise<Principal> {
    const key = presentedCredential(req);
    if (!key) throw new ApiError('invalid_key', missingKeyMessage(req));
    if (key.startsWith(SESSION_TOKEN_PREFIX))
      throw new ApiError(
        'invalid_key',
        'session tokens are not accepted here: use an API key (the dashboard proxy takes session tokens)',
      );
    // A key this process knows needs no format check; any other is checked before a lookup.
    const hash = deps.keys.hash(key);
    let rec: KeyRecord | null | undefined = deps.keys.cached(hash);
    if (!rec) {
      if (!isWellFormedApiKey(key)) throw new ApiError('invalid_key', 'malformed API key');
      rec = await deps.keys.lookup(key, hash);
    }
    if (!rec) throw new ApiError('invalid_key', 'unknown API key');
    deps.onIdentified?.(req.requestId, rec.account_id);
    if (rec.status !== 'active') throw new ApiError('key_revoked', 'this API key has been revoked');
    assertNotExpired(rec);
    const watch = untilExpiry(deps.keys.revocationSignal(rec.key_hash), rec.expires_at);
    const revoked = watch.signal;
    try {
      return await admitKey(req, rec, revoked, watch.stop);
    } catch (err) {
      watch.stop();
      throw err;
    }
  }

  async function admitKey(
    req: GuardRequest,
    rec: KeyRecord,
    revoked: AbortSignal,
    stopWatch: () => void,
  ): Promise<Principal> {
    // Every request of a valid key counts, refused ones included: the bucket protects the edge.
    const decision = await deps.limiter.check(rec.key_id, rec.tier);
    if (decision.unavailable) throw new ApiError('overload', 'rate limiting is unavailable; retry shortly');
    if (!decision.admitted) throw new RateLimitedError(decision, rec.tier);
    const grant = authorize(rec, { surface: req.surface, region: req.region, capability: req.capability });
    if (revoked.aborted) throw revocationError(revoked);

    const counted = req.stream;
    let release = () => {};
    if (counted) {
      const cap = streamCap(rec.tier, req.surface);
      const slot = await slots.acquire(rec.key_id, cap).catch(() => {
        throw new ApiError('overload', 'stream limits are unavailable; retry shortly');
      });
      if (!slot.admitted)
        throw new ApiError(
          'subscription_limit',
          `this key already has ${slot.open} open streams (the ${rec.tier} cap is ${cap})`,
        );
      if (revoked.aborted) {
        slot.release();
        throw revocationError(revoked);
      }
      release = slot.release;
    }
    const releaseSlot = release;
    release = () => {
      stopWatch();
      releaseSlot();
    };
    deps.keys.touch(rec.key_id);
    return {
      accountId: rec.account_id,
      keyId: rec.key_id,
      tier: rec.tier,
      sources: grant.sources,
      scopes: rec.scopes,
      revoked,
      rateLimit: decision,
      async charge() {
        if (revoked.aborted) throw revocationError(revoked);
        const next = await deps.limiter.check(rec.key_id, rec.tier);
        if (next.unavailable) throw new ApiError('overload', 'rate limiting is unavailable; retry shortly');
        if (!next.admitted) throw new RateLimitedError(next, rec.tier);
        return next;
      },
      chargeNow: (n) => (revoked.aborted ? null : (deps.limiter.take?.(rec.key_id, rec.tier, n) ?? null)),
      release,
    };
  }
}

function missingKeyMessage(req: GuardRequest): string {
  if (req.surface === 'unified') return 'API key missing: send x-api-key or Authorization: Bearer <key>';
  if (req.surface === 'disksync') return 'API key missing: send x-api-key (or the api_key query parameter)';
  return 'API key missing: send the x-api-key header';
}

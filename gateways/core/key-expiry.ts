/**
 * A key's expiry as the edge sees it: past `expires_at` a key answers as a revoked one, with the
 * reason `key_expired` (401, -32001, UNAUTHENTICATED; on an open stream `auth_expired` / 4002).
 *
 * `untilExpiry` gives an admitted request the signal it watches for "this key is no longer
 * valid": the key's shared revocation signal, plus, for a key that expires, its expiry, which
 * aborts the signal at `expires_at` with the `key_expired` error as its reason (so an open stream
 * ends at that moment, not at its next check). Bounded: one timer per admitted request of an
 * expiring key, cleared by `stop` (called by the principal's release) or when it fires; a delay
 * past setTimeout's longest is waited for in steps.
 */
import { keyExpired } from '../../contracts/accounts.ts';
import { ApiError } from '../../contracts/errors.ts';

/** setTimeout's longest delay, ms. */
const MAX_DELAY_MS = 2 ** 31 - 1;

export function expiredError(expiresAt: number): ApiError {
  return new ApiError('key_expired', `this API key expired at ${new Date(expiresAt).toISOString()}`);
}

/** Throws 401 `key_expired` when the key is past its expiry at `now`. */
export function assertNotExpired(rec: { expires_at?: number | null }, now = Date.now()): void {
  if (keyExpired(rec, now)) throw expiredError(rec.expires_at as number);
}

/** `revoked`, and for an expiring key its expiry too; `stop` ends the watch (idempotent). */
export function untilExpiry(
  revoked: AbortSignal,
  expiresAt: number | null | undefined,
): { signal: AbortSignal; stop: () => void } {
  if (expiresAt == null) return { signal: revoked, stop: () => {} };
  const c = new AbortController();
  let timer: NodeJS.Timeout | null = null;
  const onRevoked = () => c.abort(revoked.reason);
  const stop = () => {
    if (timer) clearTimeout(timer);
    timer = null;
    revoked.removeEventListener('abort', onRevoked);
  };
  const arm = () => {
    const wait = expiresAt - Date.now();
    if (wait <= 0) {
      stop();
      c.abort(expiredError(expiresAt));
      return;
    }
    timer = setTimeout(arm, Math.min(wait, MAX_DELAY_MS));
    timer.unref();
  };
  if (revoked.aborted) c.abort(revoked.reason);
  else {
    revoked.addEventListener('abort', onRevoked, { once: true });
    arm();
  }
  return { signal: c.signal, stop };
}

/** The error a request or stream ends with once its signal aborted: the reason it carries, else `key_revoked`. */
export function revocationError(signal: AbortSignal, message = 'this API key has been revoked'): ApiError {
  return signal.reason instanceof ApiError && signal.reason.code === 'key_expired'
    ? signal.reason
    : new ApiError('key_revoked', message);
}

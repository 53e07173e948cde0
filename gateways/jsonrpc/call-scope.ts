/**
 * How long the calls of one request may run, and how they end early. Every call of a request
 * shares one scope: it ends a call still in flight with -32001 when the key is revoked and with
 * -32009 when the call deadline passes, and the signal it hands to methods stops their reads of
 * the log at the same moment. A call that finished before either keeps its answer. The timer and
 * the listener exist only once a call has had to wait (a call answered from memory costs neither).
 * Failures of NATS itself map to the catalogue here: a request that timed out is -32009, a lost
 * connection -32004.
 */
import { ClosedConnectionError, ConnectionError, RequestError, TimeoutError } from '@nats-io/transport-node';
import { ApiError, toApiError } from '../../contracts/errors.ts';
import type { Principal } from '../core/guard.ts';

export class CallScope {
  private controller: AbortController | null = null;
  private timer: NodeJS.Timeout | null = null;
  private onRevoked: (() => void) | null = null;

  constructor(
    private readonly principal: Principal,
    private readonly timeoutMs: number,
  ) {}

  /** Aborts, with the ApiError the call ends with as its reason, when a call must end. */
  get signal(): AbortSignal {
    if (!this.controller) {
      const controller = new AbortController();
      this.controller = controller;
      const revoked = this.principal.revoked;
      this.onRevoked = () =>
        controller.abort(
          new ApiError('key_revoked', 'this API key was revoked while the call was in flight'),
        );
      if (revoked.aborted) this.onRevoked();
      else revoked.addEventListener('abort', this.onRevoked, { once: true });
      this.timer = setTimeout(
        () => controller.abort(new ApiError('upstream_timeout', `no answer within ${this.timeoutMs} ms`)),
        this.timeoutMs,
      );
    }
    return this.controller.signal;
  }

  /** Refuses to start a call for a key revoked since the request was admitted. */
  assertLive(): void {
    if (this.principal.revoked.aborted)
      throw new ApiError('key_revoked', 'this API key was revoked while the request was in flight');
  }

  /** The call's result, or the scope's reason once it aborts first. */
  race<T>(pending: Promise<T>): Promise<T> {
    const signal = this.signal;
    if (signal.aborted) return Promise.reject(signal.reason);
    return new Promise<T>((resolve, reject) => {
      const abort = () => reject(signal.reason);
      signal.addEventListener('abort', abort, { once: true });
      pending.then(resolve, reject).finally(() => signal.removeEventListener('abort', abort));
    });
  }

  end(): void {
    if (this.timer) clearTimeout(this.timer);
    if (this.onRevoked) this.principal.revoked.removeEventListener('abort', this.onRevoked);
  }
}

/** A call's failure as a catalogue error. */
export function callError(e: unknown): ApiError {
  if (e instanceof TimeoutError || (e instanceof RequestError && e.cause instanceof TimeoutError))
    return new ApiError('upstream_timeout', 'the market data log did not answer in time', undefined, {
      cause: e,
    });
  if (e instanceof ClosedConnectionError || e instanceof ConnectionError || e instanceof RequestError)
    return new ApiError('feed_unavailable', 'the market data log is unreachable; retry shortly', undefined, {
      cause: e,
    });
  return toApiError(e);
}

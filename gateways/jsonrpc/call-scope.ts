/**
 * How long the calls of one request may run, and how they end early. Every call of a request
 * shares one scope: it ends a call still in flight with -32001 when the key is revoked and with
 * -32009 when the call deadline (from the request's start) passes, and the signal it hands to
 * methods stops their reads of the log at the same moment. A call that finished before either
 * keeps its answer.
 *
 * Cost: a listener on an AbortSignal costs more than a whole call answered from memory (Node 20).
 * So nothing is armed for calls that settle within the event-loop turn they started in (the
 * latest-state answers): the timer and the revocation listener are armed only when a call is still
 * waiting a turn later, or when a method asks for the signal (it waits on I/O).
 * Failures of NATS itself map to the catalogue here: a request that timed out is -32009, a lost
 * connection -32004.
 */
import { ClosedConnectionError, ConnectionError, RequestError, TimeoutError } from '@nats-io/transport-node';
import { ApiError, toApiError } from '../../contracts/errors.ts';
import type { Principal } from '../core/guard.ts';
import { revocationError } from '../core/key-expiry.ts';

export class CallScope {
  private readonly startedAt = performance.now();
  private readonly waiting = new Set<(reason: ApiError) => void>();
  private controller: AbortController | null = null;
  private timer: NodeJS.Timeout | null = null;
  private armed = false;
  private checkScheduled = false;
  private ended = false;
  private reason: ApiError | null = null;
  // key_expired for a key that expired meanwhile, else key_revoked (key-expiry.ts).
  private readonly onRevoked = () =>
    this.abort(
      revocationError(this.principal.revoked, 'this API key was revoked while the call was in flight'),
    );

  constructor(
    private readonly principal: Principal,
    private readonly timeoutMs: number,
  ) {}

  /** Aborts, with the ApiError the call ends with as its reason, when a call must end. */
  get signal(): AbortSignal {
    if (!this.controller) {
      this.controller = new AbortController();
      if (this.reason) this.controller.abort(this.reason);
      this.arm();
    }
    return this.controller.signal;
  }

  /** Refuses to start a call for a key revoked since the request was admitted, or once the scope ended. */
  assertLive(): void {
    if (this.reason) throw this.reason;
    if (this.principal.revoked.aborted)
      throw revocationError(
        this.principal.revoked,
        'this API key was revoked while the request was in flight',
      );
  }

  /** The call's result, or the scope's reason once it ends first. */
  race<T>(pending: Promise<T>): Promise<T> {
    if (this.reason) return Promise.reject(this.reason);
    this.armIfStillWaiting();
    return new Promise<T>((resolve, reject) => {
      this.waiting.add(reject);
      pending.then(
        (v) => {
          this.waiting.delete(reject);
          resolve(v);
        },
        (e) => {
          this.waiting.delete(reject);
          reject(e);
        },
      );
    });
  }

  /** The client went away before its answer: calls still running or waiting end (-32603, cancelled). */
  clientGone(): void {
    this.abort(new ApiError('cancelled', 'the client closed the request'));
  }

  end(): void {
    this.ended = true;
    if (this.timer) clearTimeout(this.timer);
    if (this.armed) this.principal.revoked.removeEventListener('abort', this.onRevoked);
  }

  private armIfStillWaiting(): void {
    if (this.armed || this.checkScheduled) return;
    this.checkScheduled = true;
    setImmediate(() => {
      if (!this.ended && this.waiting.size > 0) this.arm();
    });
  }

  private arm(): void {
    if (this.armed || this.ended) return;
    this.armed = true;
    const left = Math.max(0, this.timeoutMs - (performance.now() - this.startedAt));
    this.timer = setTimeout(
      () => this.abort(new ApiError('upstream_timeout', `no answer within ${this.timeoutMs} ms`)),
      left,
    );
    if (this.principal.revoked.aborted) this.onRevoked();
    else this.principal.revoked.addEventListener('abort', this.onRevoked, { once: true });
  }

  private abort(reason: ApiError): void {
    if (this.reason) return;
    this.reason = reason;
    this.controller?.abort(reason);
    for (const reject of this.waiting) reject(reason);
    this.waiting.clear();
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

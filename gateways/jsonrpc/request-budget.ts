/**
 * What all the calls of one JSON-RPC request (a batch, or one call) share, so that a batch costs
 * no more than its stated bounds whatever its calls (contracts/transport-limits.ts):
 * - coins: at most MAX_COINS_PER_JSONRPC_REQUEST named across its calls; a call past it is -32602;
 * - the caller's own coins: read from JetStream at most once for the whole request;
 * - answers: at most MAX_JSONRPC_ANSWER_EVENTS events and MAX_JSONRPC_ANSWER_BYTES bytes of events
 *   across its calls. A call reads at most the events still left (`room`), then keeps those that
 *   still fit (`keep`: calls run at once, so the count is taken again); what it leaves out comes
 *   with the next poll or page. A call that finds nothing left is -32007 (answer over the permitted
 *   size). Events held at once while reading: at most JSONRPC_BATCH_CONCURRENCY calls' worth.
 * The state lives on the request's CallContext: nothing outlives it.
 */
import { ApiError } from '../../contracts/errors.ts';
import {
  MAX_COINS_PER_JSONRPC_REQUEST,
  MAX_JSONRPC_ANSWER_BYTES,
  MAX_JSONRPC_ANSWER_EVENTS,
} from '../../contracts/transport-limits.ts';
import type { Nats } from '../../platform/nats.ts';
import { type OwnCoinLookup, ownCoinLookup } from '../core/own-coins.ts';
import { viewerOf } from '../core/visibility.ts';
import type { CallContext } from './context.ts';

export class RequestBudget {
  private coinsLeft = MAX_COINS_PER_JSONRPC_REQUEST;
  private eventsLeft = MAX_JSONRPC_ANSWER_EVENTS;
  private bytesLeft = MAX_JSONRPC_ANSWER_BYTES;

  /** The subscription core's options of every call of the request (one object, not one per call). */
  readonly subscribeOptions: { readonly ownCoins: OwnCoinLookup };

  constructor(ownCoins: OwnCoinLookup) {
    this.subscribeOptions = { ownCoins };
  }

  /** Counts `n` coins named by a call; -32602 past the request's bound. */
  takeCoins(n: number): void {
    if (n > this.coinsLeft)
      throw new ApiError(
        'invalid_params',
        `one request may name at most ${MAX_COINS_PER_JSONRPC_REQUEST} coins across its calls; split the batch`,
        { field: 'coins', limit: MAX_COINS_PER_JSONRPC_REQUEST },
      );
    this.coinsLeft -= n;
  }

  /** How many of `want` events a call may read; -32007 when the request's answer is full. */
  room(want: number): number {
    const n = Math.min(want, this.eventsLeft);
    if (n <= 0 || this.bytesLeft <= 0) throw answerFull();
    return n;
  }

  /** The leading events that still fit the request's answer (count and bytes), counted in it. */
  keep<E extends { json: string }>(events: readonly E[]): E[] {
    let n = 0;
    for (const ev of events) {
      if (this.eventsLeft <= 0 || ev.json.length + 1 > this.bytesLeft) break;
      this.bytesLeft -= ev.json.length + 1;
      this.eventsLeft--;
      n++;
    }
    return n === events.length ? [...events] : events.slice(0, n);
  }
}

/** -32007: the request's answer holds all it may. */
export const answerFull = (): ApiError =>
  new ApiError(
    'snapshot_too_large',
    `this request's answer already holds its maximum (${MAX_JSONRPC_ANSWER_EVENTS} events, ${MAX_JSONRPC_ANSWER_BYTES} bytes); ask again in another request`,
    { max_events: MAX_JSONRPC_ANSWER_EVENTS, max_bytes: MAX_JSONRPC_ANSWER_BYTES },
  );

/**
 * The budget of the request `ctx` belongs to (made on its first use), kept on the context itself:
 * a WeakMap keyed by the context kept every request alive past young-generation collections.
 */
export function budgetOf(nats: Nats, ctx: CallContext): RequestBudget {
  let b = ctx.budget;
  if (!b) {
    // Made when first asked: reading ctx.signal arms the call scope (call-scope.ts), which calls
    // answered from memory never need.
    let lookup: OwnCoinLookup | null = null;
    b = new RequestBudget((spellings) => {
      lookup ??= ownCoinLookup(nats, viewerOf(ctx.principal), ctx.signal);
      return lookup(spellings);
    });
    ctx.budget = b;
  }
  return b;
}

/**
 * What every JSON-RPC method is given: the process's market data (live tail, latest-state view,
 * filter store; the `OWN` tail of accounts' own events, started on first use by a caller with an
 * account), the edge's settings, and per call the caller's principal and a signal that aborts
 * when the call must end (key revoked, deadline passed, client gone).
 */

import type { Logger } from '../../platform/logger.ts';
import type { Nats } from '../../platform/nats.ts';
import type { Principal } from '../core/guard.ts';
import type { LatestState } from '../core/latest-state.ts';
import type { LiveTail } from '../core/live-tail.ts';
import type { FilterStore } from './filter-store.ts';
import type { RequestBudget } from './request-budget.ts';

/** The edge's settings (from the configuration). */
export type JsonRpcSettings = {
  chainId: number;
  /** Retention of `MD` by age, ms: an older `md_trades` start is -32008. */
  retentionMs: number;
  tradesMaxRangeMs: number;
  tradesSkewMs: number;
  filterMaxEvents: number;
  callTimeoutMs: number;
};

export type EdgeDeps = {
  nats: Nats;
  tail: LiveTail;
  latest: LatestState;
  filters: FilterStore;
  settings: JsonRpcSettings;
  /** The `OWN` tail (own-feed.ts `ownTail`) logs through it; started only by a call with a viewer. */
  log: Logger;
};

export type CallContext = {
  readonly principal: Principal;
  readonly requestId: string;
  /** Aborts when the call must end; methods that wait on NATS stop their reads on it. */
  readonly signal: AbortSignal;
  /** What the request's calls share (request-budget.ts `budgetOf`), made on first use. */
  budget?: RequestBudget;
};

/**
 * The CallContext of one request, its signal the call scope's (made only when a method asks).
 * A class, not an object literal with a getter: each such literal gets a hidden class of its own
 * holding its getter, which the young-generation collector counts as a reference from old space,
 * so every request's whole graph (body, reply, principal) was promoted and kept until a full
 * collection (1.5 MB promoted per scavenge of a batch benchmark; 0.17 MB without).
 */
export class RequestContext implements CallContext {
  budget?: RequestBudget;

  constructor(
    readonly principal: Principal,
    readonly requestId: string,
    private readonly scope: { readonly signal: AbortSignal },
  ) {}

  get signal(): AbortSignal {
    return this.scope.signal;
  }
}

/** A method's result, already encoded as JSON text (encoded once, spliced into every response). */
export type Json = string & { readonly __json: unique symbol };

export const toJson = (value: unknown): Json => JSON.stringify(value) as Json;

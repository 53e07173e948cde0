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
  principal: Principal;
  requestId: string;
  /** Aborts when the call must end; methods that wait on NATS stop their reads on it. */
  signal: AbortSignal;
};

/** A method's result, already encoded as JSON text (encoded once, spliced into every response). */
export type Json = string & { readonly __json: unique symbol };

export const toJson = (value: unknown): Json => JSON.stringify(value) as Json;

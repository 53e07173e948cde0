/**
 * What the accounts service needs of the read side, as ports: it writes events to the
 * `ACCOUNTS` stream and reads the KV projections, and waits until its own write is projected
 * ("read your writes"). The consumers' projector implements `ProjectionWaiter`; the service
 * never imports the consumers.
 */
import type { Bucket } from '../../platform/kv.ts';

/** Waits until the projection has applied the `ACCOUNTS` stream up to a sequence. */
export type ProjectionWaiter = {
  /** Settles once everything up to `seq` is applied; rejects after `deadlineMs`. */
  applied(seq: number, deadlineMs?: number): Promise<void>;
};

/** The KV read models of accounts (see contracts/streams.ts for their names). */
export type AccountReadModels = {
  keys: Bucket<unknown>;
  accounts: Bucket<unknown>;
  accountKeys: Bucket<unknown>;
  sessions: Bucket<unknown>;
};

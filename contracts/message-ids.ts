/**
 * `Nats-Msg-Id` spellings: what makes a publish idempotent within a stream's duplicate window.
 * Each id is a pure function of what the message means, so a retried publish, a second process
 * doing the same work, or a restart redoing it stores once. Spelled here and nowhere else (the
 * compare-and-set ids of KV writes, `<key>@<revision>`, are platform/kv-cas.ts's mechanism).
 */

/** An account's registration (`ACCOUNTS`): one per account id, however often the request is retried. */
export const registeredMsgId = (accountId: string): string => `registered.${accountId}`;

/** A session stored again under the current secret version (`ACCOUNTS`), once per its hash under that version. */
export const sessionRehashedMsgId = (currentHash: string): string => `session_rehashed.${currentHash}`;

/** A key stored again under the current secret version (`ACCOUNTS`), once per key and new hash. */
export const keyRehashedMsgId = (keyId: string, newHash: string): string =>
  `key_rehashed.${keyId}.${newHash}`;

/** The prefix of a `stream: true` batch's events (`MD`); the event's index in the batch follows. */
export const ownBatchMsgIdPrefix = (accountId: string, batchId: string): string =>
  `norm.${accountId}.${batchId}.`;

/** The `i`-th event of one attempt to store a cache (`CACHE`; `attempt` tells a cache stored again from its former self). */
export const cacheEventMsgId = (cacheKey: string, attempt: string, i: number): string =>
  `${cacheKey}.${attempt}.${i}`;

/** A work-queue message published again to be delivered again: the old message's stream sequence. */
export const redeliveryMsgId = (subject: string, oldSeq: number): string => `${subject}.h${oldSeq}`;

/** The prefix of a simulator run's events (`SIM` for a batch run, `live.<symbol>.<seed>.<start>` for a live session). */
export const simRunMsgIdPrefix = (symbol: string, runId: string): string => `sim.${symbol}.${runId}`;
/** The prefix of a live synthetic session's events (`SIM`): its key and the start its producers share. */
export const liveSessionMsgIdPrefix = (sessionKey: string, startMs: number): string =>
  `live.${sessionKey}.${startMs}`;

/** A key's revocation (`ACCOUNTS`): once per key, however often the request is retried. */
export const keyRevokedMsgId = (keyId: string): string => `revoked.${keyId}`;

/** A derived bar or snapshot (`DERIVED`): once per (kind, source, symbol, start of its span). */
export const derivedMsgId = (kind: string, source: string, symbol: string, startMs: number): string =>
  `dv.${kind}.${source}.${symbol}.${startMs}`;

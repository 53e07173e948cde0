/**
 * Reads the error log: the entry of one request id under one account's subject, so an account
 * can only ever reach its own errors (another account's entry is on another subject).
 */
import { type ErrorLogEntry, errorLogSubject } from '../../contracts/status.ts';
import { STREAMS } from '../../contracts/streams.ts';
import { decode } from '../../platform/msgpack.ts';
import type { Nats } from '../../platform/nats.ts';

/** The account's latest error with this request id, or null. */
export async function lookupError(
  nats: Nats,
  accountId: string,
  requestId: string,
): Promise<ErrorLogEntry | null> {
  const msg = await nats.jsm.streams.getMessage(STREAMS.ERRORS, {
    last_by_subj: errorLogSubject(accountId, requestId),
  });
  return msg ? decode<ErrorLogEntry>(msg.data) : null;
}

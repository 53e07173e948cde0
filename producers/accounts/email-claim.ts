/**
 * The email index entry (`accounts` bucket, `email.<sha256>`) claimed before a registration is
 * published, so two registrations of one email cannot both win. Invariant: a claim never outlives
 * a registration that did not happen. A failed publish releases its own claim (compare-and-delete on
 * the claim's revision, so a later claim is never removed), and a claim left by a process that died
 * between claim and publish is taken over once it is `STALE_CLAIM_MS` old and the `ACCOUNTS` stream
 * holds no `registered` event for it. A claim the projector confirmed (it carries `seq`) is final.
 */
import type { KV } from '@nats-io/kv';
import { accountSubject, type EmailIndex } from '../../contracts/accounts.ts';
import { ApiError } from '../../contracts/errors.ts';
import { STREAMS } from '../../contracts/streams.ts';
import { decode, encode } from '../../platform/msgpack.ts';
import type { Nats } from '../../platform/nats.ts';

/** Age after which an unconfirmed claim may be taken over, ms. */
export const STALE_CLAIM_MS = 60_000;

export type EmailClaim = { revision: number; release(): Promise<void> };

/** Whether the stream holds the `registered` event of `accountId`. */
export async function registrationPublished(nats: Nats, accountId: string): Promise<boolean> {
  const msg = await nats.jsm.streams.getMessage(STREAMS.ACCOUNTS, {
    last_by_subj: accountSubject(accountId, 'registered'),
  });
  return msg !== null;
}

const isConflict = (err: unknown) => /wrong last sequence/i.test(String((err as Error | null)?.message));

/** Claims `indexKey` for `accountId`, or throws 409 `email_taken`. */
export async function claimEmail(
  nats: Nats,
  kv: KV,
  indexKey: string,
  accountId: string,
): Promise<EmailClaim> {
  const value = encode({ account_id: accountId, claimed_at: Date.now() } satisfies EmailIndex);
  const claim = (revision: number): EmailClaim => ({
    revision,
    release: async () => {
      await kv.delete(indexKey, { previousSeq: revision });
    },
  });
  try {
    return claim(await kv.create(indexKey, value));
  } catch (err) {
    if (!isConflict(err)) throw err;
  }
  const entry = await kv.get(indexKey);
  const held = entry?.operation === 'PUT' && entry.value.length > 0 ? decode<EmailIndex>(entry.value) : null;
  const stale =
    entry &&
    held &&
    held.seq === undefined &&
    (held.claimed_at ?? 0) <= Date.now() - STALE_CLAIM_MS &&
    !(await registrationPublished(nats, held.account_id));
  if (entry && stale) {
    try {
      return claim(await kv.update(indexKey, value, entry.revision));
    } catch (err) {
      if (!isConflict(err)) throw err;
    }
  }
  throw new ApiError('email_taken', 'an account with this email already exists');
}

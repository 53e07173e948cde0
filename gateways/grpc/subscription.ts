/**
 * A protobuf `Subscription` (or StreamMidsRequest) as the one subscription contract
 * (contracts/subscription.ts): empty lists mean "all", `after_seq` is the resume position
 * (`last_event_id`), `after_own_seq` the account's own events' (`last_own_seq`), `start_ms`/`end_ms`/`speed` a replay by time. Anything the contract refuses is INVALID_ARGUMENT with the field named.
 */
import { Subscription } from '../../contracts/subscription.ts';
import { parseWith } from '../core/validate.ts';

const list = (v: unknown): unknown => (Array.isArray(v) && v.length > 0 ? v : undefined);

export function subscriptionOf(msg: Record<string, unknown> | null | undefined): Subscription {
  const m = msg ?? {};
  const raw: Record<string, unknown> = {};
  for (const [from, to] of [
    ['coins', 'coins'],
    ['event_types', 'event_types'],
    ['sources', 'sources'],
  ] as const) {
    const v = list(m[from]);
    if (v !== undefined) raw[to] = v;
  }
  if (m.after_seq !== undefined && m.after_seq !== null) raw.last_event_id = m.after_seq;
  if (m.after_own_seq !== undefined && m.after_own_seq !== null) raw.last_own_seq = m.after_own_seq;
  for (const [from, to] of [
    ['start_ms', 'from_ms'],
    ['end_ms', 'to_ms'],
    ['speed', 'speed'],
  ] as const)
    if (m[from] !== undefined && m[from] !== null) raw[to] = m[from];
  return parseWith(Subscription, raw, 'text');
}

/** Whether a Subscription asks for `FeedMessage.batch` messages (StreamEvents, Stream's `open`). */
export const batchRequested = (msg: Record<string, unknown> | null | undefined): boolean =>
  msg?.batch === true;

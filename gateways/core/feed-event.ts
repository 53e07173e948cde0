/**
 * A market event as the gateways hold it: decoded once per gateway process, its JSON built once,
 * then shared by every client it is fanned out to. `owner` comes from the subject alone (never
 * from the payload): null for the platform's feed, the account id for an account's own event.
 */
import type { JsMsg } from '@nats-io/jetstream';
import { type FeedSubjectParts, type MdSubjectParts, parseFeedSubject } from '../../contracts/subjects.ts';
import { decode } from '../../platform/codec.ts';

export type FeedEvent = {
  /** JetStream stream sequence: the event id on every transport. */
  readonly seq: number;
  readonly source: string;
  readonly symbol: string;
  readonly eventType: string;
  /** The account whose own event this is; null for the platform's feed. See `visibility.ts`. */
  readonly owner: string | null;
  /** The event JSON with `seq` first: what SSE, JSON-RPC and WebSocket clients receive. */
  readonly json: string;
  /** `process.hrtime` (ns, as a number) when the gateway received it; for latency measurement. */
  readonly receivedAtNs: number;
  /** Per-transport encodings, memoised by the transport that needs them. */
  wire: { sse?: string };
};

export const nowNs = (): number => Number(process.hrtime.bigint());

/** Null for a message that is not a well-formed market event (it is skipped, never fatal). */
export function decodeFeedEvent(
  msg: JsMsg,
  receivedAtNs = nowNs(),
  parse: (subject: string) => MdSubjectParts | FeedSubjectParts | null = parseFeedSubject,
): FeedEvent | null {
  const parts = parse(msg.subject);
  if (!parts) return null;
  let body: unknown;
  try {
    body = decode(msg.data);
  } catch {
    return null;
  }
  if (typeof body !== 'object' || body === null || Array.isArray(body)) return null;
  const seq = msg.info.streamSequence;
  const rest = JSON.stringify(body);
  const json = rest === '{}' ? `{"seq":${seq}}` : `{"seq":${seq},${rest.slice(1)}`;
  return {
    seq,
    source: parts.source,
    symbol: parts.symbol,
    eventType: parts.eventType,
    owner: 'owner' in parts ? parts.owner : null,
    json,
    receivedAtNs,
    wire: {},
  };
}

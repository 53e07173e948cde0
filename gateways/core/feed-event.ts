/**
 * A market event as the gateways hold it: built once per gateway process from the stored bytes,
 * then shared by every client it is fanned out to. Routing (`source`, `symbol`, `eventType`,
 * `owner`) comes from the subject alone, never from the payload: `owner` is null for the
 * platform's feed, the account id for an account's own event. The payload is not parsed: `json`
 * is the stored bytes with `seq` spliced in front (contracts/event-wire.ts), and each transport
 * memoises its own encoding in `wire`, so no client costs a re-encode. The message's bytes are
 * not kept: they are a view into the connection's read buffer, which a ring of events would pin.
 *
 * Every gateway reader of `MD`, `SIM` and `CACHE` goes through `decodeFeedEvent`.
 */
import type { JsMsg } from '@nats-io/jetstream';
import { isStoredEvent, storedJsonWithSeq } from '../../contracts/event-wire.ts';
import {
  type FeedSubjectParts,
  isOwnSubject,
  type MdSubjectParts,
  parseFeedSubject,
} from '../../contracts/subjects.ts';

/** Per-transport encodings of one event, each made once per process by the transport that needs it. */
export type FeedEventWire = {
  /** The SSE message (`id:` + `data:`). */
  sse?: string;
  [transport: string]: string | Buffer | Uint8Array | undefined;
};

export type FeedEvent = {
  /** JetStream stream sequence: the event id on every transport (`OWN`'s for an own event). */
  readonly seq: number;
  readonly source: string;
  readonly symbol: string;
  readonly eventType: string;
  /** The account whose own event (read from `OWN`) this is; null for the platform's feed (`MD`). See `visibility.ts`. */
  readonly owner: string | null;
  /** The event JSON with `seq` first: what SSE, JSON-RPC and WebSocket clients receive. */
  readonly json: string;
  /** `process.hrtime` (ns, as a number) when the gateway received it (`taskNowNs`); for latency measurement. */
  readonly receivedAtNs: number;
  /** Per-transport encodings, memoised by the transport that needs them. */
  wire: FeedEventWire;
};

export const nowNs = (): number => Number(process.hrtime.bigint());

let taskNs = 0;
const endTask = (): void => {
  taskNs = 0;
};

/**
 * `nowNs` when the current task (one read of NATS bytes, however many messages it holds) began:
 * when its events were received. Read once per task, not once per event (a clock read per event
 * is a measurable share of a catch-up's CPU).
 */
export function taskNowNs(): number {
  if (taskNs === 0) {
    taskNs = nowNs();
    queueMicrotask(endTask);
  }
  return taskNs;
}

/** Routing parts of a subject; null when the subject is not one of the stream's events. */
export type SubjectParser = (subject: string) => MdSubjectParts | FeedSubjectParts | null;

/** A subject's routing parts, and whether it is an account's own (`OWN`: marked `"own":true`). */
type Parsed = { parts: MdSubjectParts | FeedSubjectParts; own: boolean } | null;

/**
 * Subjects repeat (one per source × coin × event type): their parts are parsed once and kept.
 * Bounded, so a flood of distinct subjects costs a re-parse, never memory.
 */
const PARSED_MAX = 10_000;
const parsedByParser = new WeakMap<SubjectParser, Map<string, Parsed>>();

function partsOf(subject: string, parse: SubjectParser): Parsed {
  let cache = parsedByParser.get(parse);
  if (!cache) {
    cache = new Map();
    parsedByParser.set(parse, cache);
  }
  let parsed = cache.get(subject);
  if (parsed === undefined) {
    const parts = parse(subject);
    parsed = parts && { parts, own: isOwnSubject(subject) };
    if (cache.size >= PARSED_MAX) cache.clear();
    cache.set(subject, parsed);
  }
  return parsed;
}

/** The parts of a stored message a FeedEvent is made of, beside its stream sequence. */
export type StoredMessage = Pick<JsMsg, 'subject' | 'data'>;

/** Null for a message that is not a well-formed market event (it is skipped, never fatal). */
export function decodeFeedEvent(
  msg: StoredMessage,
  seq: number,
  receivedAtNs = taskNowNs(),
  parse: SubjectParser = parseFeedSubject,
): FeedEvent | null {
  const parsed = partsOf(msg.subject, parse);
  if (!parsed || !isStoredEvent(msg.data)) return null;
  const { parts } = parsed;
  return {
    seq,
    source: parts.source,
    symbol: parts.symbol,
    eventType: parts.eventType,
    owner: 'owner' in parts ? parts.owner : null,
    json: storedJsonWithSeq(msg.data, seq, parsed.own),
    receivedAtNs,
    wire: {},
  };
}

/** A FeedEvent from parts already known (tests, events not read from a stream). */
export function feedEvent(
  fields: Omit<FeedEvent, 'json' | 'wire' | 'receivedAtNs'> & { json: string; receivedAtNs?: number },
): FeedEvent {
  return { ...fields, receivedAtNs: fields.receivedAtNs ?? nowNs(), wire: {} };
}

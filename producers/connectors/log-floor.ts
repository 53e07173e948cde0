/**
 * What `MD` already holds of one connector, read back at start-up: per (symbol, channel) the
 * highest venue position published (Binance trade `t`, book `u`; Hyperliquid `time`) and, for ids
 * with a tie-breaker (Hyperliquid trades: `tid`), the tie-breakers stored at that position. An
 * event at or below its floor is already in the log and is not published again.
 *
 * Why: JetStream drops a repeated `Nats-Msg-Id` only within the stream's duplicate window (two
 * minutes). A connector (or NATS) down longer than that, then a venue replaying recent frames on
 * reconnect, or a Binance book rebuilt from an older snapshot, would store events twice. The
 * adapters' own memory (binance.ts, hyperliquid.ts) keeps this from happening within a process;
 * the floor carries it across restarts, because it is read from the log itself.
 *
 * Message ids are `<venue>.<symbol>.<channel>.<position>[.<tie>]` (venue.ts). Ids without a tie
 * are published in increasing position order, so the subject's last message holds the highest.
 * Tied ids are not (a Hyperliquid replay lists newest first, and a tid missed at the newest time
 * can be stored after a restart), so the subject is scanned, headers only, from a minute before
 * the newest position: every event at that position was stored after it happened (allowing a
 * minute of clock skew between venue and us).
 *
 * A floor is retired once an event above it passes: from then on the adapter's memory is ahead
 * of it, and the hot path is one failed map lookup.
 */
import { DeliverPolicy } from '@nats-io/jetstream';
import type { Source } from '../../contracts/events.ts';
import { STREAMS } from '../../contracts/streams.ts';
import { mdSubject } from '../../contracts/subjects.ts';
import { sleepBackoff } from '../../platform/backoff.ts';
import type { Logger } from '../../platform/logger.ts';
import type { Nats } from '../../platform/nats.ts';

/** The channels a connector publishes (MD's `event_type` token). */
const CHANNELS = ['trade', 'book'] as const;
type Channel = (typeof CHANNELS)[number];

/** Clock skew allowed between the venue's event times and the server's storage times, ms. */
const SKEW_MS = 60_000;
/** A scan that has not reached the subject's last message by then has failed (retried), ms. */
const SCAN_TIMEOUT_MS = 30_000;

type Floor = { position: number; ties: Set<string> | null };

/** A message id read back: its position, and its tie-breaker when it has one. */
export type Mark = { position: number; tie: string | undefined };

/** Reads `<venue>.<symbol>.<channel>.<position>[.<tie>]`; undefined for anything else. */
export function parseMark(id: string | undefined, prefix: string): Mark | undefined {
  if (!id?.startsWith(prefix)) return undefined;
  const [position, tie, extra] = id.slice(prefix.length).split('.');
  if (!position || !Number.isFinite(Number(position)) || tie === '' || extra !== undefined) return undefined;
  return { position: Number(position), tie };
}

export class LogFloor {
  private readonly floors = new Map<string, Floor>();

  /** Sets the floor of `symbol`/`channel`: `ties` stored at `position` (null: ids without a tie). */
  set(symbol: string, channel: Channel, position: number, ties: Iterable<string> | null): void {
    this.floors.set(`${symbol}.${channel}`, { position, ties: ties ? new Set(ties) : null });
  }

  /** Floors still standing (not yet passed by a published event). */
  get size(): number {
    return this.floors.size;
  }

  /**
   * True when the log already holds this event: its position is below the floor, or at it
   * with no tie-breaker or one already stored. An event above its floor retires the floor.
   */
  holds(symbol: string, channel: string, position: number, tie: string | undefined): boolean {
    if (this.floors.size === 0) return false;
    const key = `${symbol}.${channel}`;
    const floor = this.floors.get(key);
    if (!floor) return false;
    if (position < floor.position) return true;
    if (position === floor.position) return tie === undefined || floor.ties === null || floor.ties.has(tie);
    this.floors.delete(key);
    return false;
  }
}

/** The floor of one subject: undefined when it holds nothing of this connector. */
async function subjectFloor(nats: Nats, subject: string, prefix: string): Promise<Floor | undefined> {
  const last = await nats.jsm.streams.getMessage(STREAMS.MD, { last_by_subj: subject });
  const mark = parseMark(last?.header?.get('Nats-Msg-Id'), prefix);
  if (!last || !mark) return undefined;
  if (mark.tie === undefined) return { position: mark.position, ties: null };

  const floor: Floor = { position: mark.position, ties: new Set([mark.tie]) };
  const startMs = Math.min(mark.position, last.time.getTime()) - SKEW_MS;
  const consumer = await nats.js.consumers.get(STREAMS.MD, {
    filter_subjects: subject,
    deliver_policy: DeliverPolicy.StartTime,
    opt_start_time: new Date(Math.max(0, startMs)).toISOString(),
    headers_only: true,
  });
  const messages = await consumer.consume({ max_messages: 1_000 });
  const timer = setTimeout(() => messages.stop(), SCAN_TIMEOUT_MS);
  let reached = false;
  try {
    for await (const m of messages) {
      const seen = parseMark(m.headers?.get('Nats-Msg-Id'), prefix);
      if (seen && seen.tie !== undefined) {
        if (seen.position > floor.position) floor.ties = new Set();
        if (seen.position >= floor.position) {
          floor.position = seen.position;
          floor.ties?.add(seen.tie);
        }
      }
      if (m.seq >= last.seq) {
        reached = true;
        break;
      }
    }
  } finally {
    clearTimeout(timer);
    messages.stop();
  }
  if (!reached) throw new Error(`scan of ${subject} did not reach its last message (seq ${last.seq})`);
  return floor;
}

/**
 * The floor of every subject this connector publishes, read from `MD`; retried (NATS may be down
 * at start-up) until it succeeds or `signal` aborts (then rejects).
 */
export async function recoverLogFloor(
  nats: Nats,
  venue: Source,
  symbols: readonly string[],
  log: Logger,
  signal: AbortSignal,
): Promise<LogFloor> {
  for (let attempt = 0; ; attempt++) {
    signal.throwIfAborted();
    try {
      const floor = new LogFloor();
      for (const symbol of symbols)
        for (const channel of CHANNELS) {
          const found = await subjectFloor(
            nats,
            mdSubject(venue, symbol, channel),
            `${venue}.${symbol}.${channel}.`,
          );
          if (found) floor.set(symbol, channel, found.position, found.ties);
        }
      log.info({ venue, floors: floor.size }, `${venue} connector: published positions read back from MD`);
      return floor;
    } catch (err) {
      signal.throwIfAborted();
      log.warn({ venue, err: String(err) }, `${venue} connector: reading MD back failed; retrying`);
      await sleepBackoff(attempt, { maxMs: 5_000 });
    }
  }
}

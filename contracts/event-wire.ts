/**
 * How market events are stored on `MD`, `SIM` and `CACHE`: the compact JSON (UTF-8) of the
 * canonical event, plus the producer's `ingest_us` / `publish_us` stamps on the live streams.
 * Every routing field (source, symbol, event type, owner) is in the subject, so a reader filters
 * and routes without looking at the bytes, and a gateway frames the stored bytes as they are:
 * the `seq` a client sees is spliced in front (`{"seq":N,` + the bytes after `{`), never parsed
 * and re-encoded. Decoding MessagePack and re-encoding JSON per event capped catch-up near 0.5×
 * of a raw consumer (ARCHITECTURE.md); this keeps the per-event cost at one UTF-8 decode.
 *
 * The only validation on the hot path is cheap: the bytes are a JSON object (`{` … `}`). What a
 * producer stores was validated by the contracts before it was published.
 */
import type { MarketEvent } from './events.ts';

/** Producer timestamps carried on live events, µs since the Unix epoch (latency measurement). */
export type EventStamps = { ingest_us?: number; publish_us?: number };

const OPEN = 0x7b; // '{'
const CLOSE = 0x7d; // '}'
const encoder = new TextEncoder();
const decoder = new TextDecoder();

/** The stored bytes of an event (stamps, when given, after the event's own fields). */
export function encodeStoredEvent(event: MarketEvent, stamps?: EventStamps): Uint8Array {
  return encoder.encode(JSON.stringify(stamps ? { ...event, ...stamps } : event));
}

/** Whether `bytes` can be a stored event: a JSON object. Anything else is skipped by readers. */
export function isStoredEvent(bytes: Uint8Array): boolean {
  return bytes.length >= 2 && bytes[0] === OPEN && bytes[bytes.length - 1] === CLOSE;
}

/**
 * The event JSON with `seq` first, built from the stored bytes without parsing them. Call only on
 * bytes for which `isStoredEvent` holds.
 */
export function storedJsonWithSeq(bytes: Uint8Array, seq: number): string {
  if (bytes.length === 2) return `{"seq":${seq}}`;
  // Buffer's own UTF-8 slice costs about 60 % of TextDecoder's on event-sized input (the catch-up
  // hot path); message payloads from the NATS client are Buffers. Both replace invalid UTF-8 alike.
  const rest = Buffer.isBuffer(bytes) ? bytes.toString('utf8', 1) : decoder.decode(bytes.subarray(1));
  return `{"seq":${seq},${rest}`;
}

/** The event as an object, for readers that need its fields (exports, tools); null if malformed. */
export function parseStoredEvent<T = MarketEvent & EventStamps>(bytes: Uint8Array): T | null {
  if (!isStoredEvent(bytes)) return null;
  try {
    return JSON.parse(decoder.decode(bytes)) as T;
  } catch {
    return null;
  }
}

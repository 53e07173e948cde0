/**
 * How market events are stored on `MD`, `SIM` and `CACHE`: the compact JSON (UTF-8) of the
 * canonical event, plus the producer's `ingest_us` / `publish_us` stamps on the live streams.
 * Every routing field (source, symbol, event type, owner) is in the subject, so a reader filters
 * and routes without looking at the bytes, and a gateway frames the stored bytes as they are:
 * the `seq` a client sees is spliced in front (`{"seq":N,` + the bytes after `{`), never parsed
 * and re-encoded (an account's own event, read from `OWN`, also gets `"own":true` after it). Decoding MessagePack and re-encoding JSON per event held catch-up well below a
 * raw consumer (ARCHITECTURE.md); this keeps the per-event cost at one UTF-8 decode.
 *
 * The only validation on the hot path is cheap: the bytes are a JSON object (`{` … `}`). What a
 * producer stores was validated by the contracts before it was published.
 */
import type { MarketEvent } from './events.ts';
import type { RawBuffer } from './raw-buffer.ts';

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

/** Where `{"seq":N,` and the stored bytes are put together; grown to the largest event seen. */
let scratch = Buffer.allocUnsafe(4096) as RawBuffer;
/** The JSON `storedJsonWithSeq` made last, whose bytes `scratch` still holds, and their count. */
let lastJson: string | null = null;
let lastBytes = 0;
const SEQ_HEAD = Buffer.from('{"seq":');
/** After `seq` on an account's own event (`OWN`): its `seq` is that stream's, not `MD`'s. */
const OWN_MARK = Buffer.from('"own":true,');
/** `{"seq":` + up to 16 digits (a safe integer) + `,` + the own mark. */
const MAX_HEAD = SEQ_HEAD.length + 17 + OWN_MARK.length;

/**
 * The event JSON with `seq` first, built from the stored bytes without parsing them. Call only on
 * bytes for which `isStoredEvent` holds. The head and the bytes are joined as bytes and decoded
 * once, so the string is flat: `'{"seq":N,' + rest` made a rope (a ConsString), which every
 * reader of it by `charCodeAt` (the direct protobuf and MessagePack encoders) paid for per char.
 */
export function storedJsonWithSeq(bytes: Uint8Array, seq: number, own = false): string {
  if (bytes.length === 2) {
    lastJson = null;
    return own ? `{"seq":${seq},"own":true}` : `{"seq":${seq}}`;
  }
  const need = MAX_HEAD + bytes.length;
  if (scratch.length < need) scratch = Buffer.allocUnsafe(Math.max(need, scratch.length * 2)) as RawBuffer;
  const b = scratch;
  SEQ_HEAD.copy(b, 0);
  let at = SEQ_HEAD.length + b.write(String(seq), SEQ_HEAD.length, 'latin1');
  b[at++] = 0x2c; // ,
  if (own) at += OWN_MARK.copy(b, at);
  b.set(bytes.subarray(1), at);
  // Buffer's own UTF-8 slice costs less than TextDecoder's on event-sized input; both replace
  // invalid UTF-8 alike. Called directly: `toString` checks its arguments and looks up the encoding.
  lastBytes = at + bytes.length - 1;
  lastJson = b.utf8Slice(0, lastBytes);
  return lastJson;
}

/** An event JSON's UTF-8 bytes: `bytes[0, length)`, then a 0 byte (no JSON token runs past it). */
export type JsonUtf8 = { bytes: RawBuffer; length: number };

const utf8: JsonUtf8 = { bytes: scratch, length: 0 };
let copy = Buffer.allocUnsafe(4096) as RawBuffer;

/**
 * The UTF-8 bytes of an event JSON, for the scanners that encode it straight into a wire format
 * (reading bytes is faster than `charCodeAt`). When `json` is the one
 * `storedJsonWithSeq` made last (a catch-up frames each event as it is read), its bytes are
 * still in the scratch: no copy. There the stored bytes may hold invalid UTF-8 where `json` holds
 * U+FFFD; a scanner reads bytes ≥ 0x80 only inside a string token, and decodes such a token
 * (bounded by ASCII quotes) as `json` was decoded, so it sees the same text. Else `json` is written
 * into a second scratch. Null for a string that has no UTF-8 form (a lone surrogate: not from a
 * stream, whose bytes decode to well-formed text); the caller takes its general path.
 * The view is valid until the next call here or to `storedJsonWithSeq`.
 */
export function jsonUtf8(json: string): JsonUtf8 | null {
  if (json === lastJson) {
    utf8.bytes = scratch;
    utf8.length = lastBytes;
  } else {
    if (!(json as string & { isWellFormed(): boolean }).isWellFormed()) return null;
    const need = json.length * 3 + 1;
    if (copy.length < need) copy = Buffer.allocUnsafe(Math.max(need, copy.length * 2)) as RawBuffer;
    utf8.bytes = copy;
    utf8.length = copy.utf8Write(json, 0, copy.length);
  }
  utf8.bytes[utf8.length] = 0;
  return utf8;
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

/**
 * An account's own events (`own: true`, published with `stream: true`) and the two-part position
 * of a stream that carries them: the platform's `MD` sequence and the account's `OWN` sequence,
 * never compared with each other. Text form as the SSE id: `N` (platform only) or `N:K`. No
 * Node-only import: browsers use it too.
 */
import { MdpError } from './errors.ts';
import type { AnyStreamEvent, MarketStreamEvent, Position, ResumePosition } from './stream-types.ts';

/** True for one of the account's own events: its `seq` is an `OWN` sequence, not the platform's. */
export const isOwn = (ev: AnyStreamEvent): ev is MarketStreamEvent & { own: true } =>
  (ev as { own?: unknown }).own === true;

const POSITION_TEXT = /^(\d{1,16})(?::(\d{1,16}))?$/;

/**
 * `N` or `N:K` (the SSE id, what `formatPosition` and the CLI print) as a position; throws an
 * `invalid_params` MdpError for anything else.
 */
export function parsePosition(text: string): ResumePosition {
  const m = POSITION_TEXT.exec(text.trim());
  const seq = Number(m?.[1]);
  const own = m?.[2] === undefined ? undefined : Number(m[2]);
  if (!m || !Number.isSafeInteger(seq) || (own !== undefined && !Number.isSafeInteger(own)))
    throw new MdpError(
      'invalid_params',
      `a position is a stream sequence N, or N:K with an own sequence: ${JSON.stringify(text)}`,
      { details: { field: 'from' } },
    );
  return own === undefined ? { seq } : { seq, own_seq: own };
}

/** A position as text: `N`, or `N:K` once it has an own part (the SSE Last-Event-ID). */
export const formatPosition = (p: Position | ResumePosition): string =>
  typeof p === 'number' ? String(p) : p.own_seq === undefined ? String(p.seq) : `${p.seq}:${p.own_seq}`;

/** A start position as its two parts (a plain number: the platform's alone). */
export function positionParts(from: Position | ResumePosition | undefined): {
  seq: Position | null;
  own: Position | null;
} {
  if (from === undefined) return { seq: null, own: null };
  if (typeof from === 'number') return { seq: from, own: null };
  return { seq: from.seq, own: from.own_seq ?? null };
}

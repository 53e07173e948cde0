/**
 * The normalizer's error table: one row per failure kind, with a short machine code and what it
 * means. A rejected payload carries exactly one of these codes; adding a failure = one row here.
 */

/** Every normalizer error code and its meaning (checked by test/unit/normalize-bad-input.test.ts). */
// biome-ignore format: a table, one row per line
export const NORMALIZE_ERROR_CODES = {
  unknown_source: 'The request names a source that has no mapper (the only error normalizeBatch throws).',
  invalid_request: 'The request itself is malformed (events is not an array).',
  unsupported_payload: 'The payload is not a message this source mapper recognises.',
  missing_field: 'A field the message needs is absent (or no symbol is known for it).',
  invalid_value: 'A field has the wrong type or an impossible value (non-positive price, bad timestamp, bad symbol …).',
  book_delta: 'The message changes single orders (Databento MBO, ITCH order messages); a canonical book holds price levels (a snapshot or a level diff).',
  crossed_book: 'Best ask below best bid: spread_bps would be negative, which the canonical schema forbids.',
  internal: 'The mapper failed unexpectedly (a bug: please report the payload).',
} as const;

export type NormalizeErrorCode = keyof typeof NORMALIZE_ERROR_CODES;

/** A payload (or request) the normalizer cannot use. `field` names the offending field when known. */
export class NormalizeError extends Error {
  override readonly name = 'NormalizeError';

  constructor(
    readonly code: NormalizeErrorCode,
    message: string,
    readonly field?: string,
  ) {
    super(message);
  }
}

export const isNormalizeError = (error: unknown): error is NormalizeError => error instanceof NormalizeError;

/**
 * The JSON literals `true`, `false` and `null` at a position of UTF-8 bytes, for the scanners that
 * read stored event JSON without `JSON.parse` (beside contracts/json-number.ts). Byte comparisons:
 * inlined where they are called, unlike a search.
 */

export const isTrueAt = (t: Buffer, at: number): boolean =>
  t[at] === 0x74 && t[at + 1] === 0x72 && t[at + 2] === 0x75 && t[at + 3] === 0x65;

export const isFalseAt = (t: Buffer, at: number): boolean =>
  t[at] === 0x66 && t[at + 1] === 0x61 && t[at + 2] === 0x6c && t[at + 3] === 0x73 && t[at + 4] === 0x65;

export const isNullAt = (t: Buffer, at: number): boolean =>
  t[at] === 0x6e && t[at + 1] === 0x75 && t[at + 2] === 0x6c && t[at + 3] === 0x6c;

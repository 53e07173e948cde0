/**
 * A Buffer with the native string methods every Node Buffer has and its typings leave out. The hot
 * paths call them directly: `toString`/`write` check their arguments and look the encoding up on
 * every call, a measurable part of a per-event cost (event JSON, subjects, encoded frames).
 */
export type RawBuffer = Buffer & {
  latin1Slice(start: number, end: number): string;
  utf8Slice(start: number, end: number): string;
  utf8Write(s: string, offset: number, length: number): number;
  latin1Write(s: string, offset: number, length: number): number;
};

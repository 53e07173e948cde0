/**
 * Event-time arithmetic shared by bars and snapshots. A span [start, start + d) of a source is
 * closed once the source's watermark (highest `timestamp_ms` seen) reaches its end + grace; an
 * event goes to the span of its timestamp, or, when that span is closed already, to the first
 * span still open. Pure functions of the watermark: no wall clock.
 */

/** The start of the span of length `d` holding `ts`. */
export const spanStart = (ts: number, d: number): number => Math.floor(ts / d) * d;

/** The first span start still open under `watermark` (−∞ before any event). */
export const firstOpenStart = (watermark: number, d: number, graceMs: number): number =>
  watermark === Number.NEGATIVE_INFINITY ? watermark : spanStart(watermark - graceMs, d);

/** The span an event of time `ts` is counted in: its own, or the first open one if its own is closed. */
export const assignedStart = (ts: number, watermark: number, d: number, graceMs: number): number =>
  Math.max(spanStart(ts, d), firstOpenStart(watermark, d, graceMs));

/** Whether the span starting at `start` is closed (to be published) under `watermark`. */
export const isClosed = (start: number, d: number, watermark: number, graceMs: number): boolean =>
  watermark >= start + d + graceMs;

/**
 * A replay by time (`fromTime`, `toTime`, `speed`) as every transport sends it: instants as Unix
 * milliseconds, read once when the iterator is made with the server's own rule (a number, a Date,
 * or text: ISO 8601 with a time zone, or Unix ms digits), so a bad value fails at once instead of
 * at every reconnection; `speed` a number, absent for `max` (every transport's default). No
 * Node-only import: browsers use it too.
 */
import { MdpError } from './errors.ts';
import type { AnyStreamEvent, ReplayOptions, ReplayTime, StreamItem } from './stream-types.ts';

/** The window of one iterator, sent unchanged on each of its connections. */
export type ReplayWindow = { fromMs?: number; toMs?: number; speed?: number };

/** The largest instant a Date holds (as the server's bound). */
const MAX_TIME_MS = 8_640_000_000_000;
const ISO_WITH_ZONE = /^\d{4}-\d{2}-\d{2}T.+(Z|[+-]\d{2}:?\d{2})$/i;
const MIN_SPEED = 0.01;
const MAX_SPEED = 10_000;

const invalid = (field: string, message: string) =>
  new MdpError('invalid_params', `${field} ${message}`, { details: { field } });

/**
 * An instant as Unix milliseconds (floored): a number of ms, a Date, or text (ISO 8601 with a time
 * zone such as `2026-11-28T12:00:00Z`, or Unix ms digits). Throws an `invalid_params` MdpError.
 */
export function replayTimeMs(t: ReplayTime, field = 'time'): number {
  let ms: number;
  if (t instanceof Date) ms = t.getTime();
  else if (typeof t === 'number') ms = t;
  else if (typeof t === 'string') {
    const s = t.trim();
    ms = /^\d{1,16}$/.test(s) ? Number(s) : ISO_WITH_ZONE.test(s) ? Date.parse(s) : Number.NaN;
  } else ms = Number.NaN;
  if (!Number.isFinite(ms))
    throw invalid(field, `must be Unix milliseconds, a Date, or ISO 8601 with a time zone: ${String(t)}`);
  if (ms < 0 || ms > MAX_TIME_MS) throw invalid(field, 'is out of the range of dates');
  return Math.floor(ms);
}

/** A replay speed: `max` (undefined) or a number from 0.01 to 10000. Throws an `invalid_params` MdpError. */
export function replaySpeed(speed: number | 'max' | undefined, field = 'speed'): number | undefined {
  if (speed === undefined || speed === 'max') return undefined;
  if (typeof speed !== 'number' || !(speed >= MIN_SPEED && speed <= MAX_SPEED))
    throw invalid(field, `must be max or a number from ${MIN_SPEED} to ${MAX_SPEED}: ${String(speed)}`);
  return speed;
}

/** The window of `opts` (empty when it asks for no replay); throws an `invalid_params` MdpError. */
export function replayWindow(opts: ReplayOptions): ReplayWindow {
  const w: ReplayWindow = {};
  if (opts.fromTime !== undefined) w.fromMs = replayTimeMs(opts.fromTime, 'fromTime');
  if (opts.toTime !== undefined) w.toMs = replayTimeMs(opts.toTime, 'toTime');
  const speed = replaySpeed(opts.speed);
  if (speed !== undefined) w.speed = speed;
  if (w.fromMs !== undefined && w.toMs !== undefined && w.toMs < w.fromMs)
    throw invalid('toTime', 'must be at or after fromTime');
  return w;
}

/** The notice that ends a replay with `toTime`: the iterator yields it, then ends. */
export const isReplayComplete = (item: StreamItem<AnyStreamEvent>): boolean =>
  item.type === 'notice' && item.notice.code === 'replay_complete';

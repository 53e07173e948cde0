// https://github.com/binance/binance-spot-api-docs/blob/master/rest-api.md#order-book
/**
 * The REST depth snapshot a Binance local book starts from (`GET /api/v3/depth`, or USD-M
 * `/fapi/v1/depth`: same `{lastUpdateId, bids, asks}`), levels validated by the existing mapper.
 * Failures (network, HTTP status, a changed format) are retried with the project's failure
 * backoff until `signal` aborts; a changed format is also reported like any refused frame.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import type { BookLevel } from '../../contracts/events.ts';
import { RetryBackoff } from '../../platform/backoff.ts';
import type { Logger } from '../../platform/logger.ts';
import { fieldError, isObject } from '../normalizer/fields.ts';
import { isNormalizeError } from '../normalizer/index.ts';
import { mapAll } from '../normalizer/mapper.ts';
import { binanceMapper } from '../normalizer/mappers/binance.ts';
import { reportFormatError } from './format-errors.ts';

export type DepthSnapshot = { lastUpdateId: number; bids: BookLevel[]; asks: BookLevel[] };

/** A venue update id: a non-negative safe integer, else an error naming the field. */
export function updateId(value: unknown, field: string): number {
  if (typeof value === 'number' && Number.isSafeInteger(value) && value >= 0) return value;
  throw fieldError(value, field, 'an integer update id');
}

export function parseDepthSnapshot(body: unknown, symbol: string, receivedAtMs: number): DepthSnapshot {
  if (!isObject(body)) throw fieldError(body, 'snapshot', 'an object');
  const lastUpdateId = updateId(body.lastUpdateId, 'lastUpdateId');
  const [book] = mapAll(binanceMapper, body, { symbol, receivedAtMs });
  if (book?.event_type !== 'book') throw fieldError(undefined, 'bids', 'depth levels');
  return { lastUpdateId, bids: book.bids, asks: book.asks };
}

export type SnapshotFetcher = (symbol: string, signal: AbortSignal) => Promise<DepthSnapshot>;

/** Fetches from `restUrl` until one snapshot parses (or `signal` aborts: then rejects). */
export function restSnapshotFetcher(
  restUrl: string,
  backoffMs: { baseMs: number; maxMs: number },
  log: Logger,
  limit = 1_000,
): SnapshotFetcher {
  return async (symbol, signal) => {
    const backoff = new RetryBackoff(backoffMs);
    const url = `${restUrl}?symbol=${encodeURIComponent(symbol)}&limit=${limit}`;
    for (;;) {
      signal.throwIfAborted();
      let text = '';
      try {
        const res = await fetch(url, { signal: AbortSignal.any([signal, AbortSignal.timeout(10_000)]) });
        text = await res.text();
        if (!res.ok) throw new Error(`HTTP ${res.status}: ${text.slice(0, 200)}`);
        const snapshot = parseDepthSnapshot(JSON.parse(text), symbol, Date.now());
        return snapshot;
      } catch (err) {
        signal.throwIfAborted();
        if (isNormalizeError(err)) reportFormatError('binance', log, err, text);
        else
          log.warn({ venue: 'binance', symbol, err: String(err) }, 'binance depth snapshot failed; retrying');
        const waitMs = backoff.next();
        await sleep(waitMs, undefined, { signal }).catch(() => {});
      }
    }
  };
}

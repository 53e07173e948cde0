/**
 * The unary methods: GetMidPrice and GetBook from the latest-state view (core latest-book.ts, the
 * same answer as JSON-RPC), GetBlockNumber from the live tail (the number of `eth_blockNumber`).
 * Each call is admitted once (rate limit included); its response headers carry `x-request-id`
 * and the key's rate-limit figures. A coin that is not the platform's is looked up among the
 * caller's own coins unless the client has cancelled the call by then (own-coins.ts).
 */
import type { ServerUnaryCall, sendUnaryData } from '@grpc/grpc-js';
import { ApiError } from '../../contracts/errors.ts';
import { Source } from '../../contracts/events.ts';
import { MAX_BOOK_DEPTH, OHLCV_INTERVALS, OHLCV_MAX_BARS } from '../../contracts/jsonrpc.ts';
import { barsInRange, checkBarRange } from '../core/bars-range.ts';
import { latestBook } from '../core/latest-book.ts';
import { type OwnCoinLookup, ownCoinLookup } from '../core/own-coins.ts';
import { regionCopyState } from '../core/region-copy.ts';
import { subscribe } from '../core/subscribe.ts';
import { viewerOf } from '../core/visibility.ts';
import { type Admitted, admit, failure, type GrpcEdgeDeps, requestIdOf } from './context.ts';
import { sendHeaders } from './headers.ts';
import { midOf, objectOf } from './messages.ts';

type Req = Record<string, unknown>;
type Handler = (call: ServerUnaryCall<Req, unknown>, callback: sendUnaryData<unknown>) => void;

function unary(
  deps: GrpcEdgeDeps,
  run: (
    req: Req,
    admitted: Admitted,
    ownCoins: OwnCoinLookup,
    gone: () => AbortSignal,
  ) => Promise<unknown> | unknown,
): Handler {
  return (call, callback) => {
    const requestId = requestIdOf(call);
    (async () => {
      const admitted = await admit(deps, call, requestId, false);
      admitted.principal.release();
      // Asked only for a coin that is not the platform's: nothing is armed for the others.
      const ownCoins: OwnCoinLookup = (spellings) =>
        ownCoinLookup(deps.nats, viewerOf(admitted.principal), goneSignal(call))(spellings);
      const answer = await run(call.request, admitted, ownCoins, () => goneSignal(call));
      sendHeaders(call, requestId, admitted.headers);
      return answer;
    })().then(
      (answer) => callback(null, answer),
      (err) => {
        sendHeaders(call, requestId);
        callback(failure(deps, call, requestId, err));
      },
    );
  };
}

/** Aborts once the client has cancelled the call (at once if it already has): no JetStream request then. */
function goneSignal(call: ServerUnaryCall<Req, unknown>): AbortSignal {
  const gone = new AbortController();
  const cancelled = () => gone.abort(new ApiError('cancelled', 'the client cancelled the call'));
  if (call.cancelled) cancelled();
  else call.once('cancelled', cancelled);
  return gone.signal;
}

function coinOf(req: Req): string {
  if (typeof req.coin !== 'string' || req.coin === '')
    throw new ApiError('invalid_params', 'coin is required', { field: 'coin', reason: 'missing' });
  return req.coin;
}

function sourceOf(req: Req): Source | undefined {
  if (req.source === undefined || req.source === '') return undefined;
  const parsed = Source.safeParse(req.source);
  if (!parsed.success)
    throw new ApiError('invalid_params', `unknown source ${String(req.source)}`, {
      field: 'source',
      reason: 'unknown',
    });
  return parsed.data;
}

function depthOf(req: Req): number {
  if (req.depth === undefined) return MAX_BOOK_DEPTH;
  const depth = req.depth as number;
  if (depth < 1)
    throw new ApiError('invalid_params', 'depth must be at least 1', { field: 'depth', reason: 'below 1' });
  if (depth > MAX_BOOK_DEPTH)
    throw new ApiError('snapshot_too_large', `depth ${depth} is over ${MAX_BOOK_DEPTH} levels per side`, {
      field: 'depth',
      limit: MAX_BOOK_DEPTH,
    });
  return depth;
}

export function unaryMethods(deps: GrpcEdgeDeps): Record<string, Handler> {
  return {
    GetMidPrice: unary(deps, async (req, { principal }, ownCoins) => {
      const book = await latestBook(deps, coinOf(req), sourceOf(req), principal, { ownCoins });
      const mid = midOf(book);
      if (!mid)
        throw new ApiError(
          'feed_unavailable',
          `the last ${book.symbol} book has no mid price (one side empty)`,
        );
      return mid;
    }),
    GetBook: unary(deps, async (req, { principal }, ownCoins) => {
      const depth = depthOf(req);
      const book = await latestBook(deps, coinOf(req), sourceOf(req), principal, { ownCoins });
      const o = objectOf(book);
      const side = (v: unknown) => (Array.isArray(v) ? v.slice(0, depth) : []);
      return {
        coin: book.symbol,
        source: book.source,
        seq: book.seq,
        timestamp_ms: o.timestamp_ms,
        bids: side(o.bids),
        asks: side(o.asks),
        best_bid: o.best_bid,
        best_ask: o.best_ask,
        mid_price: o.mid_price,
        spread_bps: o.spread_bps,
      };
    }),
    GetBars: unary(deps, async (req, { principal }, ownCoins, gone) => {
      const interval = OHLCV_INTERVALS.find((i) => i === req.interval);
      if (!interval)
        throw new ApiError('invalid_params', `interval must be one of ${OHLCV_INTERVALS.join(', ')}`, {
          field: 'interval',
          reason: 'unknown',
        });
      const kind = `bar_${interval}` as const;
      const startMs = Number(req.start_ms ?? 0);
      const endMs = Number(req.end_ms ?? 0);
      checkBarRange(kind, startMs, endMs);
      const source = sourceOf(req);
      const request = { coins: [coinOf(req)], event_types: [kind], ...(source ? { sources: [source] } : {}) };
      const { selection, warnings } = await subscribe(deps, request, principal, { ownCoins });
      if (warnings.length > 0) throw new ApiError('coin_not_found', warnings[0]?.message);
      const bars = await barsInRange(deps.nats, selection, startMs, endMs, OHLCV_MAX_BARS, gone());
      return { bars: bars.slice(0, OHLCV_MAX_BARS).map(objectOf), truncated: bars.length > OHLCV_MAX_BARS };
    }),
    GetBlockNumber: unary(deps, () => {
      const n = deps.tail.lastSeq;
      const region = regionCopyState(deps.nats);
      return {
        number: n,
        hex: `0x${n.toString(16)}`,
        timestamp_ms: Date.now(),
        ...(region
          ? {
              region_home: region.home,
              ...(region.lag === null ? {} : { region_lag: region.lag }),
              ...(region.last_contact_ms === null ? {} : { region_last_contact_ms: region.last_contact_ms }),
            }
          : {}),
      };
    }),
  };
}

/**
 * The JSON-RPC feed edge (`{rpc_url}`, `{rpc_jp_url}`): its methods, the params of each (positional
 * names, as the spec sends them, and the zod schema of the same params as an object), its bounds,
 * and which catalogue rows answer each JSON-RPC code of the spec. Pure: no I/O.
 *
 * EVM-style methods answer what viem and ethers expect (`eth_blockNumber` is the `MD` stream's
 * last sequence as a hex quantity: the number space of SSE event ids); `md_*` methods serve
 * market data. Any other `eth_*` method is -32601, like every unknown method.
 */
import { z } from 'zod';
import type { ErrorCode, JsonRpcCode } from './errors.ts';
import { Source, SymbolName } from './events.ts';
import { SERVICE_VERSION } from './mcp-tools.ts';
import { Subscription } from './subscription.ts';

/** `web3_clientVersion`. */
export const JSONRPC_CLIENT_VERSION = `mdp-jsonrpc/${SERVICE_VERSION}`;

/** Book levels per side at most in `md_l2Book` (-32007 beyond; the spec's gRPC depth bound). */
export const MAX_BOOK_DEPTH = 1_000;
/** Trades `md_trades` returns when no `limit` is given, and the largest `limit` accepted. */
export const TRADES_DEFAULT_LIMIT = 1_000;
export const TRADES_MAX_LIMIT = 10_000;

/** `md_ohlcv` intervals (the bar kinds `bar_1s`, `bar_1m`, `bar_1h`) and the most bars one call returns. */
export const OHLCV_INTERVALS = ['1s', '1m', '1h'] as const;
export const OHLCV_MAX_BARS = 5_000;

/** `0x` + 4 hex digits of the key's filter slot + 24 random hex digits. */
export const FILTER_ID = /^0x[0-9a-f]{28}$/;

const epochMs = z.number().int().nonnegative();

const none = z.object({}).strict();

/** One method's params: positional names (in the spec's array order) and the object schema. */
export type MethodParams<S extends z.ZodType = z.ZodType> = {
  readonly names: readonly string[];
  readonly schema: S;
};

const params = <S extends z.ZodType>(names: readonly string[], schema: S): MethodParams<S> => ({
  names,
  schema,
});

/** Every method of the edge with its params. */
export const JSONRPC_METHODS = {
  eth_blockNumber: params([], none),
  eth_chainId: params([], none),
  net_version: params([], none),
  web3_clientVersion: params([], none),
  md_coins: params([], none),
  md_midPrice: params(['coin', 'source'], z.object({ coin: SymbolName, source: Source.optional() }).strict()),
  /** `depth` ≥ 1 here; above MAX_BOOK_DEPTH is -32007, checked by the method. Default: every level held. */
  md_l2Book: params(
    ['coin', 'depth', 'source'],
    z
      .object({ coin: SymbolName, depth: z.number().int().min(1).optional(), source: Source.optional() })
      .strict(),
  ),
  /** Trades with `start_ms ≤ timestamp_ms ≤ end_ms`, oldest first; the range rules give -32008. */
  md_trades: params(
    ['coin', 'start_ms', 'end_ms', 'limit'],
    z
      .object({
        coin: SymbolName,
        start_ms: epochMs,
        end_ms: epochMs,
        limit: z.number().int().min(1).max(TRADES_MAX_LIMIT).optional(),
      })
      .strict(),
  ),
  /**
   * Trade bars of one coin (the DERIVED stream) whose `start_ms` lies in [start_ms, end_ms), oldest
   * first, at most OHLCV_MAX_BARS; one source, or every source of the coin.
   */
  md_ohlcv: params(
    ['coin', 'interval', 'start_ms', 'end_ms', 'source'],
    z
      .object({
        coin: SymbolName,
        interval: z.enum(OHLCV_INTERVALS),
        start_ms: epochMs,
        end_ms: epochMs,
        source: Source.optional(),
      })
      .strict(),
  ),
  /** What the filter selects (the subscription contract of every transport); `last_event_id` starts it after that sequence. */
  md_newFilter: params(['filter'], z.object({ filter: Subscription.default({}) }).strict()),
  md_getFilterChanges: params(['filter_id'], z.object({ filter_id: z.string().regex(FILTER_ID) }).strict()),
  md_uninstallFilter: params(['filter_id'], z.object({ filter_id: z.string().regex(FILTER_ID) }).strict()),
} as const;

export type JsonRpcMethod = keyof typeof JSONRPC_METHODS;
export type ParamsOf<M extends JsonRpcMethod> = z.output<(typeof JSONRPC_METHODS)[M]['schema']>;

/** The params as sent (an array in the spec's order, an object, or nothing) as one object. */
export function paramsObject(p: MethodParams, sent: unknown): unknown {
  if (sent === undefined) return {};
  if (!Array.isArray(sent)) return sent;
  const out: Record<string, unknown> = {};
  sent.forEach((v, i) => {
    // An optional param left out before a later one is sent as null; one too many is an unknown field.
    if (v !== null) out[p.names[i] ?? `param_${i + 1}`] = v;
  });
  return out;
}

/**
 * Which catalogue rows the edge answers with each JSON-RPC code of the spec, and when. The
 * integration tests reach every code of this table with a request that should produce it.
 */
export const JSONRPC_EDGE_CODES: Readonly<Record<JsonRpcCode, { rows: readonly ErrorCode[]; when: string }>> =
  {
    [-32700]: { rows: ['parse_error'], when: 'the body is not JSON' },
    [-32600]: {
      rows: ['invalid_request', 'method_not_allowed', 'payload_too_large'],
      when: 'not a JSON-RPC 2.0 request, or an empty batch; a GET (HTTP 405); a body over 1 MB (HTTP 413)',
    },
    [-32601]: { rows: ['method_not_found'], when: 'an unknown method (any eth_* but the four served)' },
    [-32602]: {
      rows: ['invalid_params', 'unprocessable', 'not_found'],
      when: 'params of the wrong shape or value (more than 100 coins in a filter, 500 in a request); an unknown or expired filter id',
    },
    [-32603]: {
      rows: ['internal', 'overload', 'conflict', 'request_timeout'],
      when: 'a failure of the server; the rate limiter unreachable (HTTP 503); a filter polled elsewhere at the same moment too often; a body that trickles (HTTP 408)',
    },
    [-32000]: {
      rows: ['rate_limited'],
      when: 'a call past the key’s tokens (HTTP 429 when no call was admitted)',
    },
    [-32001]: {
      rows: ['invalid_key', 'key_revoked'],
      when: 'key missing, invalid or revoked (a call in flight too)',
    },
    [-32002]: {
      rows: ['tier_restricted', 'forbidden'],
      when: 'JP without Japan access; a source outside chain scopes',
    },
    [-32003]: { rows: ['coin_not_found'], when: 'a coin the feed does not track' },
    [-32004]: { rows: ['feed_unavailable'], when: 'no book yet for the coin, or the log unreachable' },
    [-32005]: { rows: ['subscription_limit'], when: 'more live filters than the tier’s subscription cap' },
    [-32006]: { rows: ['batch_too_large'], when: 'a batch over 100 calls' },
    [-32007]: {
      rows: ['snapshot_too_large'],
      when: 'md_l2Book depth above 1000; a call of a request whose answer already holds 20,000 events or 8 MiB',
    },
    [-32008]: {
      rows: ['invalid_time_range'],
      when: 'md_trades, md_ohlcv: end before start, wider than the cap, or starting before retention',
    },
    [-32009]: { rows: ['upstream_timeout'], when: 'a call that waited on the log past its deadline' },
    [-32010]: { rows: ['maintenance'], when: 'a maintenance window (HTTP 503)' },
  };

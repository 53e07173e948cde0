/**
 * `mdp bars`: the trade bars of one coin whose start lies in [--from, --to), read from the
 * JSON-RPC edge (`md_ohlcv`), as a table or NDJSON (`--json`); `--follow` then streams new bars
 * live over SSE (`event_type=bar_<interval>`), resuming after the last bar's `DERIVED` sequence,
 * so no bar is printed twice and none stored after the answer is missed.
 *
 * An answer holds at most 5,000 bars: a range wider than that is refused here (exit 2) as the edge
 * would refuse it; a truncated answer (several sources, or the answer's size budget) prints what
 * it holds, then a warning on stderr naming the `--from` to continue from, and exits 0.
 */
import {
  type BarStreamEvent,
  barKindOf,
  JsonRpcClient,
  JsonRpcError,
  JsonRpcErrorCode,
  type OhlcvInterval,
  type OhlcvResult,
  replayTimeMs,
  stream,
} from '@mdp/client';
import { DERIVED_DURATIONS_MS } from '@mdp/contracts/derived';
import { SOURCES, type Source } from '@mdp/contracts/events';
import { OHLCV_INTERVALS, OHLCV_MAX_BARS } from '@mdp/contracts/jsonrpc';
import { type Command, type Ctx, required, type Values } from '../command.ts';
import { apiKey, DEFAULT_RPC_URL, rpcUrl } from '../config.ts';
import { CliError, EXIT, UsageError } from '../exit-codes.ts';
import type { Palette } from '../term.ts';
import { optional } from './stream.ts';
import { streamNote } from './stream-notes.ts';

type BarsRequest = {
  coin: string;
  interval: OhlcvInterval;
  fromMs: number;
  toMs: number;
  source: Source | undefined;
  follow: boolean;
};

const TIME_HINT = 'ISO 8601 with a time zone (e.g. 2026-11-28T12:00:00Z) or Unix milliseconds';

function timeOption(values: Values, name: string): number | undefined {
  const v = values[name];
  if (v === undefined) return undefined;
  try {
    return replayTimeMs(String(v), name);
  } catch {
    throw new UsageError(`--${name} must be ${TIME_HINT}, got ${JSON.stringify(v)}`);
  }
}

/** The command line as a request; every refusal the edge would make on its shape is exit 2 here. */
function parseRequest(values: Values, nowMs: number): BarsRequest {
  const coin = required(values, 'coin');
  const interval = required(values, 'interval');
  if (!(OHLCV_INTERVALS as readonly string[]).includes(interval))
    throw new UsageError(
      `--interval must be one of ${OHLCV_INTERVALS.join(', ')}, got ${JSON.stringify(interval)}`,
    );
  const source = values.source as string | undefined;
  if (source !== undefined && !(SOURCES as readonly string[]).includes(source))
    throw new UsageError(`--source must be one of ${SOURCES.join(', ')}, got ${JSON.stringify(source)}`);
  const follow = Boolean(values.follow);
  const fromMs = timeOption(values, 'from');
  if (fromMs === undefined) throw new UsageError('--from is required');
  const toMs = timeOption(values, 'to') ?? (follow ? nowMs : undefined);
  if (toMs === undefined) throw new UsageError('--to is required (or --follow: up to now, then live)');
  if (toMs < fromMs) throw new UsageError('--to must be at or after --from');
  const spanMs = DERIVED_DURATIONS_MS[barKindOf(interval as OhlcvInterval)];
  if ((toMs - fromMs) / spanMs > OHLCV_MAX_BARS)
    throw new UsageError(
      `the range spans ${Math.ceil((toMs - fromMs) / spanMs).toLocaleString('en-US')} bars of ${interval}; at most ${OHLCV_MAX_BARS.toLocaleString('en-US')} per call: narrow --from/--to`,
    );
  return {
    coin,
    interval: interval as OhlcvInterval,
    fromMs,
    toMs,
    source: source as Source | undefined,
    follow,
  };
}

/** A refusal inside an HTTP 200 answer (the call, not the request): its code, request id and exit code. */
const RPC_EXITS: ReadonlyMap<number, number> = new Map([
  [JsonRpcErrorCode.AuthenticationFailed, EXIT.auth],
  [JsonRpcErrorCode.TierRestricted, EXIT.auth],
  [JsonRpcErrorCode.CoinNotFound, EXIT.notFound],
  [JsonRpcErrorCode.InvalidParams, EXIT.rejected],
  [JsonRpcErrorCode.InvalidTimeRange, EXIT.rejected],
  [JsonRpcErrorCode.SnapshotTooLarge, EXIT.rejected],
  [JsonRpcErrorCode.RateLimitExceeded, EXIT.unavailable],
  [JsonRpcErrorCode.FeedUnavailable, EXIT.unavailable],
  [JsonRpcErrorCode.UpstreamTimeout, EXIT.unavailable],
  [JsonRpcErrorCode.MaintenanceMode, EXIT.unavailable],
]);

async function fetchBars(ctx: Ctx, url: string, key: string, req: BarsRequest): Promise<OhlcvResult> {
  const client = new JsonRpcClient({ url, key });
  try {
    return await client.ohlcv({
      coin: req.coin,
      interval: req.interval,
      start_ms: req.fromMs,
      end_ms: req.toMs,
      ...optional('source', req.source),
    });
  } catch (err) {
    // A whole-request failure keeps its HTTP status (exit-codes.ts maps it); a call's own refusal is HTTP 200.
    if (!(err instanceof JsonRpcError) || err.status !== 200 || ctx.signal.aborted) throw err;
    const request = err.requestId ? ` [request ${err.requestId}]` : '';
    throw new CliError(`${err.code}: ${err.message}${request}`, RPC_EXITS.get(err.rpcCode) ?? EXIT.failure);
  }
}

const WIDTHS = [24, 11, 12, 12, 12, 12, 12, 7, 12] as const;
const HEAD = ['start', 'source', 'open', 'high', 'low', 'close', 'volume', 'trades', 'vwap'];

function row(cells: string[]): string {
  return cells
    .map((c, i) => (i < 2 ? c.padEnd(WIDTHS[i] ?? 0) : c.padStart(WIDTHS[i] ?? 0)))
    .join(' ')
    .trimEnd();
}

export const barRow = (b: BarStreamEvent): string =>
  row([
    new Date(b.start_ms).toISOString(),
    b.source,
    String(b.open),
    String(b.high),
    String(b.low),
    String(b.close),
    String(b.volume),
    String(b.trade_count),
    String(b.vwap),
  ]);

function printer(ctx: Ctx): (b: BarStreamEvent) => void {
  let headed = false;
  return (b) => {
    if (ctx.json) return void ctx.term.out.write(`${JSON.stringify(b)}\n`);
    if (!headed) ctx.term.out.write(`${ctx.term.color.bold(row(HEAD))}\n`);
    headed = true;
    ctx.term.out.write(`${barRow(b)}\n`);
  };
}

function warnTruncated(ctx: Ctx, answer: OhlcvResult, spanMs: number, c: Palette): void {
  const last = answer.bars.at(-1);
  const next = last ? last.start_ms + spanMs : answer.start_ms;
  const message = `truncated: more bars lie in the range than one answer holds (${answer.bars.length} printed); narrow the range, or go on with --from ${new Date(next).toISOString()}`;
  ctx.term.err.write(
    ctx.json
      ? `${JSON.stringify({ type: 'warning', code: 'truncated', message, next_from_ms: next })}\n`
      : `${c.yellow(`warning: ${message}`)}\n`,
  );
}

/** New bars after `after` (the last printed one), or stored from `fromMs` on when none was. */
async function follow(
  ctx: Ctx,
  key: string,
  req: BarsRequest,
  after: BarStreamEvent | undefined,
  print: (b: BarStreamEvent) => void,
): Promise<number> {
  const s = stream({
    url: ctx.endpoints.streamUrl,
    key,
    signal: ctx.signal,
    coins: [req.coin],
    eventTypes: [barKindOf(req.interval)],
    ...optional('sources', req.source ? [req.source] : undefined),
    ...(after ? { from: after.seq } : { fromTime: req.fromMs }),
  });
  for await (const item of s) {
    // A replay from --from's store time also meets the bar that ends there: it starts before the range.
    if (item.type === 'event') {
      if (item.event.start_ms >= req.fromMs) print(item.event);
    } else ctx.term.err.write(`${streamNote(item, ctx.json, ctx.term.errColor)}\n`);
  }
  return ctx.signal.aborted ? ctx.stopCode() : EXIT.ok;
}

export const barsCommand: Command = {
  path: ['bars'],
  summary:
    'Trade bars of one coin over a time range (OHLCV, from the JSON-RPC edge md_ohlcv): a table, or NDJSON with --json; --follow then prints new bars live (unified stream, event_type=bar_<interval>) until Ctrl-C. At most 5,000 bars per call: a wider range is refused; a truncated answer prints a warning on stderr naming the --from to go on from.',
  options: {
    coin: { type: 'string', value: 'COIN', description: 'the coin (required)' },
    interval: { type: 'string', value: '1s|1m|1h', description: 'bar span (required)' },
    from: {
      type: 'string',
      value: 'TIME',
      description: 'bars starting at or after TIME: ISO 8601 with a zone or Unix ms (required)',
    },
    to: {
      type: 'string',
      value: 'TIME',
      description: 'bars starting before TIME (required, except with --follow: default now)',
    },
    source: {
      type: 'string',
      value: 'SOURCE',
      description: `one source: ${SOURCES.join(', ')} (default all)`,
    },
    follow: { type: 'boolean', short: 'f', description: 'then stream new bars live until Ctrl-C' },
    'rpc-url': {
      type: 'string',
      value: 'URL',
      description: `JSON-RPC edge (default $MDP_RPC_URL, config rpc_url, ${DEFAULT_RPC_URL})`,
    },
  },
  details:
    'Examples:\n  mdp bars --coin BTC --interval 1m --from 2026-11-28T12:00:00Z --to 2026-11-28T13:00:00Z\n  mdp bars --coin ETH --interval 1s --from 2026-11-28T12:00:00Z --to 2026-11-28T12:10:00Z --json > eth.jsonl\n  mdp bars --coin BTC --interval 1m --from 2026-11-28T12:00:00Z --follow',
  async run(ctx, values) {
    const req = parseRequest(values, Date.now());
    const key = apiKey(ctx.env);
    const answer = await fetchBars(ctx, rpcUrl(values['rpc-url'] as string | undefined, ctx.env), key, req);
    const print = printer(ctx);
    for (const b of answer.bars) print(b);
    const { err, errColor } = ctx.term;
    if (answer.truncated) warnTruncated(ctx, answer, DERIVED_DURATIONS_MS[barKindOf(req.interval)], errColor);
    else if (answer.bars.length === 0 && !ctx.json) err.write(`${errColor.dim('no bars in the range')}\n`);
    if (!req.follow) return EXIT.ok;
    return follow(ctx, key, req, answer.bars.at(-1), print);
  },
};

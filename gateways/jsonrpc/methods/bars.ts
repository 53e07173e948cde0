/**
 * `md_ohlcv [coin, interval, start_ms, end_ms, source?]`: the coin's trade bars (`1s`, `1m`, `1h`;
 * the DERIVED stream's `bar_1s`, `bar_1m`, `bar_1h`) whose `start_ms` lies in [start_ms, end_ms),
 * oldest first, each as the stream stores it (with its `seq`); at most OHLCV_MAX_BARS and what the
 * request's answer has room for (`truncated` says more were there). The reading is
 * gateways/core/bars-range.ts, shared with gRPC `GetBars`.
 */
import { OHLCV_MAX_BARS, type ParamsOf } from '../../../contracts/jsonrpc.ts';
import { barsInRange, checkBarRange } from '../../core/bars-range.ts';
import type { CallContext, EdgeDeps, Json } from '../context.ts';
import { budgetOf } from '../request-budget.ts';
import { selectionOf } from '../selection.ts';

export function barMethods(deps: EdgeDeps) {
  return {
    md_ohlcv: async (p: ParamsOf<'md_ohlcv'>, ctx: CallContext): Promise<Json> => {
      const kind = `bar_${p.interval}` as const;
      checkBarRange(kind, p.start_ms, p.end_ms);
      const { selection } = await selectionOf(
        deps,
        { coins: [p.coin], event_types: [kind], ...(p.source ? { sources: [p.source] } : {}) },
        ctx,
      );
      const budget = budgetOf(deps.nats, ctx);
      const limit = budget.room(OHLCV_MAX_BARS);
      const bars = await barsInRange(deps.nats, selection, p.start_ms, p.end_ms, limit, ctx.signal);
      const kept = budget.keep(bars.slice(0, limit));
      const head = JSON.stringify({
        coin: p.coin,
        interval: p.interval,
        ...(p.source ? { source: p.source } : {}),
        start_ms: p.start_ms,
        end_ms: p.end_ms,
        truncated: bars.length > kept.length,
      });
      return `${head.slice(0, -1)},"bars":[${kept.map((b) => b.json).join(',')}]}` as Json;
    },
  };
}

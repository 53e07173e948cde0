/**
 * Test-side, batch formulation of the derived rules (contracts/derived.ts), written apart from
 * producers/derived: every stored `MD` event read at once, each assigned to
 * max(own span, first span open under the source's watermark including it), and a span kept when
 * the final watermark has passed its end + grace. Also reads a whole stream in order.
 */
import { BAR_KINDS, DERIVED_DURATIONS_MS, DERIVED_GRACE_MS, SNAPSHOT_KIND } from '../../contracts/derived.ts';
import { createLogger } from '../../platform/logger.ts';
import type { Nats } from '../../platform/nats.ts';
import { readOrdered } from '../../platform/ordered-reader.ts';

export type Stored = { seq: number; subject: string; text: string };

const decoder = new TextDecoder();

/** Every message `stream` holds (up to its last sequence now), in order; `filter` must cover the last one. */
export async function readAll(nats: Nats, stream: string, filter: string): Promise<Stored[]> {
  const { state } = await nats.jsm.streams.info(stream);
  const out: Stored[] = [];
  if (state.messages === 0) return out;
  await new Promise<void>((resolve) => {
    const r = readOrdered(
      nats,
      { stream, filter, startSeq: state.first_seq },
      (msg, seq) => {
        if (seq <= state.last_seq) out.push({ seq, subject: msg.subject, text: decoder.decode(msg.data) });
        if (seq >= state.last_seq) {
          r.stop();
          resolve();
        }
      },
      createLogger('error'),
    );
  });
  return out;
}

/** `<subject>@<start>` → the published JSON, for every span the reference says is closed. */
export function referenceDerived(md: Stored[], graceMs = DERIVED_GRACE_MS): Map<string, string> {
  type Trade = { seq: number; price: number; size: number };
  type Level = { price: number; size: number };
  type Book = { seq: number; bids: Level[]; asks: Level[]; diff: boolean };
  const watermark = new Map<string, number>();
  const trades = new Map<string, Map<number, Trade[]>>(); // `${source}.${symbol}.${kind}` → start → trades
  const books = new Map<string, Map<number, Book[]>>(); // `${source}.${symbol}` → second → books
  const push = <T>(m: Map<string, Map<number, T[]>>, key: string, start: number, v: T) => {
    const byStart = m.get(key) ?? new Map<number, T[]>();
    m.set(key, byStart);
    byStart.set(start, [...(byStart.get(start) ?? []), v]);
  };
  const assign = (ts: number, w: number, d: number) =>
    Math.max(Math.floor(ts / d) * d, Math.floor((w - graceMs) / d) * d);
  for (const m of md) {
    const tokens = m.subject.split('.');
    if (tokens.length !== 4 || tokens[0] !== 'md') continue;
    const [, source, symbol, type] = tokens as [string, string, string, string];
    const e = JSON.parse(m.text);
    if (typeof e.timestamp_ms !== 'number') continue;
    const w = Math.max(watermark.get(source) ?? Number.NEGATIVE_INFINITY, e.timestamp_ms);
    watermark.set(source, w);
    if (type === 'trade')
      for (const kind of BAR_KINDS)
        push(trades, `${source}.${symbol}.${kind}`, assign(e.timestamp_ms, w, DERIVED_DURATIONS_MS[kind]), {
          seq: m.seq,
          price: e.price,
          size: e.size,
        });
    if (type === 'book')
      push(books, `${source}.${symbol}`, assign(e.timestamp_ms, w, 1_000), {
        seq: m.seq,
        bids: e.bids,
        asks: e.asks,
        diff: e.is_snapshot === false,
      });
  }
  const out = new Map<string, string>();
  for (const [key, byStart] of trades) {
    const [source, symbol, kind] = key.split('.') as [string, string, (typeof BAR_KINDS)[number]];
    const d = DERIVED_DURATIONS_MS[kind];
    for (const [start, list] of byStart) {
      if ((watermark.get(source) as number) < start + d + graceMs) continue;
      const prices = list.map((t) => t.price);
      const volume = list.reduce((s, t) => s + t.size, 0);
      const notional = list.reduce((s, t) => s + t.price * t.size, 0);
      out.set(
        `dv.${key}@${start}`,
        JSON.stringify({
          event_type: kind,
          source,
          symbol,
          start_ms: start,
          end_ms: start + d,
          open: prices[0],
          high: prices.reduce((a, b) => (b > a ? b : a)),
          low: prices.reduce((a, b) => (b < a ? b : a)),
          close: prices[prices.length - 1],
          volume,
          notional,
          trade_count: list.length,
          vwap: notional / volume,
          first_seq: list[0]?.seq,
          last_seq: list[list.length - 1]?.seq,
          timestamp_ms: start + d,
        }),
      );
    }
  }
  for (const [key, bySecond] of books) {
    const [source, symbol] = key.split('.') as [string, string];
    let bids: Record<string, number> = {};
    let asks: Record<string, number> = {};
    let base = 0; // the last full book's sequence (or the first diff's)
    for (const start of [...bySecond.keys()].sort((a, b) => a - b)) {
      if ((watermark.get(source) as number) < start + 1_000 + graceMs) continue;
      const list = bySecond.get(start) as Book[];
      for (const b of list) {
        if (!b.diff) {
          bids = {};
          asks = {};
          base = b.seq;
        } else if (base === 0) base = b.seq;
        for (const [levels, into] of [
          [b.bids, bids],
          [b.asks, asks],
        ] as const)
          for (const l of levels) {
            if (l.size === 0) delete into[l.price];
            else into[l.price] = l.size;
          }
      }
      const side = (levels: Record<string, number>, desc: boolean) =>
        Object.entries(levels)
          .map(([p, size]) => ({ price: Number(p), size }))
          .sort((x, y) => (desc ? y.price - x.price : x.price - y.price))
          .slice(0, 10);
      const topBids = side(bids, true);
      const topAsks = side(asks, false);
      if (topBids.length === 0 && topAsks.length === 0) continue;
      const bestBid = topBids[0]?.price ?? null;
      const bestAsk = topAsks[0]?.price ?? null;
      out.set(
        `dv.${key}.${SNAPSHOT_KIND}@${start}`,
        JSON.stringify({
          event_type: SNAPSHOT_KIND,
          source,
          symbol,
          timestamp_ms: start + 1_000,
          bids: topBids,
          asks: topAsks,
          best_bid: bestBid,
          best_ask: bestAsk,
          mid_price: bestBid !== null && bestAsk !== null ? (bestBid + bestAsk) / 2 : null,
          base_seq: base,
          last_seq: list[list.length - 1]?.seq,
        }),
      );
    }
  }
  return out;
}

/** The same key for a stored derived message: `<subject>@<start of its span>`. */
export function derivedKey(subject: string, text: string): string {
  const e = JSON.parse(text);
  return `${subject}@${e.event_type === SNAPSHOT_KIND ? e.timestamp_ms - 1_000 : e.start_ms}`;
}

// The 1-minute candles of one coin, as the chart shows them: the closed bars of the derived
// `bar_1m` series, then the forming candle(s) of the minutes after the last of them, built from live
// trades. Pure: no DOM, no chart; the caller draws what `list()` holds.
//
// Invariants (why the chart is right):
// - One source: the first one seen (bar or trade); the others are skipped, since two venues' bars
//   of one minute would be two candles in one slot.
// - A closed bar is final: it replaces what the page built for its minute, and every candle at or
//   before it is a closed bar (a forming candle left before it is dropped: the producer counted
//   those trades, late past the grace, in a later bar). A trade of a minute at or before the last
//   closed bar changes nothing, for the same reason.
// - A forming candle: open = the first trade the page saw in its minute (the producer's open is the
//   first in stream order, and the page sees trades in that order), high/low/close/volume follow.

export const MINUTE_MS = 60_000;
/** Candles kept (a day): past it the oldest go, so an open page's memory stays bounded. */
export const MAX_CANDLES = 1_440;

/** Candle times are the minute's start in Unix seconds (the chart's UTC timestamp). */
const timeOf = (ms) => Math.floor(ms / MINUTE_MS) * (MINUTE_MS / 1_000);

export function createCandles() {
  /** time (s) → { time, open, high, low, close, volume, closed } */
  const candles = new Map();
  let source = null;
  let closedThrough = -1; // time (s) of the last closed bar

  const put = (c) => {
    candles.set(c.time, c);
    if (candles.size <= MAX_CANDLES) return;
    candles.delete(Math.min(...candles.keys()));
  };
  const takes = (ev) => {
    source ??= ev.source;
    return ev.source === source;
  };

  return {
    source: () => source,

    /** A `bar_1m` event; returns the time changed, or null when skipped. */
    bar(ev) {
      if (!takes(ev)) return null;
      const time = timeOf(ev.start_ms);
      const { open, high, low, close, volume } = ev;
      put({ time, open, high, low, close, volume, closed: true });
      if (time > closedThrough) {
        closedThrough = time;
        for (const [t, c] of candles) if (t < time && !c.closed) candles.delete(t);
      }
      return time;
    },

    /** A `trade` event; returns the time changed, or null when skipped. */
    trade(ev) {
      if (!takes(ev) || !(ev.price > 0)) return null;
      const time = timeOf(ev.timestamp_ms);
      if (time <= closedThrough) return null;
      const c = candles.get(time);
      const size = Number.isFinite(ev.size) ? ev.size : 0;
      if (!c) {
        const p = ev.price;
        put({ time, open: p, high: p, low: p, close: p, volume: size, closed: false });
      } else {
        c.high = Math.max(c.high, ev.price);
        c.low = Math.min(c.low, ev.price);
        c.close = ev.price;
        c.volume += size;
      }
      return time;
    },

    /** The candles, oldest first. */
    list() {
      return [...candles.values()].sort((a, b) => a.time - b.time);
    },

    /** Closed and forming candles held. */
    counts() {
      let closed = 0;
      for (const c of candles.values()) if (c.closed) closed++;
      return { closed, forming: candles.size - closed };
    },
  };
}

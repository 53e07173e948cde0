// The line view: mid prices (a line) and trade prices (points) of one coin, one point per second
// per series, from the unified stream (trades and books).
//
// The point counter (`data-points` on the chart, and under it) is what the chart holds: a tick in
// the second of the last point replaces that point, a later one adds a point. Read from the chart
// on each new second, so it grows only with points the chart has taken.
import { openFeed } from './chart-feed.js';

export function createLineView(chart, box) {
  const { LineSeries } = window.LightweightCharts;
  const mid = chart.addSeries(LineSeries, { color: '#2563eb', lineWidth: 2, title: 'mid' });
  const trades = chart.addSeries(LineSeries, {
    color: '#f97316',
    lineVisible: false,
    pointMarkersVisible: true,
    pointMarkersRadius: 3,
    title: 'trade',
    lastValueVisible: false,
    priceLineVisible: false,
  });
  let points = 0;
  let last = { mid: 0, trade: 0 };

  function plot(series, kind, timestampMs, value) {
    const time = Math.floor(timestampMs / 1_000);
    if (!Number.isFinite(value) || time < last[kind]) return;
    const added = time > last[kind];
    last[kind] = time;
    series.update({ time, value });
    if (!added) return;
    points = mid.data().length + trades.data().length;
    box.dataset.points = String(points);
  }

  function clear(visible) {
    for (const s of [mid, trades]) {
      s.setData([]);
      s.applyOptions({ visible });
    }
    last = { mid: 0, trade: 0 };
    points = 0;
    box.dataset.points = '0';
  }

  return {
    clear: () => clear(false),
    /** Draws `coin` live; `on` receives state(state, text) and detail(text); returns a close function. */
    start(coin, on) {
      clear(true);
      chart.applyOptions({ timeScale: { secondsVisible: true, barSpacing: 18 } });
      box.setAttribute('aria-label', `Line chart of ${coin} mid prices and trade prices`);
      return openFeed(
        { coin },
        {
          event(ev, id) {
            if (ev.event_type === 'book') plot(mid, 'mid', ev.timestamp_ms, ev.mid_price);
            else if (ev.event_type === 'trade') plot(trades, 'trade', ev.timestamp_ms, ev.price);
            on.detail(`${coin} · ${points} points · last event id ${id}`);
          },
          state: on.state,
        },
      );
    },
  };
}

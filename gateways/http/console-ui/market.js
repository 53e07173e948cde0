import { openFeed } from './chart-feed.js';
import { api, header, requireSession } from './common.js';

await requireSession();
const me = await api('/account');
header('market', me.email);

const { createChart, LineSeries } = window.LightweightCharts;
const box = document.getElementById('chart');
const chart = createChart(box, {
  autoSize: true,
  layout: { background: { color: '#ffffff' }, textColor: '#334155', fontFamily: 'system-ui, sans-serif' },
  grid: { vertLines: { color: '#f1f5f9' }, horzLines: { color: '#f1f5f9' } },
  rightPriceScale: { borderColor: '#e2e8f0' },
  timeScale: {
    borderColor: '#e2e8f0',
    timeVisible: true,
    secondsVisible: true,
    barSpacing: 18,
    rightOffset: 4,
  },
});
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

const dot = document.getElementById('feed-dot');
const text = document.getElementById('feed-text');
const detail = document.getElementById('feed-detail');
let points = 0;
let last = { mid: 0, trade: 0 };
let close = () => {};

// The point counter (`data-points` on the chart, and under it) is what the chart holds: a tick in
// the second of the last point replaces that point, a later one adds a point. Read from the chart
// on each new second, so it grows only with points the chart has taken.
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

function start(coin) {
  close();
  mid.setData([]);
  trades.setData([]);
  last = { mid: 0, trade: 0 };
  points = 0;
  box.dataset.points = '0';
  close = openFeed(coin, {
    event(ev, id) {
      if (ev.event_type === 'book') plot(mid, 'mid', ev.timestamp_ms, ev.mid_price);
      else if (ev.event_type === 'trade') plot(trades, 'trade', ev.timestamp_ms, ev.price);
      detail.textContent = `${coin} · ${points} points · last event id ${id}`;
    },
    state(state, message) {
      dot.className = `dot ${state}`;
      text.textContent = message;
      document.getElementById('feed-status').dataset.state = state;
    },
  });
}

const select = document.getElementById('coin');
select.addEventListener('change', () => start(select.value));
start(select.value);
document.body.dataset.ready = 'true';

// The live market page: a chart of one coin in one of two views, the line (mid prices and trades,
// the default) or 1-minute candles, chosen in a select and kept in the URL hash (`#candles`) so a
// link or a reload keeps it. A coin or view change closes the feeds of the one before.
import { createCandleView } from './candle-view.js';
import { api, header, requireSession } from './common.js';
import { createLineView } from './line-view.js';

await requireSession();
const me = await api('/account');
header('market', me.email);

const box = document.getElementById('chart');
const chart = window.LightweightCharts.createChart(box, {
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
const views = { line: createLineView(chart, box), candles: createCandleView(chart, box) };

const dot = document.getElementById('feed-dot');
const text = document.getElementById('feed-text');
const detail = document.getElementById('feed-detail');
const coinSelect = document.getElementById('coin');
const viewSelect = document.getElementById('view');
let close = () => {};

const viewOfHash = () => (location.hash === '#candles' ? 'candles' : 'line');

function start() {
  close();
  const name = viewSelect.value;
  for (const [n, v] of Object.entries(views)) if (n !== name) v.clear();
  box.dataset.view = name;
  for (const el of document.querySelectorAll('[data-legend]')) el.hidden = el.dataset.legend !== name;
  detail.textContent = '';
  close = views[name].start(coinSelect.value, {
    detail: (t) => {
      detail.textContent = t;
    },
    state(state, message) {
      dot.className = `dot ${state}`;
      text.textContent = message;
      document.getElementById('feed-status').dataset.state = state;
    },
  });
}

viewSelect.value = viewOfHash();
coinSelect.addEventListener('change', start);
viewSelect.addEventListener('change', () => {
  history.replaceState(
    null,
    '',
    viewSelect.value === 'candles' ? '#candles' : location.pathname + location.search,
  );
  start();
});
window.addEventListener('hashchange', () => {
  if (viewOfHash() === viewSelect.value) return;
  viewSelect.value = viewOfHash();
  start();
});
start();
document.body.dataset.ready = 'true';

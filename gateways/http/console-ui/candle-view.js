// The candles view: 1-minute candles of one coin with their volume under them, from two streams
// of the dashboard proxy (two of the viewer's concurrent streams):
// - the closed bars: `event_type=bar_1m` from an hour back (`from`), then live; a reconnect resumes
//   by Last-Event-ID, so no bar comes twice or goes missing;
// - the forming candle: the coin's trades, live (`event_type=trade`).
// candles.js decides what the chart holds; this file draws it and keeps the counters the page
// shows: `data-candles` (candles the series holds), `data-last-candle` and `data-last-bar` (the
// newest candle and the newest closed bar as the series holds them, JSON).
import { createCandles } from './candles.js';
import { openFeed } from './chart-feed.js';

/** How far back the closed bars start, ms. */
export const HISTORY_MS = 60 * 60_000;

const UP = '#16a34a';
const DOWN = '#dc2626';
const RANK = { live: 0, connecting: 1, reconnecting: 2, ended: 3 };

const ohlc = ({ time, open, high, low, close }) => ({ time, open, high, low, close });
const volumeOf = (c) => ({
  time: c.time,
  value: c.volume,
  color: c.close >= c.open ? 'rgb(22 163 74 / 35%)' : 'rgb(220 38 38 / 35%)',
});

export function createCandleView(chart, box) {
  const { CandlestickSeries, HistogramSeries } = window.LightweightCharts;
  const series = chart.addSeries(CandlestickSeries, {
    upColor: UP,
    downColor: DOWN,
    borderVisible: false,
    wickUpColor: UP,
    wickDownColor: DOWN,
    title: '1m',
    visible: false,
  });
  series.priceScale().applyOptions({ scaleMargins: { top: 0.08, bottom: 0.25 } });
  const volume = chart.addSeries(HistogramSeries, {
    priceScaleId: 'volume',
    priceFormat: { type: 'volume' },
    lastValueVisible: false,
    priceLineVisible: false,
    visible: false,
  });
  chart.priceScale('volume').applyOptions({ scaleMargins: { top: 0.8, bottom: 0 } });
  let book = createCandles();

  /** Draws the change at `time`: an update when it is the newest candle, else the whole series. */
  function draw(time, whole) {
    const list = book.list();
    const held = series.data();
    const newest = list.at(-1);
    const heldLast = held.at(-1)?.time ?? -1;
    const appends = newest?.time === time && time >= heldLast;
    const fits = list.length === held.length + (time > heldLast ? 1 : 0);
    if (!whole && appends && fits) {
      series.update(ohlc(newest));
      volume.update(volumeOf(newest));
    } else {
      series.setData(list.map(ohlc));
      volume.setData(list.map(volumeOf));
    }
    const data = series.data();
    box.dataset.candles = String(data.length);
    box.dataset.lastCandle = JSON.stringify(data.at(-1) ?? null);
    const lastBar = list.filter((c) => c.closed).at(-1);
    box.dataset.lastBar = JSON.stringify(data.find((c) => c.time === lastBar?.time) ?? null);
  }

  function clear(visible) {
    book = createCandles();
    for (const s of [series, volume]) {
      s.setData([]);
      s.applyOptions({ visible });
    }
    box.dataset.candles = '0';
    box.dataset.lastCandle = 'null';
    box.dataset.lastBar = 'null';
  }

  return {
    clear: () => clear(false),
    /** Draws `coin`; `on` receives state(state, text) and detail(text); returns a close function. */
    start(coin, on) {
      clear(true);
      chart.applyOptions({ timeScale: { secondsVisible: false, barSpacing: 14 } });
      box.setAttribute('aria-label', `Candlestick chart of ${coin}, one candle a minute, volume below`);
      const states = { bars: ['connecting', 'Connecting…'], trades: ['connecting', 'Connecting…'] };
      let lastBarId = '–';
      const describe = () => {
        const { closed, forming } = book.counts();
        const source = book.source() ? ` (${book.source()})` : '';
        on.detail(
          `${coin}${source} · 1-minute candles: ${closed} closed, ${forming} forming · last bar id ${lastBarId}`,
        );
      };
      const closers = [];
      const closeAll = () => {
        for (const c of closers) c();
      };
      // The page shows the worse of the two streams; one ended ends the other (a session is over).
      const state = (name) => (s, text) => {
        states[name] = [s, text];
        const [worst, message] = Object.values(states).sort((a, b) => RANK[b[0]] - RANK[a[0]])[0];
        if (worst === 'ended') closeAll();
        on.state(worst, message);
      };
      const from = String(Date.now() - HISTORY_MS);
      closers.push(
        openFeed(
          { coin, event_type: 'bar_1m', from },
          {
            event(ev, id) {
              if (ev.event_type !== 'bar_1m') return;
              lastBarId = id;
              const time = book.bar(ev);
              if (time !== null) draw(time, true);
              describe();
            },
            state: state('bars'),
          },
        ),
        openFeed(
          { coin, event_type: 'trade' },
          {
            event(ev) {
              if (ev.event_type !== 'trade') return;
              const time = book.trade(ev);
              if (time === null) return;
              draw(time, false);
              describe();
            },
            state: state('trades'),
          },
        ),
      );
      describe();
      return closeAll;
    },
  };
}

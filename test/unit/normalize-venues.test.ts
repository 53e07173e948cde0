import { describe, expect, it } from 'vitest';
import { MarketEvent, type Source } from '../../contracts/events.ts';
import { normalizeBatch } from '../../producers/normalizer/index.ts';

const RECEIVED_AT_MS = 1_750_000_000_000;

/** Events of a batch that must be accepted whole; each is checked against the contract. */
function accepted(source: Source, payloads: unknown[], symbol?: string): MarketEvent[] {
  const { events, rejected } = normalizeBatch(
    { source, symbol, events: payloads.map((payload) => ({ payload })) },
    { receivedAtMs: RECEIVED_AT_MS },
  );
  expect(rejected).toEqual([]);
  for (const event of events) expect(MarketEvent.parse(event)).toEqual(event);
  return events;
}

const trade = {
  e: 'trade',
  E: 1554076800945,
  s: 'BNBBTC',
  t: 40756030,
  p: '0.00426990',
  q: '33.82000000',
  T: 1554076800940,
  m: false,
  M: true,
};

describe('binance', () => {
  it('maps m (buyer is maker) to the aggressor: m=false → buy, m=true → sell', () => {
    const [buy, sell] = accepted('binance', [trade, { ...trade, m: true, t: 2 }]);
    expect(buy).toMatchObject({
      side: 'buy',
      trade_id: 'trd_40756030',
      venue_trade_id: '40756030',
      timestamp_ms: 1554076800940,
    });
    expect(sell).toMatchObject({ side: 'sell', trade_id: 'trd_2', venue_trade_id: '2' });
  });

  it('gives the same event with and without the combined-stream wrapper', () => {
    expect(accepted('binance', [trade])).toEqual(
      accepted('binance', [{ stream: 'bnbbtc@trade', data: trade }]),
    );
  });

  it('lets the request symbol override the payload symbol', () => {
    expect(accepted('binance', [trade], 'BNB-BTC')).toMatchObject([{ symbol: 'BNB-BTC' }]);
  });

  it('brings microsecond times (timeUnit=MICROSECOND) back to ms', () => {
    expect(accepted('binance', [{ ...trade, T: 1554076800940123 }])).toMatchObject([
      { timestamp_ms: 1554076800940 },
    ]);
  });

  it('names aggTrades by `a`, else by their first–last trade ids', () => {
    const agg = { e: 'aggTrade', E: 1, s: 'BTCUSDT', p: '10', q: '1', f: 100, l: 102, T: 5, m: true };
    const events = accepted('binance', [{ ...agg, a: 26129 }, agg, { ...agg, l: 100 }]);
    expect(events.map((e) => (e.event_type === 'trade' ? [e.trade_id, e.venue_trade_id] : []))).toEqual([
      ['trd_26129', '26129'],
      ['trd_100-102', '100-102'],
      ['trd_100', '100'],
    ]);
    expect(events[0]).toMatchObject({ side: 'sell', timestamp_ms: 5, capture_time_ms: 5 });
  });

  it('maps a USD-M bookTicker with its event time E', () => {
    const ticker = {
      e: 'bookTicker',
      u: 185130926750,
      s: 'BTCUSDT',
      b: '33134.42',
      B: '0.170',
      a: '33139.39',
      A: '0.380',
      T: 1612137603568,
      E: 1612137603571,
    };
    expect(accepted('binance', [{ stream: 'btcusdt@bookTicker', data: ticker }])).toMatchObject([
      {
        best_bid: 33134.42,
        best_ask: 33139.39,
        timestamp_ms: 1612137603571,
        bids: [{ price: 33134.42, size: 0.17 }],
        is_snapshot: true,
      },
    ]);
  });

  it('maps a USD-M partial depth frame (diff shape, stream @depth<N>) as a snapshot', () => {
    const frame = {
      e: 'depthUpdate',
      E: 1571889248277,
      T: 1571889248276,
      s: 'BTCUSDT',
      U: 390497796,
      u: 390497878,
      pu: 390497794,
      b: [
        ['7403.89', '0.002'],
        ['7403.90', '3.906'],
      ],
      a: [['7405.96', '3.340']],
    };
    const [book] = accepted('binance', [{ stream: 'btcusdt@depth5@100ms', data: frame }]);
    expect(book).toMatchObject({
      event_type: 'book',
      is_snapshot: true,
      timestamp_ms: 1571889248277,
      bids: [
        { price: 7403.9, size: 3.906 },
        { price: 7403.89, size: 0.002 },
      ],
    });
  });

  it('maps diff depth (raw, or with a @depth / @depth@100ms stream) to a diff: zero sizes kept, best fields null', () => {
    const diff = {
      e: 'depthUpdate',
      E: 1554076801699,
      s: 'BTCUSDC',
      U: 16084252,
      u: 16084253,
      b: [
        ['4084.88000000', '0.00000000'],
        ['4085.00000000', '1.5'],
      ],
      a: [
        ['4112.00000000', '2'],
        ['4111.84000000', '0.00000000'],
      ],
    };
    const expected = {
      event_type: 'book',
      source: 'binance',
      symbol: 'BTCUSDC',
      timestamp_ms: 1554076801699,
      capture_time_ms: 1554076801699,
      bids: [
        { price: 4085, size: 1.5 },
        { price: 4084.88, size: 0 },
      ],
      asks: [
        { price: 4111.84, size: 0 },
        { price: 4112, size: 2 },
      ],
      best_bid: null,
      best_ask: null,
      mid_price: null,
      spread_bps: null,
      is_snapshot: false,
    };
    const events = accepted('binance', [
      diff,
      { stream: 'btcusdc@depth', data: diff },
      { stream: 'btcusdc@depth@100ms', data: diff },
    ]);
    expect(events).toStrictEqual([expected, expected, expected]);
  });

  it('rounds spread_bps to 10 decimal places', () => {
    const [book] = accepted('binance', [{ u: 1, s: 'BTCUSDT', b: '8010', B: '1', a: '8012.15', A: '1' }]);
    expect(book).toMatchObject({ spread_bps: 2.6837846356, mid_price: 8011.075 });
  });

  it('takes the symbol of a spot partial depth frame from its stream name, and drops zero-size levels', () => {
    const frame = {
      lastUpdateId: 1,
      bids: [['10', '1']],
      asks: [
        ['11', '0'],
        ['12', '2'],
      ],
    };
    expect(accepted('binance', [{ stream: 'btcusdt@depth5', data: frame }])).toMatchObject([
      { symbol: 'BTCUSDT', best_ask: 12, asks: [{ price: 12, size: 2 }], timestamp_ms: RECEIVED_AT_MS },
    ]);
  });

  it('maps an array of events (all-market streams) to one event each', () => {
    expect(accepted('binance', [[trade, { ...trade, t: 7 }]])).toHaveLength(2);
  });
});

const fill = (side: 'A' | 'B', tid: number) => ({
  coin: 'BTC',
  side,
  px: '69997.0',
  sz: '0.5',
  time: 1730160006192,
  hash: '0x40',
  tid,
});

describe('hyperliquid', () => {
  it('maps each fill of a trades message to one event, in order, B → buy and A → sell', () => {
    const events = accepted('hyperliquid', [
      { channel: 'trades', data: [fill('B', 1), fill('A', 2), fill('B', 3)] },
    ]);
    expect(
      events.map((e) => (e.event_type === 'trade' ? [e.side, e.trade_id, e.venue_trade_id] : [])),
    ).toEqual([
      ['buy', 'trd_1', '1'],
      ['sell', 'trd_2', '2'],
      ['buy', 'trd_3', '3'],
    ]);
    expect(events[0]).toMatchObject({ price: 69997, size: 0.5, notional_usd: 34998.5 });
  });

  it('maps the /info l2Book response (a bare WsBook) like the l2Book push', () => {
    const wsBook = {
      coin: 'BTC',
      time: 1,
      levels: [[{ px: '100', sz: '1', n: 1 }], [{ px: '101', sz: '2', n: 3 }]],
    };
    expect(accepted('hyperliquid', [wsBook])).toEqual(
      accepted('hyperliquid', [{ channel: 'l2Book', data: wsBook }]),
    );
  });

  it('keeps spot names (@162, PURR/USDC) as symbols and marks books as snapshots', () => {
    const bbo = { coin: '@162', time: 7, bbo: [{ px: '0.97925', sz: '4144.6', n: 1 }, null] };
    expect(accepted('hyperliquid', [{ channel: 'bbo', data: bbo }])).toMatchObject([
      {
        symbol: '@162',
        is_snapshot: true,
        best_bid: 0.97925,
        best_ask: null,
        mid_price: null,
        spread_bps: null,
      },
    ]);
    expect(accepted('hyperliquid', [{ ...fill('B', 4), coin: 'PURR/USDC' }])).toMatchObject([
      { symbol: 'PURR/USDC', venue_trade_id: '4' },
    ]);
  });

  it('accepts bare WsTrade objects and arrays', () => {
    expect(accepted('hyperliquid', [fill('A', 9), [fill('B', 1), fill('B', 2)]])).toHaveLength(3);
  });
});

const record = {
  ts_recv: '1609160400099150057',
  hd: { ts_event: '1609160400098821953', rtype: 0, publisher_id: 1, instrument_id: 5482 },
  action: 'T',
  side: 'B',
  depth: 0,
  price: '3720250000000',
  size: 5,
  flags: 129,
  ts_in_delta: 19251,
  sequence: 1170380,
};
const expectedTrade = {
  event_type: 'trade',
  side: 'buy',
  price: 3720.25,
  size: 5,
  timestamp_ms: 1609160400098,
  capture_time_ms: 1609160400099,
  trade_id: 'trd_1170380',
  venue_trade_id: '1170380',
};

describe('cme (Databento)', () => {
  it('reads a flat header like the nested hd', () => {
    const { hd, ...rest } = record;
    expect(accepted('cme', [{ ...rest, ...hd }], 'ESH1')).toMatchObject([expectedTrade]);
  });

  it('reads pretty_px decimals and pretty_ts ISO times', () => {
    const pretty = {
      ...record,
      ts_recv: '2020-12-28T13:00:00.099150057Z',
      hd: { ...record.hd, ts_event: '2020-12-28T13:00:00.098821953Z' },
      price: '3720.250000000',
    };
    expect(accepted('cme', [pretty], 'ESH1')).toMatchObject([expectedTrade]);
  });

  it('takes the symbol of map_symbols output when the request gives none', () => {
    expect(accepted('cme', [{ ...record, symbol: 'ESH1' }])).toMatchObject([{ symbol: 'ESH1' }]);
  });

  it('converts ns to ms exactly (no float rounding up into the next ms)', () => {
    const late = {
      ...record,
      hd: { ...record.hd, ts_event: '1609160400099999999' },
      ts_recv: '1609160400999999999',
    };
    expect(accepted('cme', [late], 'ESH1')).toMatchObject([
      { timestamp_ms: 1609160400099, capture_time_ms: 1609160400999 },
    ]);
  });

  it('uses the event time as capture time when flags mark ts_recv as bad', () => {
    expect(accepted('cme', [{ ...record, flags: 8 }], 'ESH1')).toMatchObject([
      { timestamp_ms: 1609160400098, capture_time_ms: 1609160400098 },
    ]);
  });

  it('maps mbp-10 levels, skipping empty (i64::MAX) ones', () => {
    const empty = {
      bid_px: '9223372036854775807',
      ask_px: '9223372036854775807',
      bid_sz: 0,
      ask_sz: 0,
      bid_ct: 0,
      ask_ct: 0,
    };
    const mbp10 = {
      ...record,
      hd: { ...record.hd, rtype: 10 },
      action: 'C',
      levels: [
        { bid_px: '3720250000000', ask_px: '3720500000000', bid_sz: 24, ask_sz: 11, bid_ct: 15, ask_ct: 9 },
        {
          bid_px: '3720000000000',
          ask_px: '9223372036854775807',
          bid_sz: 3,
          ask_sz: 0,
          bid_ct: 1,
          ask_ct: 0,
        },
        empty,
      ],
    };
    expect(accepted('cme', [mbp10], 'ESH1')).toMatchObject([
      {
        event_type: 'book',
        bids: [
          { price: 3720.25, size: 24 },
          { price: 3720, size: 3 },
        ],
        asks: [{ price: 3720.5, size: 11 }],
        mid_price: 3720.375,
      },
    ]);
  });

  it('maps a bbo-1s record to a book only (its price/side are the last trade, not a new one)', () => {
    const bbo = {
      ts_recv: '1609113600000000000',
      hd: { ts_event: '1609113599045849637', rtype: 195, publisher_id: 1, instrument_id: 5482 },
      side: 'A',
      price: '3702500000000',
      size: 2,
      flags: 168,
      sequence: 145799,
      levels: [
        { bid_px: '3702250000000', ask_px: '3702750000000', bid_sz: 18, ask_sz: 13, bid_ct: 10, ask_ct: 13 },
      ],
    };
    expect(accepted('cme', [bbo], 'ESH1')).toMatchObject([
      { event_type: 'book', timestamp_ms: 1609113599045 },
    ]);
  });

  it('maps side N (no aggressor) to unknown', () => {
    expect(accepted('cme', [{ ...record, side: 'N' }], 'ESH1')).toMatchObject([
      { ...expectedTrade, side: 'unknown' },
    ]);
  });

  it('keeps the trade, then a one-sided book, for a tbbo record whose pre-trade BBO is one-sided', () => {
    const tbbo = {
      ...record,
      hd: { ...record.hd, rtype: 1 },
      levels: [
        {
          bid_px: '3720250000000',
          ask_px: '9223372036854775807',
          bid_sz: 26,
          ask_sz: 0,
          bid_ct: 16,
          ask_ct: 0,
        },
      ],
    };
    expect(accepted('cme', [tbbo], 'ESH1')).toMatchObject([
      expectedTrade,
      {
        event_type: 'book',
        is_snapshot: true,
        best_bid: 3720.25,
        best_ask: null,
        mid_price: null,
        spread_bps: null,
      },
    ]);
  });

  it('keeps only the trade of a tbbo record whose pre-trade BBO is crossed', () => {
    const tbbo = {
      ...record,
      hd: { ...record.hd, rtype: 1 },
      levels: [
        { bid_px: '3720500000000', ask_px: '3720250000000', bid_sz: 1, ask_sz: 1, bid_ct: 1, ask_ct: 1 },
      ],
    };
    expect(accepted('cme', [tbbo], 'ESH1')).toStrictEqual([expect.objectContaining(expectedTrade)]);
  });
});

describe('sgx', () => {
  it('maps aggressor S to sell and reads a string timestamp_ns', () => {
    const t = {
      msg_type: 'trade',
      symbol: 'ETHPERP',
      match_id: 'M:77',
      aggressor_side: 'S',
      price: 3050,
      quantity: 2,
      timestamp_ns: '1763948700123456789',
    };
    expect(accepted('sgx', [t])).toMatchObject([
      {
        side: 'sell',
        trade_id: 'trd_M:77',
        venue_trade_id: 'M:77',
        timestamp_ms: 1763948700123,
        notional_usd: 6100,
      },
    ]);
  });
});

import { describe, expect, it } from 'vitest';
import { MarketEvent, SOURCES, type Source, TradeEvent } from '../../contracts/events.ts';
import { TRADE_ID_BODY } from '../../producers/normalizer/fields.ts';
import {
  NORMALIZE_ERROR_CODES,
  NormalizeError,
  type NormalizeErrorCode,
  normalizeBatch,
} from '../../producers/normalizer/index.ts';

const RECEIVED_AT_MS = 1_750_000_000_000;

const run = (source: Source, payloads: unknown[], symbol?: string) =>
  normalizeBatch(
    { source, symbol, events: payloads.map((payload) => ({ payload })) },
    { receivedAtMs: RECEIVED_AT_MS },
  );

/** The code of the one rejected element, after checking it yielded no event. */
function rejectionOf(source: Source, payload: unknown, symbol?: string): NormalizeErrorCode {
  const { events, rejected } = run(source, [payload], symbol);
  expect(events).toEqual([]);
  expect(rejected).toHaveLength(1);
  expect(rejected[0]?.index).toBe(0);
  expect(rejected[0]?.message).toMatch(/\S{3,}/);
  return rejected[0]?.error as NormalizeErrorCode;
}

const binanceTrade = {
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
const hlTrade = {
  coin: 'BTC',
  side: 'B',
  px: '69997.0',
  sz: '0.38111',
  time: 1730160006192,
  tid: 1016375172059570,
};
const dbTrade = {
  ts_recv: '1609160400099150057',
  hd: { ts_event: '1609160400098821953', rtype: 0, publisher_id: 1, instrument_id: 5482 },
  action: 'T',
  side: 'A',
  depth: 0,
  price: '3720250000000',
  size: 5,
  flags: 129,
  ts_in_delta: 19251,
  sequence: 1170380,
};
const sgxTrade = {
  msg_type: 'trade',
  symbol: 'BTCPERP',
  match_id: 'M-1',
  aggressor_side: 'B',
  price: '95815',
  quantity: '3',
  timestamp_ns: 1763948700000000000,
};
const synTrade = {
  event_type: 'trade',
  timestamp_ms: 1700000000123,
  capture_time_ms: 1700000000125,
  symbol: 'BTC',
  side: 'buy',
  price: 50012.5,
  size: 0.25,
  trade_id: 'trd_000001',
  notional_usd: 12503.125,
};

describe('normalize: request-level errors', () => {
  it('throws a typed unknown_source error for a source without a mapper, whatever the events', () => {
    for (const source of ['okx', 'BINANCE', '', 'constructor', '__proto__']) {
      const call = () => normalizeBatch({ source, events: [] });
      expect(call).toThrow(NormalizeError);
      try {
        call();
      } catch (error) {
        expect((error as NormalizeError).code).toBe('unknown_source');
        expect((error as NormalizeError).message).toContain('binance');
      }
    }
  });

  it('has a mapper for every source of the contract', () => {
    for (const source of SOURCES) expect(run(source, [])).toEqual({ events: [], rejected: [] });
  });

  it('gives an empty result for an empty batch (not an error)', () => {
    expect(normalizeBatch({ source: 'binance', events: [] })).toEqual({ events: [], rejected: [] });
  });

  it('throws invalid_request when events is not an array', () => {
    const bad = { source: 'binance', events: { payload: binanceTrade } } as never;
    expect(() => normalizeBatch(bad)).toThrow(expect.objectContaining({ code: 'invalid_request' }));
  });

  it('rejects every element, without throwing, when the request symbol is not a canonical symbol', () => {
    const { events, rejected } = run('binance', [binanceTrade, binanceTrade], 'BTC.USDT');
    expect(events).toEqual([]);
    expect(rejected.map((r) => [r.index, r.error])).toEqual([
      [0, 'invalid_value'],
      [1, 'invalid_value'],
    ]);
    expect(rejected[0]?.message).toContain('request symbol');
  });
});

describe('normalize: element-level errors', () => {
  it('rejects elements without a payload, keeps the others in order, and reports input indices', () => {
    const events = [null, {}, { payload: undefined }, { payload: binanceTrade }, 'x', { payload: 7 }];
    const result = normalizeBatch({ source: 'binance', events: events as never }, { receivedAtMs: 0 });
    expect(result.events).toHaveLength(1);
    expect(result.rejected.map((r) => [r.index, r.error])).toEqual([
      [0, 'missing_field'],
      [1, 'missing_field'],
      [2, 'missing_field'],
      [4, 'missing_field'],
      [5, 'invalid_value'],
    ]);
  });

  it('keeps an element all-or-nothing: one bad fill in a Hyperliquid batch rejects the whole message', () => {
    const message = { channel: 'trades', data: [hlTrade, { ...hlTrade, px: 'NaN' }] };
    const { events, rejected } = run('hyperliquid', [message, { channel: 'trades', data: [hlTrade] }]);
    expect(events).toHaveLength(1);
    expect(rejected).toEqual([
      { index: 0, error: 'invalid_value', message: expect.stringContaining('data[1].px') },
    ]);
  });

  // [source, case, payload, expected code, request symbol?]
  const cases: [Source, string, unknown, NormalizeErrorCode, string?][] = [
    ['binance', 'payload is a string', 'trade', 'invalid_value'],
    ['binance', 'payload is an empty object', {}, 'unsupported_payload'],
    ['binance', 'unknown event type', { ...binanceTrade, e: 'executionReport' }, 'unsupported_payload'],
    ['binance', 'price not a number', { ...binanceTrade, p: 'abc' }, 'invalid_value'],
    ['binance', 'empty price', { ...binanceTrade, p: '' }, 'invalid_value'],
    ['binance', 'zero quantity', { ...binanceTrade, q: '0.000' }, 'invalid_value'],
    ['binance', 'negative price', { ...binanceTrade, p: '-1' }, 'invalid_value'],
    ['binance', 'price missing', { ...binanceTrade, p: undefined }, 'missing_field'],
    ['binance', 'm missing', { ...binanceTrade, m: undefined }, 'missing_field'],
    ['binance', 'm a string', { ...binanceTrade, m: 'true' }, 'invalid_value'],
    ['binance', 'trade time a string', { ...binanceTrade, T: '1554076800940' }, 'invalid_value'],
    ['binance', 'trade time negative', { ...binanceTrade, T: -5 }, 'invalid_value'],
    ['binance', 'trade id fractional', { ...binanceTrade, t: 1.5 }, 'invalid_value'],
    ['binance', 'symbol with a dot', { ...binanceTrade, s: 'BNB.BTC' }, 'invalid_value'],
    ['binance', 'wrapper data is a number', { stream: 'x@trade', data: 5 }, 'invalid_value'],
    [
      'binance',
      'diff depth with a negative quantity',
      { e: 'depthUpdate', E: 1, s: 'BTCUSDT', U: 1, u: 2, b: [['1', '-1']], a: [] },
      'invalid_value',
    ],
    [
      'binance',
      'diff depth without its event time',
      { e: 'depthUpdate', s: 'BTCUSDT', U: 1, u: 2, b: [['1', '0']], a: [] },
      'missing_field',
    ],
    [
      'binance',
      'snapshot level not a pair',
      { lastUpdateId: 1, bids: ['1'], asks: [] },
      'invalid_value',
      'BTCUSDT',
    ],
    [
      'binance',
      'snapshot without a symbol',
      { lastUpdateId: 1, bids: [['1', '1']], asks: [['2', '1']] },
      'missing_field',
    ],
    [
      'binance',
      'snapshot level with a zero price',
      { lastUpdateId: 1, bids: [['0', '1']], asks: [['2', '0']] },
      'invalid_value',
      'BTCUSDT',
    ],
    [
      'binance',
      'crossed snapshot',
      { lastUpdateId: 1, bids: [['101', '1']], asks: [['100', '1']] },
      'crossed_book',
      'BTCUSDT',
    ],
    [
      'binance',
      'bookTicker with a zero bid price but a bid size',
      { u: 1, s: 'BTCUSDT', b: '0', B: '1', a: '2', A: '1' },
      'invalid_value',
    ],
    ['hyperliquid', 'unknown channel', { channel: 'userFills', data: {} }, 'unsupported_payload'],
    ['hyperliquid', 'trades data not an array', { channel: 'trades', data: hlTrade }, 'invalid_value'],
    [
      'hyperliquid',
      'side neither B nor A',
      { channel: 'trades', data: [{ ...hlTrade, side: 'S' }] },
      'invalid_value',
    ],
    [
      'hyperliquid',
      'tid missing',
      { channel: 'trades', data: [{ ...hlTrade, tid: undefined }] },
      'missing_field',
    ],
    [
      'hyperliquid',
      'time in seconds as a string',
      { channel: 'trades', data: [{ ...hlTrade, time: '1' }] },
      'invalid_value',
    ],
    [
      'hyperliquid',
      'coin with a dot (not one subject token)',
      { channel: 'trades', data: [{ ...hlTrade, coin: 'BTC.PERP' }] },
      'invalid_value',
    ],
    [
      'hyperliquid',
      'l2Book without levels',
      { channel: 'l2Book', data: { coin: 'BTC', time: 1 } },
      'missing_field',
    ],
    [
      'hyperliquid',
      'bbo level with a negative size',
      { channel: 'bbo', data: { coin: 'BTC', time: 1, bbo: [{ px: '1', sz: '-1', n: 1 }, null] } },
      'invalid_value',
    ],
    ['hyperliquid', 'bare object of no known shape', { coin: 'BTC' }, 'unsupported_payload'],
    ['cme', 'not a Databento record', { price: 1 }, 'unsupported_payload'],
    ['cme', 'raw MDP 3.0 object', { TransactTime: 1, MDEntryPx: 1 }, 'unsupported_payload'],
    ['cme', 'no symbol in record or request', dbTrade, 'missing_field'],
    ['cme', 'side missing', { ...dbTrade, side: undefined }, 'missing_field', 'ESH1'],
    ['cme', 'side lower case', { ...dbTrade, side: 'a' }, 'invalid_value', 'ESH1'],
    [
      'cme',
      'price i64::MAX (undefined) on a trade',
      { ...dbTrade, price: '9223372036854775807' },
      'missing_field',
      'ESH1',
    ],
    ['cme', 'negative price', { ...dbTrade, price: '-5' }, 'invalid_value', 'ESH1'],
    [
      'cme',
      'ts_event not a time',
      { ...dbTrade, hd: { ...dbTrade.hd, ts_event: 'yesterday' } },
      'invalid_value',
      'ESH1',
    ],
    ['cme', 'sequence missing', { ...dbTrade, sequence: undefined }, 'missing_field', 'ESH1'],
    ['cme', 'MBO record', { ...dbTrade, hd: { ...dbTrade.hd, rtype: 160 } }, 'book_delta', 'ESH1'],
    ['cme', 'unknown rtype', { ...dbTrade, hd: { ...dbTrade.hd, rtype: 99 } }, 'unsupported_payload', 'ESH1'],
    [
      'cme',
      'book action without levels',
      { ...dbTrade, action: 'A', hd: { ...dbTrade.hd, rtype: 1 } },
      'missing_field',
      'ESH1',
    ],
    ['sgx', 'msg_type missing', { ...sgxTrade, msg_type: undefined }, 'missing_field'],
    ['sgx', 'unknown msg_type', { ...sgxTrade, msg_type: 'auction' }, 'unsupported_payload'],
    ['sgx', 'order message', { msg_type: 'add_order', order_id: 1 }, 'book_delta'],
    ['sgx', 'aggressor side A', { ...sgxTrade, aggressor_side: 'A' }, 'invalid_value'],
    ['sgx', 'match id with a space', { ...sgxTrade, match_id: 'M 1' }, 'invalid_value'],
    ['sgx', 'quantity missing', { ...sgxTrade, quantity: undefined }, 'missing_field'],
    ['synthetic', 'event_type missing', { ...synTrade, event_type: undefined }, 'missing_field'],
    ['synthetic', 'event_type unknown', { ...synTrade, event_type: 'quote' }, 'invalid_value'],
    ['synthetic', 'unknown field', { ...synTrade, venue: 'x' }, 'invalid_value'],
    ['synthetic', 'trade_id missing', { ...synTrade, trade_id: undefined }, 'missing_field'],
    ['synthetic', 'trade_id without trd_', { ...synTrade, trade_id: '000001' }, 'invalid_value'],
    ['synthetic', 'price as a string', { ...synTrade, price: '50012.5' }, 'invalid_value'],
    ['synthetic', 'side not an enum value', { ...synTrade, side: 'hold' }, 'invalid_value'],
    ['synthetic', 'venue_trade_id not a string', { ...synTrade, venue_trade_id: 7 }, 'invalid_value'],
    ['synthetic', 'another source', { ...synTrade, source: 'binance' }, 'invalid_value'],
    ['synthetic', 'fractional timestamp', { ...synTrade, timestamp_ms: 1.5 }, 'invalid_value'],
    [
      'synthetic',
      'crossed book',
      {
        event_type: 'book',
        timestamp_ms: 1,
        symbol: 'BTC',
        bids: [{ price: 2, size: 1 }],
        asks: [{ price: 1, size: 1 }],
      },
      'crossed_book',
    ],
    [
      'synthetic',
      'zero-size level in a snapshot',
      {
        event_type: 'book',
        timestamp_ms: 1,
        symbol: 'BTC',
        bids: [{ price: 1, size: 0 }],
        asks: [{ price: 2, size: 1 }],
      },
      'invalid_value',
    ],
    [
      'synthetic',
      'negative level size in a diff',
      {
        event_type: 'book',
        timestamp_ms: 1,
        symbol: 'BTC',
        bids: [{ price: 1, size: -1 }],
        asks: [],
        is_snapshot: false,
      },
      'invalid_value',
    ],
  ];

  for (const [source, name, payload, code, symbol] of cases) {
    it(`${source}: ${name} → ${code}`, () => {
      expect(rejectionOf(source, payload, symbol)).toBe(code);
    });
  }

  it('names the offending field in the message', () => {
    const { rejected } = run('binance', [{ ...binanceTrade, p: 'abc' }]);
    expect(rejected[0]?.message).toBe('p must be a positive number, got "abc"');
  });

  it('uses only codes of the error table, each with a meaning', () => {
    const used = new Set(cases.map((c) => c[3]));
    for (const code of used) expect(NORMALIZE_ERROR_CODES[code]).toMatch(/\w/);
    expect(Object.keys(NORMALIZE_ERROR_CODES).sort()).toEqual(
      [
        'book_delta',
        'crossed_book',
        'internal',
        'invalid_request',
        'invalid_value',
        'missing_field',
        'unknown_source',
        'unsupported_payload',
      ].sort(),
    );
  });
});

describe('normalize: decisions on unusual but valid data', () => {
  it('keeps a locked book (ask = bid) with spread 0; a crossed one is rejected (spread_bps >= 0 in the contract)', () => {
    const { events } = run(
      'binance',
      [{ lastUpdateId: 1, bids: [['100', '1']], asks: [['100', '2']] }],
      'BTCUSDT',
    );
    expect(events).toMatchObject([{ best_bid: 100, best_ask: 100, spread_bps: 0 }]);
  });

  it('accepts what the contract now represents: diffs, one-sided books, no aggressor, venue spellings', () => {
    const ok = (source: Source, payload: unknown, symbol?: string) => {
      const { events, rejected } = run(source, [payload], symbol);
      expect(rejected, JSON.stringify(payload)).toEqual([]);
      for (const event of events) expect(MarketEvent.parse(event)).toStrictEqual(event);
      return events;
    };
    const nulls = { mid_price: null, spread_bps: null };
    // Binance diff depth (raw, no wrapper): zero sizes kept, every best field null.
    expect(
      ok('binance', { e: 'depthUpdate', E: 5, s: 'BTCUSDT', U: 1, u: 2, b: [['1', '0']], a: [['2', '0.5']] }),
    ).toMatchObject([
      {
        is_snapshot: false,
        bids: [{ price: 1, size: 0 }],
        asks: [{ price: 2, size: 0.5 }],
        best_bid: null,
        best_ask: null,
        ...nulls,
      },
    ]);
    // One-sided snapshots: the missing side's best price null, mid and spread null.
    expect(
      ok('binance', { lastUpdateId: 1, bids: [['1', '1']], asks: [['2', '0']] }, 'BTCUSDT'),
    ).toMatchObject([{ is_snapshot: true, asks: [], best_bid: 1, best_ask: null, ...nulls }]);
    expect(ok('binance', { u: 1, s: 'BTCUSDT', b: '0', B: '0', a: '2', A: '1' })).toMatchObject([
      { is_snapshot: true, bids: [], best_bid: null, best_ask: 2, ...nulls },
    ]);
    expect(
      ok('hyperliquid', {
        channel: 'bbo',
        data: { coin: 'BTC', time: 1, bbo: [{ px: '1', sz: '1', n: 1 }] },
      }),
    ).toMatchObject([{ is_snapshot: true, best_bid: 1, best_ask: null, ...nulls }]);
    expect(ok('binance', { lastUpdateId: 1, bids: [], asks: [] }, 'BTCUSDT')).toMatchObject([
      { is_snapshot: true, bids: [], asks: [], best_bid: null, best_ask: null, ...nulls },
    ]);
    // No aggressor (Databento side N).
    expect(ok('cme', { ...dbTrade, side: 'N' }, 'ESH1')).toMatchObject([
      { side: 'unknown', venue_trade_id: '1170380' },
    ]);
    // Hyperliquid spot names.
    for (const coin of ['@142', 'PURR/USDC'])
      expect(ok('hyperliquid', { channel: 'trades', data: [{ ...hlTrade, coin }] })).toMatchObject([
        { symbol: coin },
      ]);
    // Synthetic events as the contract allows them, kept as given.
    expect(ok('synthetic', { ...synTrade, side: 'unknown', venue_trade_id: 'v1' })).toMatchObject([
      { side: 'unknown', venue_trade_id: 'v1', trade_id: 'trd_000001' },
    ]);
    const synDiff = {
      event_type: 'book',
      timestamp_ms: 1,
      symbol: 'BTC',
      bids: [{ price: 3, size: 0 }],
      asks: [{ price: 2, size: 1 }],
      best_bid: null,
      best_ask: null,
      mid_price: null,
      spread_bps: null,
      is_snapshot: false,
    };
    expect(ok('synthetic', synDiff)).toStrictEqual([{ ...synDiff, source: 'synthetic', capture_time_ms: 1 }]);
  });

  it('yields nothing, without rejecting, for valid messages that are neither trades nor books', () => {
    const { events, rejected } = run('binance', [
      { e: 'markPriceUpdate', E: 1, s: 'BTCUSDT', p: '1', i: '1', P: '1', r: '0.0001', T: 2 },
      { ...binanceTrade, X: 'INSURANCE_FUND' },
      { ...binanceTrade, X: 'ADL' },
      { result: null, id: 1 },
    ]);
    expect({ events, rejected }).toEqual({ events: [], rejected: [] });
    const hl = run('hyperliquid', [
      { channel: 'allMids', data: { mids: { BTC: '1' } } },
      { channel: 'subscriptionResponse', data: {} },
      [{ coin: 'BTC', fundingRate: '0.0000125', premium: '0.00023467', time: 1686186000054 }],
    ]);
    expect(hl).toEqual({ events: [], rejected: [] });
  });

  it('never yields an event that the canonical schema refuses', () => {
    const payloads: [Source, unknown][] = [
      ['binance', binanceTrade],
      ['binance', { e: 'depthUpdate', E: 1, s: 'BTCUSDT', U: 1, u: 2, b: [['1', '0']], a: [] }],
      ['binance', { u: 1, s: 'BTCUSDT', b: '0', B: '0', a: '2', A: '1' }],
      ['cme', { ...dbTrade, side: 'N' }],
      ['hyperliquid', { channel: 'trades', data: [hlTrade, hlTrade] }],
      ['cme', dbTrade],
      ['sgx', sgxTrade],
      ['synthetic', synTrade],
    ];
    for (const [source, payload] of payloads) {
      const { events } = run(source, [payload], source === 'cme' ? 'ESH1' : undefined);
      expect(events.length).toBeGreaterThan(0);
      for (const event of events) expect(MarketEvent.parse(event)).toStrictEqual(event);
    }
  });

  it('checks venue trade ids with the same character set as the contract', () => {
    for (const body of ['M-1', 'a.b:c_d-9', 'x y', 'é', 'a/b', '#1', '']) {
      expect(TRADE_ID_BODY.test(body), body).toBe(TradeEvent.shape.trade_id.safeParse(`trd_${body}`).success);
    }
  });
});

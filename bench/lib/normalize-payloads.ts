/**
 * Source-native payloads for the normalize benchmark, built from the templates of
 * /work/shared/fixtures/normalize-public.json and VENUES.md with varying prices, sizes, ids, times
 * and sides (a seeded random walk, so every run sees the same stream). Payloads are produced as
 * JSON text and parsed with `JSON.parse`, as the HTTP path receives them: same object shapes and
 * flat strings, not literals or concatenated (cons) strings.
 */

import { seededRandom } from '../../test/support/rate-limit-reference.ts';

/** A deterministic PRNG (mulberry32), the one the tests use. */
export const rng = seededRandom;

/** One payload kind: a generator of payload JSON texts. */
export type Kind = {
  name: string;
  source: 'binance' | 'hyperliquid' | 'cme' | 'sgx' | 'synthetic';
  /** The request symbol, when the payloads need one (CME records without `symbol`). */
  symbol?: string;
  description: string;
  /** A stateful generator: each call returns the next payload as JSON text. */
  generator(seed: number): () => string;
};

export const T0 = 1_760_000_000_000; // Unix ms, autumn 2025
const T0_NS = '1760000000000000000';

/** A price random walk (relative steps of ~1 bp) around `start`, kept on a tick grid. */
export function walk(r: () => number, start: number, tick: number): () => number {
  let p = start;
  return () => {
    p += (r() - 0.5) * start * 0.0002;
    if (p < start * 0.5) p = start * 0.5;
    return Math.round(p / tick) * tick;
  };
}

export const fixed = (x: number, d: number) => x.toFixed(d);
export const hex = (r: () => number, n: number) => {
  let s = '';
  for (let i = 0; i < n; i++) s += ((r() * 16) | 0).toString(16);
  return s;
};

// ---------------------------------------------------------------- binance (spot + USD-M futures)

const BINANCE_SYMBOLS = ['BTCUSDT', 'ETHUSDT', 'SOLUSDT', 'BNBUSDT'];
const BINANCE_START: Record<string, number> = { BTCUSDT: 67_000, ETHUSDT: 3_400, SOLUSDT: 160, BNBUSDT: 590 };

/** Spot `<s>@trade` in the combined-stream wrapper (fixture binance-pub-01), 8-decimal strings. */
function binanceTrade(symbols: string[]): Kind['generator'] {
  return (seed) => {
    const r = rng(seed);
    const walks = symbols.map((s) => walk(r, BINANCE_START[s] as number, 0.01));
    let t = 4_100_000_000 + (seed % 1000) * 1_000_000;
    let ts = T0;
    let k = 0;
    return () => {
      const i = k++ % symbols.length;
      const s = symbols[i] as string;
      ts += (r() * 4) | 0;
      t++;
      const p = (walks[i] as () => number)();
      const q = (0.00001 + r() * r() * 2).toFixed(8);
      return `{"stream":"${s.toLowerCase()}@trade","data":{"e":"trade","E":${ts + 1},"s":"${s}","t":${t},"p":"${fixed(p, 8)}","q":"${q}","T":${ts},"m":${r() < 0.5},"M":true}}`;
    };
  };
}

/** USD-M `<s>@bookTicker` in the wrapper (VENUES.md §2.4, with `e`, `E`, `T`). */
const binanceBookTicker: Kind['generator'] = (seed) => {
  const r = rng(seed);
  const mid = walk(r, 67_000, 0.1);
  let u = 185_130_926_750;
  let ts = T0;
  return () => {
    ts += (r() * 3) | 0;
    u += 1 + ((r() * 5) | 0);
    const m = mid();
    const half = 0.05 + ((r() * 3) | 0) * 0.1;
    return `{"stream":"btcusdt@bookTicker","data":{"e":"bookTicker","u":${u},"s":"BTCUSDT","b":"${fixed(m - half, 2)}","B":"${fixed(r() * 5, 3)}","a":"${fixed(m + half, 2)}","A":"${fixed(r() * 5, 3)}","T":${ts},"E":${ts + 2}}}`;
  };
};

/** USD-M partial depth `<s>@depth20@100ms` in the wrapper: a top-20 snapshot per side. */
function binanceDepth(levels: number): Kind['generator'] {
  return (seed) => {
    const r = rng(seed);
    const mid = walk(r, 67_000, 0.1);
    let u = 7_000_000_000;
    let ts = T0;
    return () => {
      ts += 100;
      const pu = u;
      u += 1 + ((r() * 40) | 0);
      const m = mid();
      const b: string[] = [];
      const a: string[] = [];
      for (let i = 0; i < levels; i++) {
        b.push(`["${fixed(m - 0.05 - i * 0.1, 2)}","${fixed(0.001 + r() * 3, 3)}"]`);
        a.push(`["${fixed(m + 0.05 + i * 0.1, 2)}","${fixed(0.001 + r() * 3, 3)}"]`);
      }
      return `{"stream":"btcusdt@depth${levels}@100ms","data":{"e":"depthUpdate","E":${ts + 3},"T":${ts},"s":"BTCUSDT","U":${pu + 1},"u":${u},"pu":${pu},"b":[${b.join(',')}],"a":[${a.join(',')}]}}`;
    };
  };
}

// ---------------------------------------------------------------- hyperliquid

export const addr = (r: () => number) => `0x${hex(r, 40)}`;

/** `trades` pushes with 1–12 fills (half single fills, mean ≈ 2.6), `users` included (HLWS). */
const hlTrades: Kind['generator'] = (seed) => {
  const r = rng(seed);
  const px = walk(r, 69_998, 1);
  let tid = 696_560_709_859_024 + seed;
  let ts = T0;
  return () => {
    ts += 50 + ((r() * 400) | 0);
    const u = r();
    const n = u < 0.5 ? 1 : u < 0.85 ? 2 + ((r() * 3) | 0) : 5 + ((r() * 8) | 0);
    const side = r() < 0.5 ? 'B' : 'A';
    const hash = `0x${hex(r, 64)}`;
    let p = px();
    const fills: string[] = [];
    for (let i = 0; i < n; i++) {
      tid += 1 + ((r() * 1_000) | 0);
      fills.push(
        `{"coin":"BTC","side":"${side}","px":"${fixed(p, 1)}","sz":"${fixed(0.00001 + r() * r() * 3, 5)}","time":${ts},"hash":"${hash}","tid":${tid},"users":["${addr(r)}","${addr(r)}"]}`,
      );
      p += side === 'B' ? 1 : -1;
    }
    return `{"channel":"trades","data":[${fills.join(',')}]}`;
  };
};

/** `l2Book` snapshots, 20 `{px, sz, n}` levels per side (the API's default depth). */
const hlBook: Kind['generator'] = (seed) => {
  const r = rng(seed);
  const mid = walk(r, 69_998, 1);
  let ts = T0;
  return () => {
    ts += 500 + ((r() * 200) | 0);
    const m = mid();
    const side = (sign: number) => {
      const out: string[] = [];
      for (let i = 0; i < 20; i++)
        out.push(
          `{"px":"${fixed(m + sign * (1 + i), 1)}","sz":"${fixed(0.0001 + r() * 8, 5)}","n":${1 + ((r() * 30) | 0)}}`,
        );
      return `[${out.join(',')}]`;
    };
    return `{"channel":"l2Book","data":{"coin":"BTC","time":${ts},"levels":[${side(-1)},${side(1)}]}}`;
  };
};

// ---------------------------------------------------------------- cme (Databento JSON, dbn -J)

/** ns-integer strings: T0_NS plus an offset that stays below 1e15 ns (≈ 11 days). */
const ns = (offsetNs: number) => {
  const tail = String(offsetNs).padStart(15, '0');
  return `${T0_NS.slice(0, T0_NS.length - 15)}${tail}`;
};

/** GLBX.MDP3 `trades` (rtype 0), nested `hd`, 1e-9 fixed-point price strings (fixture cme-pub-01). */
const cmeTrades: Kind['generator'] = (seed) => {
  const r = rng(seed);
  const px = walk(r, 5_720.25, 0.25);
  let t = 1_000_000 + seed;
  let seq = 1_170_380;
  return () => {
    t += 1_000 + ((r() * 5_000_000) | 0);
    seq += 1 + ((r() * 20) | 0);
    const price = String(Math.round(px() * 4) * 250_000_000);
    return `{"ts_recv":"${ns(t + 300_000)}","hd":{"ts_event":"${ns(t)}","rtype":0,"publisher_id":1,"instrument_id":5482},"action":"T","side":"${r() < 0.5 ? 'A' : 'B'}","depth":0,"price":"${price}","size":${1 + ((r() * 20) | 0)},"flags":129,"ts_in_delta":19251,"sequence":${seq}}`;
  };
};

/** GLBX.MDP3 `mbp-1` (rtype 1): a book action with the top of book in `levels[0]` (fixture cme-pub-02). */
const cmeMbp1: Kind['generator'] = (seed) => {
  const r = rng(seed);
  const px = walk(r, 5_720.25, 0.25);
  let t = 1_000_000 + seed;
  let seq = 1_170_362;
  const actions = ['A', 'C', 'M'];
  return () => {
    t += 1_000 + ((r() * 1_000_000) | 0);
    seq += 1 + ((r() * 5) | 0);
    const bid = Math.round(px() * 4) * 250_000_000;
    const ask = bid + 250_000_000 * (1 + ((r() * 2) | 0));
    const onAsk = r() < 0.5;
    return `{"ts_recv":"${ns(t + 130_000)}","hd":{"ts_event":"${ns(t)}","rtype":1,"publisher_id":1,"instrument_id":5482},"action":"${actions[(r() * 3) | 0]}","side":"${onAsk ? 'A' : 'B'}","depth":0,"price":"${onAsk ? ask : bid}","size":${1 + ((r() * 10) | 0)},"flags":128,"ts_in_delta":17214,"sequence":${seq},"levels":[{"bid_px":"${bid}","ask_px":"${ask}","bid_sz":${1 + ((r() * 60) | 0)},"ask_sz":${1 + ((r() * 60) | 0)},"bid_ct":${1 + ((r() * 20) | 0)},"ask_ct":${1 + ((r() * 20) | 0)}}]}`;
  };
};

// ---------------------------------------------------------------- sgx (ITCH-style JSON, VENUES.md §5.1)

const sgxTrade: Kind['generator'] = (seed) => {
  const r = rng(seed);
  const px = walk(r, 95_815, 1);
  let ms = T0;
  let match = 1 + seed;
  return () => {
    ms += 1 + ((r() * 300) | 0);
    match++;
    return `{"msg_type":"trade","orderbook_id":1001,"symbol":"BTCPERP","match_id":"M-${match}","aggressor_side":"${r() < 0.5 ? 'B' : 'S'}","price":"${fixed(px(), 0)}","quantity":"${1 + ((r() * 10) | 0)}","timestamp_ns":${ms}000000}`;
  };
};

const sgxBook: Kind['generator'] = (seed) => {
  const r = rng(seed);
  const mid = walk(r, 95_815, 1);
  let ms = T0;
  return () => {
    ms += 10 + ((r() * 300) | 0);
    const m = Math.round(mid());
    const b: string[] = [];
    const a: string[] = [];
    for (let i = 0; i < 10; i++) {
      b.push(`["${m - 1 - i}","${1 + ((r() * 40) | 0)}"]`);
      a.push(`["${m + 1 + i}","${1 + ((r() * 40) | 0)}"]`);
    }
    return `{"msg_type":"book","orderbook_id":1001,"symbol":"BTCPERP","timestamp_ns":${ms}500000,"bids":[${b.join(',')}],"asks":[${a.join(',')}]}`;
  };
};

// ---------------------------------------------------------------- synthetic (canonical schema)

const syntheticTrade: Kind['generator'] = (seed) => {
  const r = rng(seed);
  const px = walk(r, 50_012.5, 0.5);
  let ts = T0;
  let id = 1 + seed * 10_000_000;
  return () => {
    ts += 1 + ((r() * 50) | 0);
    id++;
    const price = px();
    const size = Math.round((0.001 + r() * 2) * 1e4) / 1e4;
    return `{"event_type":"trade","timestamp_ms":${ts},"capture_time_ms":${ts + 2},"symbol":"BTC","side":"${r() < 0.5 ? 'buy' : 'sell'}","price":${price},"size":${size},"trade_id":"trd_${String(id).padStart(9, '0')}","notional_usd":${price * size}}`;
  };
};

const syntheticBook: Kind['generator'] = (seed) => {
  const r = rng(seed);
  const mid = walk(r, 50_010.5, 0.5);
  let ts = T0;
  return () => {
    ts += 100;
    const m = mid();
    const bids: string[] = [];
    const asks: string[] = [];
    for (let i = 0; i < 10; i++) {
      bids.push(`{"price":${m - 0.5 - i * 0.5},"size":${Math.round((0.01 + r() * 3) * 1e4) / 1e4}}`);
      asks.push(`{"price":${m + 0.5 + i * 0.5},"size":${Math.round((0.01 + r() * 3) * 1e4) / 1e4}}`);
    }
    const bb = m - 0.5;
    const ba = m + 0.5;
    const mp = (bb + ba) / 2;
    return `{"event_type":"book","timestamp_ms":${ts},"capture_time_ms":${ts + 1},"symbol":"BTC","bids":[${bids.join(',')}],"asks":[${asks.join(',')}],"best_bid":${bb},"best_ask":${ba},"mid_price":${mp},"spread_bps":${((ba - bb) / mp) * 10_000}}`;
  };
};

// ---------------------------------------------------------------- kinds and mixes

export const KINDS: Record<string, Kind> = {
  binance_trade: {
    name: 'binance_trade',
    source: 'binance',
    description: 'spot trade, combined-stream wrapper, one symbol (BTCUSDT)',
    generator: binanceTrade(['BTCUSDT']),
  },
  binance_trade_4_symbols: {
    name: 'binance_trade_4_symbols',
    source: 'binance',
    description: 'spot trade, combined stream of 4 symbols interleaved (BTC/ETH/SOL/BNB USDT)',
    generator: binanceTrade(BINANCE_SYMBOLS),
  },
  binance_book_ticker: {
    name: 'binance_book_ticker',
    source: 'binance',
    description: 'USD-M bookTicker (1 level per side), wrapper',
    generator: binanceBookTicker,
  },
  binance_depth20: {
    name: 'binance_depth20',
    source: 'binance',
    description: 'USD-M partial depth @depth20@100ms (20 levels per side), wrapper',
    generator: binanceDepth(20),
  },
  hyperliquid_trades: {
    name: 'hyperliquid_trades',
    source: 'hyperliquid',
    description: 'trades push, 1-12 fills (mean ~2.6), with users',
    generator: hlTrades,
  },
  hyperliquid_l2book: {
    name: 'hyperliquid_l2book',
    source: 'hyperliquid',
    description: 'l2Book push, 20 levels per side',
    generator: hlBook,
  },
  cme_trades: {
    name: 'cme_trades',
    source: 'cme',
    symbol: 'ESH1',
    description: 'Databento trades record (rtype 0), nested hd, 1e-9 price strings, request symbol',
    generator: cmeTrades,
  },
  cme_mbp1: {
    name: 'cme_mbp1',
    source: 'cme',
    symbol: 'ESH1',
    description: 'Databento mbp-1 record (rtype 1), top of book in levels[0], request symbol',
    generator: cmeMbp1,
  },
  sgx_trade: {
    name: 'sgx_trade',
    source: 'sgx',
    description: 'ITCH-style JSON trade',
    generator: sgxTrade,
  },
  sgx_book: {
    name: 'sgx_book',
    source: 'sgx',
    description: 'ITCH-style JSON book, 10 levels per side',
    generator: sgxBook,
  },
  synthetic_trade: {
    name: 'synthetic_trade',
    source: 'synthetic',
    description: 'canonical trade (zod-validated path)',
    generator: syntheticTrade,
  },
  synthetic_book: {
    name: 'synthetic_book',
    source: 'synthetic',
    description: 'canonical book, 10 levels per side (zod-validated path)',
    generator: syntheticBook,
  },
};

/** A per-source mix: kinds interleaved in fixed proportions (weights in %). */
export type Mix = { name: string; source: Kind['source']; symbol?: string; parts: [string, number][] };

export const MIXES: Mix[] = [
  {
    name: 'binance_mix',
    source: 'binance',
    parts: [
      ['binance_trade', 50],
      ['binance_book_ticker', 40],
      ['binance_depth20', 10],
    ],
  },
  {
    name: 'hyperliquid_mix',
    source: 'hyperliquid',
    parts: [
      ['hyperliquid_trades', 75],
      ['hyperliquid_l2book', 25],
    ],
  },
  {
    name: 'cme_mix',
    source: 'cme',
    symbol: 'ESH1',
    parts: [
      ['cme_mbp1', 80],
      ['cme_trades', 20],
    ],
  },
  {
    name: 'sgx_mix',
    source: 'sgx',
    parts: [
      ['sgx_trade', 40],
      ['sgx_book', 60],
    ],
  },
  {
    name: 'synthetic_mix',
    source: 'synthetic',
    parts: [
      ['synthetic_trade', 80],
      ['synthetic_book', 20],
    ],
  },
];

/** The generator of a mix: each of 100 slots (spread evenly) draws from one part. */
export function mixGenerator(mix: Mix): Kind['generator'] {
  return (seed) => {
    const gens = mix.parts.map(([kind], i) => (KINDS[kind] as Kind).generator(seed + i * 7_919));
    const slots: number[] = [];
    // Bresenham-like interleave: at each step take the part furthest behind its share.
    const taken = mix.parts.map(() => 0);
    for (let s = 1; s <= 100; s++) {
      let best = 0;
      let lag = Number.NEGATIVE_INFINITY;
      mix.parts.forEach(([, w], i) => {
        const behind = (w * s) / 100 - (taken[i] as number);
        if (behind > lag) {
          lag = behind;
          best = i;
        }
      });
      taken[best] = (taken[best] as number) + 1;
      slots.push(best);
    }
    let k = 0;
    return () => (gens[slots[k++ % 100] as number] as () => string)();
  };
}

/** `n` payload texts of a generator. */
export function texts(gen: () => string, n: number): string[] {
  const out: string[] = new Array(n);
  for (let i = 0; i < n; i++) out[i] = gen();
  return out;
}

/** `events` of a request as the HTTP body parser would build them: `JSON.parse` of `[{payload}, …]`. */
export function parseEvents(payloadTexts: readonly string[]): { payload: unknown }[] {
  return JSON.parse(`[${payloadTexts.map((t) => `{"payload":${t}}`).join(',')}]`);
}

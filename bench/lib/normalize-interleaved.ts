/**
 * Venue payloads with several symbols interleaved as one connection delivers them (a Binance
 * combined stream, Hyperliquid subscriptions sharing one socket): each message's symbol is drawn by
 * trading activity (weights 40/30/20/10 %), each symbol keeps its own price walk, ids and update
 * ids, and the clock is shared. Seeded: every run sees the same stream. Used by the comparison with
 * tardis-dev's normalizers (bench/lib/normalize-tardis.ts).
 */
import { addr, fixed, hex, rng, T0, walk } from './normalize-payloads.ts';

type Gen = (seed: number) => () => string;

/** Per-symbol parameters: start price, tick and decimals of prices and sizes. */
type Instrument = { symbol: string; start: number; tick: number; px: number; sz: number; weight: number };

const BINANCE: Instrument[] = [
  { symbol: 'BTCUSDT', start: 67_000, tick: 0.01, px: 8, sz: 8, weight: 40 },
  { symbol: 'ETHUSDT', start: 3_400, tick: 0.01, px: 8, sz: 8, weight: 30 },
  { symbol: 'SOLUSDT', start: 160, tick: 0.01, px: 8, sz: 8, weight: 20 },
  { symbol: 'BNBUSDT', start: 590, tick: 0.01, px: 8, sz: 8, weight: 10 },
];

/** USD-M futures quote prices with 2 decimals (bookTicker). */
const BINANCE_FUTURES: Instrument[] = [
  { symbol: 'BTCUSDT', start: 67_000, tick: 0.1, px: 2, sz: 3, weight: 40 },
  { symbol: 'ETHUSDT', start: 3_400, tick: 0.01, px: 2, sz: 3, weight: 30 },
  { symbol: 'SOLUSDT', start: 160, tick: 0.01, px: 2, sz: 0, weight: 20 },
  { symbol: 'BNBUSDT', start: 590, tick: 0.01, px: 2, sz: 2, weight: 10 },
];

const HYPERLIQUID: Instrument[] = [
  { symbol: 'BTC', start: 69_998, tick: 1, px: 1, sz: 5, weight: 40 },
  { symbol: 'ETH', start: 3_400, tick: 0.1, px: 1, sz: 4, weight: 30 },
  { symbol: 'SOL', start: 160, tick: 0.01, px: 2, sz: 2, weight: 20 },
  { symbol: 'HYPE', start: 30, tick: 0.001, px: 3, sz: 2, weight: 10 },
];

/** Symbols of the interleaved streams (for priming stateful normalizers). */
export const INTERLEAVED_SYMBOLS = {
  binance: BINANCE.map((i) => i.symbol),
  hyperliquid: HYPERLIQUID.map((i) => i.symbol),
};

/** Index of the next message's instrument, drawn by weight. */
function picker(r: () => number, list: Instrument[]): () => number {
  const total = list.reduce((n, i) => n + i.weight, 0);
  return () => {
    let x = r() * total;
    for (let k = 0; k < list.length; k++) {
      x -= (list[k] as Instrument).weight;
      if (x < 0) return k;
    }
    return list.length - 1;
  };
}

/** A size > 0 with `d` decimals (at least one unit of the last decimal). */
const size = (r: () => number, max: number, d: number) => fixed(Math.max(10 ** -d, r() * r() * max), d);

/** Spot `<s>@trade` in the combined-stream wrapper. */
const binanceTrade: Gen = (seed) => {
  const r = rng(seed);
  const pick = picker(r, BINANCE);
  const walks = BINANCE.map((i) => walk(r, i.start, i.tick));
  const ids = BINANCE.map((_, k) => 4_100_000_000 + k * 1_000_000_000 + (seed % 1000) * 1_000_000);
  let ts = T0;
  return () => {
    const k = pick();
    const ins = BINANCE[k] as Instrument;
    ts += (r() * 4) | 0;
    ids[k] = (ids[k] as number) + 1;
    const p = (walks[k] as () => number)();
    return `{"stream":"${ins.symbol.toLowerCase()}@trade","data":{"e":"trade","E":${ts + 1},"s":"${ins.symbol}","t":${ids[k]},"p":"${fixed(p, ins.px)}","q":"${size(r, 2, ins.sz)}","T":${ts},"m":${r() < 0.5},"M":true}}`;
  };
};

/** First diff update id of every symbol: a snapshot with `lastUpdateId` one below it primes a book. */
export const BINANCE_DEPTH_FIRST_U = 9_000_000_000;

/**
 * Spot diff depth `<s>@depth@100ms` in the wrapper: 1–20 changed levels per side, a quarter of them
 * deletions (size 0), bids best first (descending), asks ascending, as Binance sends them.
 */
const binanceDepthDiff: Gen = (seed) => {
  const r = rng(seed);
  const pick = picker(r, BINANCE);
  const walks = BINANCE.map((i) => walk(r, i.start, i.tick));
  const us = BINANCE.map(() => BINANCE_DEPTH_FIRST_U - 1);
  let ts = T0;
  return () => {
    const k = pick();
    const ins = BINANCE[k] as Instrument;
    ts += (r() * 30) | 0;
    const first = (us[k] as number) + 1;
    us[k] = first + ((r() * 40) | 0);
    const mid = (walks[k] as () => number)();
    const side = (sign: number) => {
      const out: string[] = [];
      const n = 1 + ((r() * 20) | 0);
      let p = mid + sign * ins.tick * (1 + ((r() * 3) | 0));
      for (let i = 0; i < n; i++) {
        const q = r() < 0.25 ? fixed(0, ins.sz) : size(r, 5, ins.sz);
        out.push(`["${fixed(p, ins.px)}","${q}"]`);
        p += sign * ins.tick * (1 + ((r() * 4) | 0));
      }
      return `[${out.join(',')}]`;
    };
    return `{"stream":"${ins.symbol.toLowerCase()}@depth@100ms","data":{"e":"depthUpdate","E":${ts},"s":"${ins.symbol}","U":${first},"u":${us[k]},"b":${side(-1)},"a":${side(1)}}}`;
  };
};

/** USD-M `<s>@bookTicker` in the wrapper (with `e`, `E`, `T`), both sides non-empty. */
const binanceBookTicker: Gen = (seed) => {
  const r = rng(seed);
  const pick = picker(r, BINANCE_FUTURES);
  const walks = BINANCE_FUTURES.map((i) => walk(r, i.start, i.tick));
  let u = 185_130_926_750;
  let ts = T0;
  return () => {
    const k = pick();
    const ins = BINANCE_FUTURES[k] as Instrument;
    ts += (r() * 3) | 0;
    u += 1 + ((r() * 5) | 0);
    const m = (walks[k] as () => number)();
    const half = ins.tick * (1 + ((r() * 3) | 0));
    return `{"stream":"${ins.symbol.toLowerCase()}@bookTicker","data":{"e":"bookTicker","u":${u},"s":"${ins.symbol}","b":"${fixed(m - half, ins.px)}","B":"${size(r, 20, ins.sz)}","a":"${fixed(m + half, ins.px)}","A":"${size(r, 20, ins.sz)}","T":${ts},"E":${ts + 2}}}`;
  };
};

/** `trades` pushes of one coin each, 1–12 fills (half single fills, mean ≈ 2.6), `users` included. */
const hlTrades: Gen = (seed) => {
  const r = rng(seed);
  const pick = picker(r, HYPERLIQUID);
  const walks = HYPERLIQUID.map((i) => walk(r, i.start, i.tick));
  let tid = 696_560_709_859_024 + seed;
  let ts = T0;
  return () => {
    const k = pick();
    const ins = HYPERLIQUID[k] as Instrument;
    ts += 20 + ((r() * 200) | 0);
    const u = r();
    const n = u < 0.5 ? 1 : u < 0.85 ? 2 + ((r() * 3) | 0) : 5 + ((r() * 8) | 0);
    const side = r() < 0.5 ? 'B' : 'A';
    const hash = `0x${hex(r, 64)}`;
    let p = (walks[k] as () => number)();
    const fills: string[] = [];
    for (let i = 0; i < n; i++) {
      tid += 1 + ((r() * 1_000) | 0);
      fills.push(
        `{"coin":"${ins.symbol}","side":"${side}","px":"${fixed(p, ins.px)}","sz":"${size(r, 3, ins.sz)}","time":${ts},"hash":"${hash}","tid":${tid},"users":["${addr(r)}","${addr(r)}"]}`,
      );
      p += side === 'B' ? ins.tick : -ins.tick;
    }
    return `{"channel":"trades","data":[${fills.join(',')}]}`;
  };
};

/** `l2Book` snapshots of one coin each, 20 `{px, sz, n}` levels per side. */
const hlBook: Gen = (seed) => {
  const r = rng(seed);
  const pick = picker(r, HYPERLIQUID);
  const walks = HYPERLIQUID.map((i) => walk(r, i.start, i.tick));
  let ts = T0;
  return () => {
    const k = pick();
    const ins = HYPERLIQUID[k] as Instrument;
    ts += 100 + ((r() * 100) | 0);
    const m = (walks[k] as () => number)();
    const side = (sign: number) => {
      const out: string[] = [];
      for (let i = 0; i < 20; i++)
        out.push(
          `{"px":"${fixed(m + sign * ins.tick * (1 + i), ins.px)}","sz":"${size(r, 8, ins.sz)}","n":${1 + ((r() * 30) | 0)}}`,
        );
      return `[${out.join(',')}]`;
    };
    return `{"channel":"l2Book","data":{"coin":"${ins.symbol}","time":${ts},"levels":[${side(-1)},${side(1)}]}}`;
  };
};

/** `bbo` pushes of one coin each, both sides present. */
const hlBbo: Gen = (seed) => {
  const r = rng(seed);
  const pick = picker(r, HYPERLIQUID);
  const walks = HYPERLIQUID.map((i) => walk(r, i.start, i.tick));
  let ts = T0;
  return () => {
    const k = pick();
    const ins = HYPERLIQUID[k] as Instrument;
    ts += 1 + ((r() * 50) | 0);
    const m = (walks[k] as () => number)();
    const level = (px: number) =>
      `{"px":"${fixed(px, ins.px)}","sz":"${size(r, 8, ins.sz)}","n":${1 + ((r() * 30) | 0)}}`;
    return `{"channel":"bbo","data":{"coin":"${ins.symbol}","time":${ts},"bbo":[${level(m - ins.tick)},${level(m)}]}}`;
  };
};

export type InterleavedKind = {
  name: string;
  source: 'binance' | 'hyperliquid';
  description: string;
  generator: Gen;
};

export const INTERLEAVED_KINDS: InterleavedKind[] = [
  {
    name: 'binance_trades',
    source: 'binance',
    description: 'spot <s>@trade, combined stream, BTC/ETH/SOL/BNB USDT interleaved (40/30/20/10 %)',
    generator: binanceTrade,
  },
  {
    name: 'binance_depth_diffs',
    source: 'binance',
    description:
      'spot <s>@depth@100ms diff, combined stream, 4 symbols interleaved, 1-20 levels per side, 25 % deletions',
    generator: binanceDepthDiff,
  },
  {
    name: 'binance_book_tickers',
    source: 'binance',
    description: 'USD-M <s>@bookTicker, combined stream, 4 symbols interleaved',
    generator: binanceBookTicker,
  },
  {
    name: 'hyperliquid_trades',
    source: 'hyperliquid',
    description: 'trades push, BTC/ETH/SOL/HYPE interleaved, 1-12 fills (mean ~2.6), with users',
    generator: hlTrades,
  },
  {
    name: 'hyperliquid_books',
    source: 'hyperliquid',
    description: 'l2Book push, 4 coins interleaved, 20 levels per side',
    generator: hlBook,
  },
  {
    name: 'hyperliquid_bbo',
    source: 'hyperliquid',
    description: 'bbo push, 4 coins interleaved',
    generator: hlBbo,
  },
];

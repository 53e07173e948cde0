/**
 * `npm run bench -- derived` (issue 31 §4): the derived producer (producers/derived/runner.ts,
 * publishing to `DERIVED`) over BENCH_DERIVED_EVENTS stored `MD` events (default 1,000,000) against
 * a raw ordered consumer (platform/ordered-reader.ts, counting only) reading the same events in
 * the same run, in one process on one private nats-server; then the producer live while
 * 10 × the simulator's default rate is published, for BENCH_DERIVED_LIVE_S seconds (default 20).
 *
 * The stored events are shaped like the simulator's at its defaults (platform/config.ts: 4 coins,
 * SIM_TRADE_RATE 5 trades/s and a 10-level book every SIM_BOOK_INTERVAL_MS 100 ms per coin, so
 * 60 events/s in all, a third of them trades), event time advancing at that rate: every bar kind
 * closes. CPU: this process's CPU time per phase (nats-server apart), as ms per 1,000 events and
 * as the share of one core at 10 × the simulator's rate.
 */
import { cpus } from 'node:os';
import { encodeStoredEvent } from '../contracts/event-wire.ts';
import type { BookEvent, TradeEvent } from '../contracts/events.ts';
import { STREAMS } from '../contracts/streams.ts';
import { MD_ALL, mdSubject } from '../contracts/subjects.ts';
import { createLogger } from '../platform/logger.ts';
import type { Nats } from '../platform/nats.ts';
import { readOrdered } from '../platform/ordered-reader.ts';
import { startDerivedRunner } from '../producers/derived/runner.ts';
import { benchConfig } from './lib/config.ts';
import { COINS, startBenchNats } from './lib/feed.ts';
import { ProcStats } from './lib/proc-stats.ts';

const EVENTS = Number(process.env.BENCH_DERIVED_EVENTS ?? 1_000_000);
const LIVE_S = Number(process.env.BENCH_DERIVED_LIVE_S ?? 20);
const log = createLogger('silent', 'bench');
const progress = (line: string) => process.stderr.write(`  ${line}\n`);
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

const config = benchConfig();
const TRADES_PER_COIN_S = config.SIM_TRADE_RATE;
const BOOKS_PER_COIN_S = 1_000 / config.SIM_BOOK_INTERVAL_MS;
/** The simulator's default rate, all coins: events/s. */
const SIM_RATE = COINS.length * (TRADES_PER_COIN_S + BOOKS_PER_COIN_S);
const TARGET_RATE = 10 * SIM_RATE;

const T0 = 1_767_225_600_000;

/** The i-th event of a simulator-shaped feed at `rate` events/s from `t0` (deterministic). */
function event(i: number, t0: number, rate: number): { subject: string; data: Uint8Array } {
  const symbol = COINS[i % COINS.length] as string;
  const ts = t0 + Math.floor((i * 1_000) / rate);
  const mid = 100 + ((i * 7919) % 1000) / 100;
  const isTrade = Math.floor(i / COINS.length) % (TRADES_PER_COIN_S + BOOKS_PER_COIN_S) < TRADES_PER_COIN_S;
  if (isTrade) {
    const e: TradeEvent = {
      event_type: 'trade',
      source: 'synthetic',
      symbol,
      timestamp_ms: ts,
      capture_time_ms: ts,
      side: i % 2 ? 'buy' : 'sell',
      price: mid,
      size: 0.001 + (i % 97) / 100,
      trade_id: `trd_${i}`,
      notional_usd: mid * (0.001 + (i % 97) / 100),
    };
    return {
      subject: mdSubject('synthetic', symbol, 'trade'),
      data: encodeStoredEvent(e, { ingest_us: ts * 1_000, publish_us: ts * 1_000 }),
    };
  }
  const side = (sign: number) =>
    Array.from({ length: 10 }, (_, k) => ({
      price: Math.round((mid + sign * (k + 1) * 0.01) * 100) / 100,
      size: 1 + k,
    }));
  const bids = side(-1);
  const asks = side(1);
  const e: BookEvent = {
    event_type: 'book',
    source: 'synthetic',
    symbol,
    timestamp_ms: ts,
    capture_time_ms: ts,
    bids,
    asks,
    best_bid: bids[0]?.price ?? null,
    best_ask: asks[0]?.price ?? null,
    mid_price: mid,
    spread_bps: 2,
  };
  return {
    subject: mdSubject('synthetic', symbol, 'book'),
    data: encodeStoredEvent(e, { ingest_us: ts * 1_000, publish_us: ts * 1_000 }),
  };
}

async function fill(nats: Nats, n: number): Promise<number> {
  const t0 = performance.now();
  for (let i = 0; i < n; i++) {
    const { subject, data } = event(i, T0, SIM_RATE);
    nats.nc.publish(subject, data);
    if (i % 10_000 === 9_999) await nats.nc.flush();
  }
  await nats.nc.flush();
  for (;;) {
    const stored = (await nats.jsm.streams.info(STREAMS.MD)).state.messages;
    if (stored >= n) break;
    if (performance.now() - t0 > 600_000) throw new Error(`MD holds ${stored} of ${n}`);
    await sleep(50);
  }
  return (performance.now() - t0) / 1_000;
}

type Phase = {
  events: number;
  seconds: number;
  events_per_s: number;
  cpu_ms_per_1k_events: number;
  cpu_pct: number;
};

function phase(events: number, ms: number, stats: ProcStats): Phase {
  const s = stats.read();
  return {
    events,
    seconds: Math.round(ms) / 1_000,
    events_per_s: Math.round((events * 1_000) / ms),
    cpu_ms_per_1k_events: Math.round((s.cpu_ms / events) * 1_000_000) / 1_000,
    cpu_pct: s.cpu_pct,
  };
}

async function rawRead(nats: Nats, last: number): Promise<Phase> {
  const stats = new ProcStats();
  const t0 = performance.now();
  let n = 0;
  await new Promise<void>((resolve) => {
    const r = readOrdered(
      nats,
      { stream: STREAMS.MD, filter: MD_ALL, startSeq: 1 },
      (_msg, seq) => {
        n++;
        if (seq >= last) {
          r.stop();
          resolve();
        }
      },
      log,
    );
  });
  return phase(n, performance.now() - t0, stats);
}

async function derivedRead(nats: Nats, last: number): Promise<Phase & { published: number }> {
  const before = (await nats.jsm.streams.info(STREAMS.DERIVED)).state.messages;
  const stats = new ProcStats();
  const t0 = performance.now();
  const runner = startDerivedRunner(nats, log);
  while (runner.position() <= last) await sleep(5);
  // Until its last publishes are stored.
  let stored = -1;
  for (let stable = 0; stable < 3; await sleep(20)) {
    const now = (await nats.jsm.streams.info(STREAMS.DERIVED)).state.messages;
    stable = now === stored ? stable + 1 : 0;
    stored = now;
  }
  const ms = performance.now() - t0 - 40; // the two quiet polls that confirmed the end
  await runner.stop();
  return { ...phase(runner.read(), ms, stats), published: stored - before };
}

async function live(nats: Nats): Promise<Record<string, unknown>> {
  const runner = startDerivedRunner(nats, log);
  const startSeq = (await nats.jsm.streams.info(STREAMS.MD)).state.last_seq;
  while (runner.position() <= startSeq) await sleep(5);
  const stats = new ProcStats();
  const t0 = performance.now();
  const wall0 = Date.now();
  let i = 0;
  let maxLag = 0;
  const lags: number[] = [];
  while (performance.now() - t0 < LIVE_S * 1_000) {
    const due = Math.floor(((performance.now() - t0) / 1_000) * TARGET_RATE);
    for (; i < due; i++) {
      const { subject, data } = event(EVENTS + i, wall0, TARGET_RATE);
      nats.nc.publish(subject, data);
    }
    await sleep(10);
    const lag = startSeq + i - (runner.position() - 1);
    if (i % 50 === 0) lags.push(lag);
    maxLag = Math.max(maxLag, lag);
  }
  await nats.nc.flush();
  const end = startSeq + i;
  const drainT0 = performance.now();
  while (runner.position() <= end && performance.now() - drainT0 < 30_000) await sleep(5);
  const s = stats.read();
  const drainedMs = Math.round(performance.now() - drainT0);
  await runner.stop();
  return {
    rate_events_per_s: TARGET_RATE,
    seconds: LIVE_S,
    published_events: i,
    max_lag_events: maxLag,
    drained_after_ms: drainedMs,
    kept_up: runner.position() > end && drainedMs < 1_000,
    cpu_pct_process_incl_publisher: s.cpu_pct,
  };
}

export async function run(): Promise<unknown> {
  const bench = await startBenchNats();
  try {
    const { nats } = bench;
    progress(`filling MD with ${EVENTS} simulator-shaped events …`);
    const fillS = await fill(nats, EVENTS);
    const last = (await nats.jsm.streams.info(STREAMS.MD)).state.last_seq;
    progress(`raw ordered read of ${last} events …`);
    const raw = await rawRead(nats, last);
    progress(`derived producer over the same ${last} events …`);
    const derived = await derivedRead(nats, last);
    progress(`live at 10 × the simulator's rate (${TARGET_RATE} events/s) for ${LIVE_S} s …`);
    const liveResult = await live(nats);
    const cpu = cpus();
    return {
      benchmark: 'derived',
      events: EVENTS,
      fill_seconds: Math.round(fillS * 1_000) / 1_000,
      machine: { cores: cpu.length, model: cpu[0]?.model ?? 'unknown' },
      simulator_default_rate: {
        coins: COINS.length,
        trades_per_coin_s: TRADES_PER_COIN_S,
        books_per_coin_s: BOOKS_PER_COIN_S,
        events_per_s: SIM_RATE,
      },
      raw_ordered_consumer: raw,
      derived_producer: derived,
      ratio_derived_to_raw: Math.round((derived.events_per_s / raw.events_per_s) * 1_000) / 1_000,
      headroom_at_10x_sim_rate: Math.round(derived.events_per_s / TARGET_RATE),
      core_share_at_10x_sim_rate:
        Math.round(derived.cpu_ms_per_1k_events * (TARGET_RATE / 1_000) * 10) / 10_000,
      live: liveResult,
    };
  } finally {
    await bench.cleanup();
  }
}
